"""A document's row lengths, worked out once per text, are `line_length`'s after any edit."""

from __future__ import annotations

import random

from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor

PIECES = ("a", "bc", "\n", "\r\n", "\r", " ", "é", "𝄞", "def f():")


def test_row_lengths_follow_every_edit_and_line_ending() -> None:
    rng = random.Random(4)
    store = DocumentStore()
    doc = store.open("file:///a.py", "python", 1, "x = 1\r\ny = 2\n", "/a.py")
    for version in range(2, 300):
        assert doc.row_lengths() == [doc.line_length(r) for r in range(doc.line_count)]
        assert doc.row_lengths() == [len(doc.line(r)) for r in range(doc.line_count)]
        row = rng.randrange(doc.line_count)
        at = Cursor(row, rng.randrange(len(doc.line(row)) + 1))
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(4)))
        store.change(doc.uri, version, [TextChange(at, at, text)])
