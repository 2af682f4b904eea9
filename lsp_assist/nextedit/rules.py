"""The rule predictor (no model, always on): repeat the user's last change where it applies.

1. A parameter list changed (a parameter added or removed): the next call site of that
   function in the open documents gets the matching argument change (`calls.py`).
2. One identifier or token sequence replaced another: the next occurrence that still has
   the old form gets the same replacement. With a syntax tree, a candidate must be the same
   kind of node in the same role (a renamed variable is not `obj.name`), in a string or a
   comment only when the edit was, and, for a renamed parameter, inside its function;
   occurrences in the edit's function come before the rest of the file. Without a tree
   (no grammar) the text rule alone applies.

Pure and synchronous: a search over one document's text and a few node look-ups, a few
milliseconds on a file of thousands of lines.
"""

from __future__ import annotations

from collections.abc import Iterable

from tree_sitter import Node

from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor
from lsp_assist.nextedit.calls import call_site_proposal
from lsp_assist.nextedit.history import Edit
from lsp_assist.nextedit.proposal import Proposal, proposal
from lsp_assist.nextedit.tokens import Syntax, TokenChange, occurrences, token_change

#: Occurrences checked against the tree per request at most (a few ms of node look-ups): a
#: token that is everywhere and never qualifies must not hold the event loop.
MAX_CANDIDATES = 2000


def predict(doc: Document, edit: Edit, cursor: Cursor, others: Iterable[Document] = ()) -> list[Proposal]:
    """The rule predictor's proposals for `doc`, whose last recorded edit is `edit`."""
    tree = doc.tree()
    syntax = Syntax(doc.text, tree) if tree is not None else None
    if syntax is not None:
        found = call_site_proposal(doc, syntax, edit, cursor, others)
        if found is not None:
            return [found]
    change = token_change(doc.text, edit)
    if change is None:
        return []
    found = _next_occurrence(doc, syntax, change, doc.offset(cursor))
    return [] if found is None else [found]


def _next_occurrence(doc: Document, syntax: Syntax | None, change: TokenChange, at: int) -> Proposal | None:
    text = doc.text
    edit_start, edit_end = change.offset, change.offset + len(change.new)
    # Where the new form contains the old (`fetch` -> `await fetch`), a candidate already
    # changed reads as the new form around it.
    inner = change.new.find(change.old)
    scope_start, scope_end, only_scope = 0, len(text), False
    kind = role = None
    literal: bool | None = False
    if syntax is not None:
        node = syntax.node(edit_start, edit_end)
        literal = syntax.in_literal(node)
        if not change.new and change.old.lstrip()[:1] in ("#", "/", "'", '"'):
            literal = None  # a deleted comment or string: the tree no longer shows it
        # Kinds and roles compare for renames (identifier -> identifier); other token
        # changes (`dict()` -> `{}`) change the node's kind by design.
        renamed = change.old.isidentifier() and change.new.isidentifier()
        kind = syntax.exact_kind(edit_start, edit_end) if renamed else None
        role = syntax.role(node) if kind is not None else None
        function, _ = syntax.function_of(node)
        if function is not None:
            scope_start, scope_end = syntax.char(function.start_byte), syntax.char(function.end_byte)
            # A renamed parameter's uses are in its function (the edit was the parameter,
            # or a use renamed after it: either way the new name is a parameter now).
            only_scope = renamed and _is_parameter(syntax, function, change.new)
    candidates: list[tuple[int, int, int]] = []
    for c in occurrences(text, change.old):
        end = c + len(change.old)
        if end > edit_start and c < edit_end:
            continue  # the edit itself
        if inner >= 0 and text[c - inner : c - inner + len(change.new)] == change.new:
            continue  # already has the new form
        in_scope = scope_start <= c < scope_end
        if only_scope and not in_scope:
            continue
        candidates.append((0 if in_scope else 1, 0 if c >= at else 1, c))
    for _, _, c in sorted(candidates)[:MAX_CANDIDATES]:
        end = c + len(change.old)
        if syntax is not None:
            node = syntax.node(c, end)
            if literal is not None and syntax.in_literal(node) != literal:
                continue
            if kind is not None and (syntax.exact_kind(c, end) != kind or syntax.role(node) != role):
                continue
        return proposal(doc, c, end, change.new, "replace")
    return None


def _is_parameter(syntax: Syntax, function: Node, name: str) -> bool:
    params = function.child_by_field_name("parameters")
    if params is None or not name.isidentifier():
        return False
    text = syntax.text[syntax.char(params.start_byte) : syntax.char(params.end_byte)]
    return next(occurrences(text, name), None) is not None
