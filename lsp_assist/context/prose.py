"""Multi-line docstrings and block comments that the growing windows step over.

The context builder asks, row by row, whether a row is inside prose long enough to skip (a
marker line instead of the text: more code per budget). Asking the tree costs a
`descendant_for_point_range` and up to three parent walks per row, ~3 µs, about 70 rows a
build (~0.2 ms of a 1.2 ms build). The answers are kept per document while the edits since
they were read stay on the row being typed (no line added or removed, no syntax change
beyond it): then no other row's answer can have changed. The typed row is always asked
again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from tree_sitter import Node, Point, Tree

from lsp_assist.documents.store import Document

PROSE_MIN_ROWS = 3  # docstrings/comments shorter than this cost less than the gap they leave
PROSE_TYPES = ("string", "comment", "block_comment", "line_comment")  # docstrings, javadoc, Rust docs
MAX_DOCUMENTS = 16

# A row's answer before the cursor's checks: (first row, last row, row of the definition
# whose docstring it is, or -2), or None when the row is no skippable prose.
_Raw = tuple[int, int, int] | None


def end_row(node: Node) -> int:
    """The last row with content (a node ending at column 0 ends on the row before)."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


class _Rows:
    __slots__ = ("generation", "raw")

    def __init__(self) -> None:
        self.generation = -1
        self.raw: dict[int, _Raw] = {}


class ProseSpans:
    """Per document, the prose rows read so far, valid while only the typed row changes."""

    def __init__(self) -> None:
        self._docs: OrderedDict[str, _Rows] = OrderedDict()

    def forget(self, uri: str) -> None:
        self._docs.pop(uri, None)

    def _rows(self, doc: Document, row: int) -> dict[int, _Raw] | None:
        """The kept answers of `doc` still valid with `row` typed on (the others dropped)."""
        syntax = doc.syntax
        if syntax is None:
            return None
        got = self._docs.get(doc.uri)
        if got is None:
            got = self._docs[doc.uri] = _Rows()
            while len(self._docs) > MAX_DOCUMENTS:
                self._docs.popitem(last=False)
        self._docs.move_to_end(doc.uri)
        if not syntax.edited_only_on(got.generation, row):
            got.raw.clear()
        got.raw.pop(row, None)  # the typed row: asked again every time, never kept
        got.generation = syntax.generation
        return got.raw

    def skipper(
        self, tree: Tree, doc: Document, row: int, chain: list[tuple[Node, str]]
    ) -> Callable[[int], tuple[int, int] | None]:
        """Spans of multi-line docstrings and block comments to step over (not the
        enclosing definition's own docstring, and never the text around the cursor `row`)."""
        own = chain[0][0].start_point.row if chain else -1
        root = tree.root_node
        kept = self._rows(doc, row)

        def raw(r: int) -> _Raw:
            text = doc.line(r)
            stripped = text.lstrip()
            if not stripped:
                return None
            col = len(text[: len(text) - len(stripped)].encode("utf-8", "surrogatepass"))
            node: Node | None = root.descendant_for_point_range(Point(r, col), Point(r, col))
            for _ in range(3):
                if node is None or node.type in PROSE_TYPES:
                    break
                node = node.parent
            if node is None or node.type not in PROSE_TYPES:
                return None
            a, b = node.start_point.row, end_row(node)
            if b - a + 1 < PROSE_MIN_ROWS:
                return None
            owner = -2
            if node.type == "string":
                stmt = node.parent
                if stmt is None or stmt.type != "expression_statement" or stmt.named_child_count != 1:
                    return None  # a string used as a value is code, not prose
                if stmt.start_point.row != a or end_row(stmt) != b:
                    return None
                body = stmt.parent
                if body is not None and body.parent is not None:
                    owner = body.parent.start_point.row
            return a, b, owner

        def span(r: int) -> tuple[int, int] | None:
            if kept is None or r == row:
                got = raw(r)
            elif r in kept:
                got = kept[r]
            else:
                got = kept[r] = raw(r)
            if got is None:
                return None
            a, b, owner = got
            if a <= row <= b or owner == own:
                return None  # the text around the cursor, or the enclosing definition's own docstring
            return a, b

        return span
