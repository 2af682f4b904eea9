"""The local window: the cursor line, the rows around it, the enclosing definitions, the
far prefix and suffix, and what the syntax at the cursor says about the answer's mode.

Everything here is rows of the current file, placed through the assembler's `Placer`
(which holds the budget and the gateway's verdict on the file); this module chooses rows
and the share each may take.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tree_sitter import Node, Point, Tree

from lsp_assist.context.lexicon import near_identifiers
from lsp_assist.context.long_lines import row_head
from lsp_assist.context.mode import ModeDecision, decide_mode
from lsp_assist.context.parts import Placer
from lsp_assist.context.prose import end_row
from lsp_assist.context.trimming import LineSelection
from lsp_assist.documents.store import Document
from lsp_assist.languages.rules import LangSpec
from lsp_assist.structure.symbols import signature_of

# Shares of the local budget each item may take, so no one item starves the others.
NEAR_ABOVE_ROWS = 6
NEAR_BELOW_ROWS = 8
NEAR_ABOVE_SHARE = 0.3
NEAR_BELOW_SHARE = 0.25  # lines just below the cursor are the densest in names
ENCLOSING_SHARE = 0.6
NEARBY_ABOVE_SHARE = 0.3  # an enclosing definition too big: its statements above the cursor
NEARBY_BELOW_SHARE = 0.08  # ... and below it
HEADERS_SHARE = 0.15  # no tree: the lines that open the blocks around the cursor
SUFFIX_SHARE_MULTI = 0.45  # of what is left after the priority items (measured best)
SUFFIX_SHARE_SINGLE = 0.2
NEAR_TEXT_ABOVE = 12  # rows whose names are "near the cursor" (with the enclosing signature)
NEAR_TEXT_BELOW = 4
_STRINGISH = ("string", "comment", "char_literal", "template")

Chain = list[tuple[Node, str]]  # the definitions enclosing the cursor, innermost first, with kinds


@dataclass(frozen=True)
class Around:
    """The syntax at the cursor: its node, the enclosing definitions and the names near it."""

    node: Node | None
    chain: Chain
    near: Counter[str]


def around(
    doc: Document, tree: Tree | None, data: bytes, spec: LangSpec | None, row: int, line_prefix: str
) -> Around:
    """The node at the cursor, the definitions enclosing it (innermost first) and the
    names of the rows around it (with the enclosing definition's signature)."""
    cursor_node: Node | None = None
    chain: Chain = []
    if tree is not None and spec is not None:
        bcol = len(line_prefix.encode("utf-8", "surrogatepass"))
        cursor_node = tree.root_node.descendant_for_point_range(Point(row, bcol), Point(row, bcol))
        chain = enclosing(cursor_node, spec, row)
    near_rows = (max(0, row - NEAR_TEXT_ABOVE), min(doc.line_count, row + NEAR_TEXT_BELOW))
    near_text = "\n".join(row_head(doc, r) for r in range(*near_rows))
    if chain:
        near_text += "\n" + signature_of(chain[0][0], data, chain[0][1])[0]
    return Around(cursor_node, chain, near_identifiers(near_text))


def enclosing(node: Node | None, spec: LangSpec, row: int) -> Chain:
    """Definitions around the cursor, innermost first, with their kinds."""
    out: Chain = []
    cur = node
    while cur is not None:
        kind = spec.defs.get(cur.type)
        if kind in ("function", "method", "class", "module") and cur.start_point.row <= row:
            out.append((cur, kind))
        cur = cur.parent
    return out


class LocalWindow:
    """The rows of the current file nearest the cursor, in the order of their value."""

    name = "local"

    @staticmethod
    def near_rows(place: Placer, row: int, budget: int) -> None:
        """The lines right around the cursor."""
        got = place.grow(
            "prefix.cursor_lines", (row - 1, row - 1 - NEAR_ABOVE_ROWS, -1), int(budget * NEAR_ABOVE_SHARE)
        )
        place.record("prefix.cursor_lines", "lines just above the cursor", got)
        got = place.grow(
            "suffix.cursor_lines", (row + 1, row + 1 + NEAR_BELOW_ROWS, 1), int(budget * NEAR_BELOW_SHARE)
        )
        place.record("suffix.cursor_lines", "lines just below the cursor", got)

    @staticmethod
    def enclosing(place: Placer, chain: Chain, data: bytes, budget: int) -> None:
        """The enclosing definition whole when it fits its share, else its signature and the
        statements nearest the cursor; then the outer definitions' signatures."""
        inner, kind = chain[0]
        start, end = inner.start_point.row, end_row(inner)
        got = place.rows("enclosing", range(start, end + 1), int(budget * ENCLOSING_SHARE))
        if got:
            place.record("enclosing", f"the enclosing {kind}, whole", got)
        else:
            _, s_row, e_row = signature_of(inner, data, kind)
            got = place.rows("enclosing.signature", range(s_row, e_row + 1))
            place.record("enclosing.signature", f"the enclosing {kind}'s signature", got)
            row = place.cursor_row
            label = "enclosing.nearby"
            nearby = place.grow(label, (row - 1, max(start, e_row), -1), int(budget * NEARBY_ABOVE_SHARE))
            nearby += place.grow(label, (row + 1, end + 1, 1), int(budget * NEARBY_BELOW_SHARE))
            place.record(label, f"statements of the enclosing {kind} nearest the cursor", nearby)
        outer = 0
        for node, k in chain[1:]:
            _, s_row, e_row = signature_of(node, data, k)
            outer += place.rows("enclosing.outer", range(s_row, e_row + 1))
        place.record("enclosing.outer", "signatures of the outer definitions", outer)

    @staticmethod
    def headers(place: Placer, doc: Document, budget: int) -> None:
        """No enclosing definition known: the lines that open the blocks around the cursor."""
        rows = indent_headers(doc, place.cursor_row)
        got = place.rows("enclosing.headers", rows, int(budget * HEADERS_SHARE))
        place.record(
            "enclosing.headers", "lines that open the blocks around the cursor (by indentation)", got
        )

    @staticmethod
    def rest(sel: LineSelection, place: Placer, multi: bool, tree: Tree | None) -> None:
        """More prefix and a shorter suffix with what is left, then statement-boundary cuts."""
        rem = sel.remaining
        if rem <= 0:
            sel.trim_to_statements(tree)
            return
        share = SUFFIX_SHARE_MULTI if multi else SUFFIX_SHARE_SINGLE
        row = sel.cursor_row
        below = row
        while below + 1 in sel.kept:
            below += 1
        above = row
        while above - 1 in sel.kept:
            above -= 1
        suf = place.grow("*rest", (below + 1, sel.n, 1), int(rem * share))
        pre = place.grow("*rest", (above - 1, -1, -1), sel.remaining)
        suf += place.grow("*rest", (below + 1, sel.n, 1), sel.remaining)  # the prefix ran out of file
        sel.trim_to_statements(tree)
        place.record("prefix.rest", "more of the file above the cursor, cut at a statement", pre)
        place.record("suffix.rest", "more of the file below the cursor, cut at a statement", suf)


def indent_headers(doc: Document, row: int, levels: int = 3) -> list[int]:
    """Line-based fallback: the nearest lines above with less indentation (block openers)."""
    line = doc.line(row)
    width = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())
    if not line.strip():
        width = 10_000
    out: list[int] = []
    r = row - 1
    while r >= 0 and len(out) < levels and row - r < 2000:
        text = row_head(doc, r).expandtabs(4)
        if text.strip():
            w = len(text) - len(text.lstrip())
            if w < width:
                out.append(r)
                width = w
                if w == 0:
                    break
        r -= 1
    return out


