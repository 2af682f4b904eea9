"""The call-site rule: a function's parameter list changed, so its callers must too.

When the last edit lies in a function's parameter list and added one parameter without a
default, or removed one, the next call site of that function (in this document from the
cursor on, then in the other open documents) that still passes the old number of
arguments gets the matching change: the new parameter's name inserted as the argument at
its index, or the removed parameter's argument deleted. A method's `self`/`cls` is not
counted (its callers do not pass it). Parameter and argument lists are split at top-level
commas; brackets and quoted strings nest.
"""

from __future__ import annotations

from collections.abc import Iterable

from tree_sitter import Node

from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor
from lsp_assist.nextedit.history import Edit
from lsp_assist.nextedit.proposal import Proposal, proposal
from lsp_assist.nextedit.tokens import FUNCTION_TYPES, Syntax, is_ident, occurrences

_OPEN, _CLOSE = "([{", ")]}"
_MAX_ARGS_CHARS = 10_000


def split_top(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of the comma-separated items of text[start:end] (whitespace trimmed,
    empty items dropped), splitting only at depth 0 and outside quotes."""
    spans: list[tuple[int, int]] = []
    depth, quote, item = 0, "", start
    for i in range(start, end):
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            spans.append((item, i))
            item = i + 1
    spans.append((item, end))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def parameter(piece: str) -> tuple[str, bool]:
    """(name, has a default) of one parameter: `count: int = 0`, `int count`, `*args`."""
    head, _, _ = piece.partition("=")
    head = head.split(":")[0] if ":" in head else head
    names = [
        "".join(ch for ch in w if is_ident(ch)) for w in head.replace("*", " ").replace("&", " ").split()
    ]
    names = [n for n in names if n and n != "mut"]
    return (names[-1] if names else ""), "=" in piece


def _parameters(text: str) -> list[tuple[str, bool]]:
    inner_start = 1 if text[:1] in "(" else 0
    inner_end = len(text) - 1 if text.endswith(")") else len(text)
    return [parameter(text[a:b]) for a, b in split_top(text, inner_start, inner_end)]


def _signature_change(
    old: list[tuple[str, bool]], new: list[tuple[str, bool]]
) -> tuple[str, int, str] | None:
    """("add", index, name) or ("remove", index, name), when exactly one parameter changed."""
    if len(new) == len(old) + 1:
        for i in range(len(new)):
            if old == new[:i] + new[i + 1 :]:
                return None if new[i][1] else ("add", i, new[i][0])  # a default: callers may omit it
    if len(new) == len(old) - 1:
        for i in range(len(old)):
            if new == old[:i] + old[i + 1 :]:
                return "remove", i, old[i][0]
    return None


def _is_method(function: Node, params: list[tuple[str, bool]]) -> bool:
    return bool(params) and params[0][0] in ("self", "cls") and function.parent is not None


def call_site_proposal(
    doc: Document, syntax: Syntax, edit: Edit, cursor: Cursor, others: Iterable[Document]
) -> Proposal | None:
    """The next call site's matching change, or None (not a parameter-list edit)."""
    function, params = syntax.function_of(syntax.node(edit.offset, edit.end))
    if function is None or params is None:
        return None
    name_node = function.child_by_field_name("name")
    if name_node is None or name_node.text is None:
        return None
    ps, pe = syntax.char(params.start_byte), syntax.char(params.end_byte)
    if not (ps <= edit.offset and edit.end <= pe):
        return None
    text = doc.text
    new = _parameters(text[ps:pe])
    old = _parameters(text[ps : edit.offset] + edit.old + text[edit.end : pe])
    if _is_method(function, new) and _is_method(function, old):
        old, new = old[1:], new[1:]
    change = _signature_change(old, new)
    if change is None:
        return None
    name = name_node.text.decode("utf-8", "replace")
    here = doc.offset(cursor)
    for d, start in [(doc, here), (doc, 0), *((o, 0) for o in others if o.uri != doc.uri)]:
        found = _next_call(
            d, name, start, len(old), change, wrap_end=here if d is doc and start == 0 else None
        )
        if found is not None:
            return found
    return None


def _next_call(
    doc: Document, name: str, start: int, arity: int, change: tuple[str, int, str], wrap_end: int | None
) -> Proposal | None:
    text = doc.text
    tree = doc.tree()
    syntax = Syntax(text, tree) if tree is not None else None
    for c in occurrences(text, name):
        if c < start or (wrap_end is not None and c >= wrap_end):
            continue
        open_at = c + len(name)
        while open_at < len(text) and text[open_at] in " \t":
            open_at += 1
        if open_at >= len(text) or text[open_at] != "(":
            continue
        if syntax is not None:
            node = syntax.node(c, c + len(name))
            if syntax.in_literal(node) or _is_definition(node):
                continue
        close = _closing(text, open_at)
        if close is None:
            continue
        args = split_top(text, open_at + 1, close)
        if len(args) != arity:
            continue  # already changed, or another function of that name
        return _argument_edit(doc, args, open_at, change)
    return None


def _is_definition(node: Node | None) -> bool:
    parent = node.parent if node is not None else None
    return parent is not None and parent.type in FUNCTION_TYPES and parent.child_by_field_name("name") == node


def _closing(text: str, open_at: int) -> int | None:
    depth, quote = 0, ""
    for i in range(open_at, min(len(text), open_at + _MAX_ARGS_CHARS)):
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
    return None


def _argument_edit(
    doc: Document, args: list[tuple[int, int]], open_at: int, change: tuple[str, int, str]
) -> Proposal:
    kind, i, name = change
    if kind == "add":
        if not args:
            return proposal(doc, open_at + 1, open_at + 1, name, "call-site")
        if i < len(args):
            return proposal(doc, args[i][0], args[i][0], f"{name}, ", "call-site")
        return proposal(doc, args[-1][1], args[-1][1], f", {name}", "call-site")
    if len(args) == 1:
        return proposal(doc, args[0][0], args[0][1], "", "call-site")
    if i < len(args) - 1:
        return proposal(doc, args[i][0], args[i + 1][0], "", "call-site")
    return proposal(doc, args[i - 1][1], args[i][1], "", "call-site")
