"""A document version's row names are read once: later requests at other positions of the
same version slice the table instead of looking each row up again."""

from __future__ import annotations

from typing import Any

from lsp_assist.context.lexicon import Lexicon
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor

TEXT = "import os\n\ndef f(alpha, beta):\n    gamma = alpha + beta\n    return os.path.join(gamma)\n"


class Counting(Lexicon):
    reads = 0

    def line(self, text: str) -> frozenset[str]:
        self.reads += 1
        return super().line(text)


def _doc(text: str = TEXT, version: int = 1) -> Document:
    return Document("file:///a.py", "python", version, text, "/a.py")


def test_rows_are_the_names_of_each_row_and_read_once_per_version() -> None:
    lex, doc = Counting(), _doc()
    assert lex.rows(doc, 0, 99) == [Lexicon().line(t) for t in doc.lines(0, doc.line_count)]
    reads = lex.reads
    assert lex.rows(doc, 2, 4) == [Lexicon().line(t) for t in doc.lines(2, 4)]
    assert lex.rows(doc, -3, 1) == [Lexicon().line("import os")]
    assert lex.reads == reads  # from the table
    assert lex.rows(doc, 5, 3) == []


def test_an_edit_makes_a_new_table_and_a_close_drops_it() -> None:
    lex = Counting()
    doc = _doc()
    lex.rows(doc, 0, 5)
    edited = _doc(TEXT.replace("gamma = alpha", "delta = alpha"), 2)
    reads = lex.reads
    assert "delta" in lex.rows(edited, 3, 4)[0]
    assert lex.reads > reads
    lex.forget(edited.uri)
    assert lex.tables_bytes == 0


def test_a_build_at_a_second_position_reads_no_row_again(monkeypatch: Any) -> None:
    from lsp_assist.context.builder import ContextEngine

    engine = ContextEngine()
    counting = Counting()
    counting.memo = engine.lexicon.memo
    monkeypatch.setattr(engine.lexicon, "line", counting.line)
    body = "".join(f"    v{i} = alpha_{i} + beta\n" for i in range(60))
    doc = Document("file:///b.py", "python", 1, f"def f(alpha, beta):\n{body}    return beta\n", "/b.py")
    engine.build(doc, Cursor(30, 4), 1500)
    first = counting.reads
    engine.build(doc, Cursor(45, 4), 1500)
    # The rows of the related lines and of the used names come from the table now; only
    # the few rows other sources read one by one are looked up again.
    assert counting.reads - first < first / 2