def mode_at(doc: Document, row: int, line: tuple[str, str], node: Node | None) -> ModeDecision:
    """Single or multi-line, from the syntax at the cursor (`line`: its prefix and suffix)."""
    line_prefix, line_suffix = line
    prev_line = next_line = None
    for r in range(row - 1, max(-1, row - 20), -1):
        if row_head(doc, r).strip():
            prev_line = row_head(doc, r)
            break
    for r in range(row + 1, min(doc.line_count, row + 20)):
        if row_head(doc, r).strip():
            next_line = row_head(doc, r)
            break
    inside = _inside_literal(node, (row, len(line_prefix.encode("utf-8", "surrogatepass"))))
    return decide_mode(
        doc.language_id, line_prefix, line_suffix, prev_line, next_line, in_comment_or_string=inside
    )


def _inside_literal(node: Node | None, pos: tuple[int, int]) -> bool:
    """Whether `pos` (row, byte column) is inside a string or comment within 3 levels of `node`."""
    cur = node
    for _ in range(3):
        if cur is None:
            break
        t = cur.type
        if any(k in t for k in _STRINGISH):
            start, end = cur.start_point, cur.end_point
            if (start.row, start.column) < pos and (
                pos < (end.row, end.column) or ("comment" in t and pos == (end.row, end.column))
            ):
                return True
        cur = cur.parent
    return False
