"""Token-level views of an edit and of a document for the rule predictors.

`token_change` widens a coalesced edit to whole identifiers (appending `er` to `count`
is the change `count` -> `counter`); `occurrences` finds a token sequence with identifier
boundaries; the `Syntax` helpers answer, from the document's tree-sitter tree, what kind
of node a span is, whether it lies in a string or comment, and its enclosing function.
Offsets are code points; the tree wants bytes, converted here (identity for ASCII text).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node, Tree

from lsp_assist.nextedit.history import Edit

#: Node types of functions (their bodies are a parameter's scope), across the grammars.
FUNCTION_TYPES = frozenset(
    {
        "function_definition",
        "function_declaration",
        "function_item",
        "method_definition",
        "method_declaration",
        "constructor_declaration",
        "arrow_function",
        "function_expression",
        "function",
        "lambda",
        "func_literal",
        "closure_expression",
        "generator_function_declaration",
    }
)
#: Node types of a function's parameter list.
PARAMETER_LIST_TYPES = frozenset({"parameters", "formal_parameters", "parameter_list", "lambda_parameters"})
#: Nodes whose name child is the property side of a member access (`obj.name`).
MEMBER_TYPES = frozenset(
    {"attribute", "member_expression", "field_expression", "selector_expression", "field_access"}
)


_STEP = 4096  # code points between the byte marks of a non-ASCII text


def is_ident(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


@dataclass(frozen=True)
class TokenChange:
    """At code point `offset` of the current text, `old` (the token sequence before the
    edit) now reads `new`."""

    offset: int
    old: str
    new: str


def token_change(text: str, edit: Edit) -> TokenChange | None:
    """The edit widened to whole identifiers at both ends; a pure insertion next to an
    identifier takes that identifier as its anchor (`await ` before `fetch` is the change
    `fetch` -> `await fetch`). None when there is nothing to search for (whitespace only,
    new code typed on a blank line)."""
    start, end = edit.offset, edit.end
    if end > len(text) or text[start:end] != edit.new:
        return None  # the history no longer matches the text (should not happen)
    if is_ident(edit.old[:1] or " ") or is_ident(edit.new[:1] or " "):
        while start > 0 and is_ident(text[start - 1]):
            start -= 1
    if is_ident(edit.old[-1:] or " ") or is_ident(edit.new[-1:] or " "):
        while end < len(text) and is_ident(text[end]):
            end += 1
    head, tail = text[start : edit.offset], text[edit.end : end]
    old, new = head + edit.old + tail, head + edit.new + tail
    if not old.strip():
        # A pure insertion: anchor on the identifier right after it, else right before it.
        right = end
        while right < len(text) and is_ident(text[right]):
            right += 1
        left = start
        while left > 0 and is_ident(text[left - 1]):
            left -= 1
        if right > end:
            old, new, end = old + text[end:right], new + text[end:right], right
        elif left < start:
            old, new, start = text[left:start] + old, text[left:start] + new, left
        else:
            return None
    if not old.strip() or old == new:
        return None
    return TokenChange(start, old, new)


def edit_change(edit: Edit) -> tuple[str, str] | None:
    """(old, new) of a recorded edit, widened to identifiers by its line context as
    `token_change` widens the last one (earlier edits no longer match the text)."""
    text = edit.before + edit.new + edit.after
    change = token_change(text, Edit(len(edit.before), edit.old, edit.new, 0))
    return None if change is None else (change.old, change.new)


def occurrences(text: str, token: str) -> Iterator[int]:
    """Offsets of `token` in `text`, with identifier boundaries where it starts or ends
    with an identifier character (`count` does not match inside `counter`)."""
    check_left, check_right = is_ident(token[0]), is_ident(token[-1])
    at = text.find(token)
    while at >= 0:
        end = at + len(token)
        if not (check_left and at > 0 and is_ident(text[at - 1])) and not (
            check_right and end < len(text) and is_ident(text[end])
        ):
            yield at
        at = text.find(token, at + 1)


class Syntax:
    """Questions about spans of one document's tree (code-point offsets in, bytes inside)."""

    def __init__(self, text: str, tree: Tree) -> None:
        self.text = text
        self.tree = tree
        self._ascii = text.isascii()
        self._marks: list[int] | None = None  # UTF-8 bytes before each `_STEP` code points

    def _bytes_before(self) -> list[int]:
        """Byte offsets at every `_STEP` code points, built once: a conversion then encodes
        at most one step of text, not the whole text before the offset."""
        if self._marks is None:
            marks, total = [0], 0
            for at in range(0, len(self.text), _STEP):
                total += len(self.text[at : at + _STEP].encode("utf-8", "surrogatepass"))
                marks.append(total)
            self._marks = marks
        return self._marks

    def byte(self, offset: int) -> int:
        if self._ascii:
            return offset
        k = max(0, min(offset, len(self.text))) // _STEP
        return self._bytes_before()[k] + len(self.text[k * _STEP : offset].encode("utf-8", "surrogatepass"))

    def char(self, byte: int) -> int:
        """A byte offset of the tree back to a code-point offset of the text."""
        if self._ascii:
            return byte
        marks = self._bytes_before()
        k = max(0, bisect.bisect_right(marks, byte) - 1)
        k = min(k, max(0, (len(self.text) - 1) // _STEP)) if self.text else 0
        chunk = self.text[k * _STEP : (k + 1) * _STEP].encode("utf-8", "surrogatepass")
        return k * _STEP + len(chunk[: byte - marks[k]].decode("utf-8", "ignore"))

    def node(self, start: int, end: int) -> Node | None:
        """The smallest named node covering the span."""
        return self.tree.root_node.named_descendant_for_byte_range(self.byte(start), self.byte(end))

    def exact_kind(self, start: int, end: int) -> str | None:
        """The node type when the span is exactly one named node, else None."""
        node = self.node(start, end)
        if node is None or node.start_byte != self.byte(start) or node.end_byte != self.byte(end):
            return None
        return node.type

    @staticmethod
    def in_literal(node: Node | None) -> bool:
        """Inside a string or a comment (any grammar's spelling of them)."""
        while node is not None:
            t = node.type
            if (
                "comment" in t
                or "string" in t
                or t in ("char_literal", "character_literal", "template_literal")
            ):
                return True
            node = node.parent
        return False

    @staticmethod
    def role(node: Node | None) -> str:
        """ "member" for the name in `obj.name`, "keyword" for the name in `f(name=1)`,
        else "plain": a renamed variable is not the same thing as an attribute of that name."""
        if node is None:
            return "plain"
        prev = node.prev_sibling
        if prev is not None and prev.type in (".", "->", "?.") and node.parent is not None:
            if node.parent.type in MEMBER_TYPES:
                return "member"
        parent = node.parent
        if (
            parent is not None
            and parent.type == "keyword_argument"
            and parent.child_by_field_name("name") == node
        ):
            return "keyword"
        return "plain"

    @staticmethod
    def function_of(node: Node | None) -> tuple[Node | None, Node | None]:
        """(the enclosing function, the parameter list on the way up when `node` is in it)."""
        params = None
        while node is not None:
            if node.type in PARAMETER_LIST_TYPES and params is None:
                params = node
            if node.type in FUNCTION_TYPES:
                return node, params
            node = node.parent
        return None, None
