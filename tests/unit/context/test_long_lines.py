"""A cursor on a minified line: the build reads the budget's worth of it, not the line."""

from __future__ import annotations

import pytest

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.long_lines import LONG_LINE_CHARS, long_line_context
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor

BUDGET = 2000
# A minified bundle's line: real-looking statements, one after the other, ~600 KB.
CHUNK = "function f{i}(a,b){{var c=a.map(function(x){{return x*{i}}});return c.concat(b)}};"
LINE = "".join(CHUNK.format(i=i) for i in range(8000))


def _longest_copies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records the length of every row text a build asks the document for."""
    seen: list[int] = []
    line, lines = Document.line, Document.lines

    def spy_line(self: Document, row: int) -> str:
        out = line(self, row)
        seen.append(len(out))
        return out

    def spy_lines(self: Document, start: int, stop: int) -> list[str]:
        out = lines(self, start, stop)
        seen.extend(len(x) for x in out)
        return out

    monkeypatch.setattr(Document, "line", spy_line)
    monkeypatch.setattr(Document, "lines", spy_lines)
    return seen


def test_build_on_a_minified_line_reads_no_whole_row(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = Document("file:///w/bundle.min.js", "javascript", 1, "/*! v1 */\n" + LINE + "\nexport{f1};\n")
    cursor = Cursor(1, len(LINE) // 2)
    seen = _longest_copies(monkeypatch)
    ctx = ContextEngine().build(doc, cursor, BUDGET)
    assert max(seen, default=0) <= LONG_LINE_CHARS  # before: the 600 KB row, several times
    assert len(ctx.prefix) + len(ctx.suffix) <= BUDGET
    # The line's parts for post-processing are the cut pieces the prompt shows.
    assert ctx.prefix.endswith(ctx.line_prefix) and ctx.suffix.startswith(ctx.line_suffix)
    assert 0 < len(ctx.line_prefix) <= BUDGET and len(ctx.line_suffix) <= BUDGET
    at = len(LINE) // 2
    assert LINE[:at].endswith(ctx.line_prefix) and LINE[at:].startswith(ctx.line_suffix)


def test_prepare_on_a_minified_line_parses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = Document("file:///w/bundle.min.js", "javascript", 1, LINE)

    def no_tree(self: Document) -> None:
        raise AssertionError("the tree of a minified line was asked for")

    monkeypatch.setattr(Document, "tree", no_tree)
    engine = ContextEngine()
    engine.prepare(doc, Cursor(0, len(LINE)), BUDGET)
    engine.build(doc, Cursor(0, len(LINE)), BUDGET)


def test_the_cuts_fall_between_tokens() -> None:
    doc = Document("file:///w/b.js", "javascript", 1, LINE)
    for at in (1000, 123_457, len(LINE) - 7, len(LINE)):
        ctx = long_line_context(doc, Cursor(0, at), BUDGET)
        before, after = LINE[:at], LINE[at:]
        start = at - len(ctx.line_prefix)
        assert start == 0 or not (before[start - 1].isalnum() and before[start].isalnum())
        end = len(ctx.line_suffix)
        assert end == len(after) or not (after[end - 1].isalnum() and after[end].isalnum())


def test_short_neighbour_rows_come_whole_while_the_budget_lasts() -> None:
    text = "import x from 'y';\nconst a = 1;\n" + LINE[:20_000] + "\nconst z = 2;\n"
    doc = Document("file:///w/b.js", "javascript", 1, text)
    ctx = ContextEngine().build(doc, Cursor(2, 300), BUDGET)  # the whole typed part fits
    assert ctx.prefix.startswith("import x from 'y';\nconst a = 1;\n")
    assert ctx.prefix.endswith(LINE[:300])
    assert {p.label for p in ctx.parts} >= {"prefix.cursor_line", "prefix.cursor_lines"}
