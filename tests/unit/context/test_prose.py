"""Prose spans (docstrings, block comments) the growing windows step over, kept per document
while the edits stay on the typed row."""

from __future__ import annotations

import random

import pytest

from lsp_assist.context.prose import ProseSpans
from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor

COMMENTS = "# one\n# two\n# three\n\n"
TEXT = "".join(
    f'def f{i}(a):\n    """Doc of f{i}.\n\n    More words.\n    """\n    return a\n\n' + COMMENTS
    for i in range(12)
)


def _all(spans: ProseSpans, doc: object, row: int) -> list[tuple[int, int] | None]:
    from lsp_assist.documents.store import Document

    assert isinstance(doc, Document)
    tree = doc.tree()
    assert tree is not None
    skip = spans.skipper(tree, doc, row, [])
    return [skip(r) for r in range(doc.line_count)]


@pytest.mark.parametrize("seed", range(6))
def test_kept_answers_agree_with_fresh_ones_after_edits(seed: int) -> None:
    # Typing on one row (identifiers, spaces, brackets), then elsewhere, a newline, an
    # opened string that turns the rows below into prose: the kept answers must always be
    # the ones a fresh read gives.
    rng = random.Random(seed)
    store = DocumentStore()
    doc = store.open("file:///p.py", "python", 1, TEXT)
    kept = ProseSpans()
    row = 5
    for version in range(2, 80):
        if rng.random() < 0.15:
            row = rng.randrange(doc.line_count)
        col = rng.randrange(len(doc.line(row)) + 1)
        piece = rng.choice(["x", "x", " ", "(", ")", '"""', "\n", "#"])
        store.change(doc.uri, version, [TextChange(Cursor(row, col), Cursor(row, col), piece)])
        if piece == "\n":
            row += 1
        assert _all(kept, doc, row) == _all(ProseSpans(), doc, row)


def test_typing_on_one_row_keeps_the_other_rows_answers() -> None:
    store = DocumentStore()
    doc = store.open("file:///p.py", "python", 1, TEXT)
    spans = ProseSpans()
    first = _all(spans, doc, 5)
    assert first[1] == (1, 4) and first[12] == (12, 15)  # docstrings away from the cursor
    assert first[7] is None  # one-row comments: shorter than a gap marker's worth
    kept = dict(spans._docs[doc.uri].raw)
    store.change(doc.uri, 2, [TextChange(Cursor(5, 12), Cursor(5, 12), "bc")])
    _all(spans, doc, 5)
    assert {r: v for r, v in spans._docs[doc.uri].raw.items() if r != 5} == {
        r: v for r, v in kept.items() if r != 5
    }
    store.change(doc.uri, 3, [TextChange(Cursor(0, 0), Cursor(0, 0), "\n")])  # a line added above
    assert _all(spans, doc, 41)[13] == (13, 16)  # every row read again: f1's docstring moved down
