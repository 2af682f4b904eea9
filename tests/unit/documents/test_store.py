"""DocumentStore: incremental edits keep text, line table and tree equal to a fresh start."""

from __future__ import annotations

import random

import pytest

from lsp_assist.documents.store import Document, DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.languages import get_language, language_id_for_path

PY = '''import os


def f(a, b):
    """Doc é😀."""
    return a + b


class K:
    def m(self):
        return f(1, 2)
'''

JS = "function f(a) {\n  return a + 1;\n}\nconst x = [1, 2, 3];\n"
GO = "package m\n\nfunc F(a int) int {\n\treturn a\n}\n"
RS = "fn main() {\n    let v = vec![1, 2];\n}\n"

ALPHABET = ["x", "é", "😀", "\n", "(", ")", "{", "}", ":", " ", "\t", "def ", "return ", '"', "\r\n", ""]


def _random_edit(rng: random.Random, doc: Document) -> TextChange:
    n = doc.line_count
    a = Cursor(rng.randrange(n + 1), rng.randrange(0, 40))  # past-the-end positions on purpose
    b = Cursor(min(n, a.line + rng.choice([0, 0, 0, 1, 2])), rng.randrange(0, 40))
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.choice([0, 1, 1, 2, 5])))
    return TextChange(a, b, text)


def _reference_apply(text: str, doc: Document, change: TextChange) -> str:
    """The slow obvious way: positions by splitting the text."""
    assert change.start is not None and change.end is not None
    lines = text.split("\n")

    def off(c: Cursor) -> int:
        if c.line >= len(lines):
            return len(text)
        line = lines[c.line]
        visible = line[:-1] if line.endswith("\r") else line
        return sum(len(x) + 1 for x in lines[: c.line]) + min(c.character, len(visible))

    s, e = sorted((off(change.start), off(change.end)))
    return text[:s] + change.text + text[e:]


@pytest.mark.parametrize(("lang", "text"), [("python", PY), ("javascript", JS), ("go", GO), ("rust", RS)])
@pytest.mark.parametrize("seed", range(6))
def test_incremental_tree_matches_fresh_parse(lang: str, text: str, seed: int) -> None:
    rng = random.Random(seed)
    store = DocumentStore()
    doc = store.open("file:///t", lang, 1, text)
    assert doc.tree() is not None
    expected = text
    for step in range(40):
        change = _random_edit(rng, doc)
        expected = _reference_apply(expected, doc, change)
        store.change(doc.uri, step + 2, [change])
        assert doc.text == expected
        if step % 3 == 0 or step == 39:
            tree = doc.tree()
            assert tree is not None and doc.syntax is not None
            fresh = doc.syntax.full_parse(doc.data())
            assert fresh is not None
            assert str(tree.root_node) == str(fresh.root_node)
    # the line table agrees with a fresh split
    lines = expected.split("\n")
    assert doc.line_count == len(lines)
    for i, line in enumerate(lines):
        assert doc.line(i) == (line[:-1] if line.endswith("\r") else line)


def test_several_changes_in_one_notification_apply_in_order() -> None:
    store = DocumentStore()
    doc = store.open("file:///a.py", "python", 1, "ab\ncd\n")
    store.change(
        doc.uri,
        2,
        [TextChange(Cursor(0, 1), Cursor(0, 1), "X"), TextChange(Cursor(1, 0), Cursor(1, 2), "Y\nZ")],
    )
    assert doc.text == "aXb\nY\nZ\n"
    assert doc.version == 2
    store.change(doc.uri, 3, [TextChange(None, None, "new")])
    assert doc.text == "new" and doc.line_count == 1


def test_positions_past_the_end_clamp_and_unknown_uri() -> None:
    store = DocumentStore()
    doc = store.open("file:///a.py", "python", 1, "one\ntwo")
    store.change(doc.uri, 2, [TextChange(Cursor(99, 99), Cursor(120, 0), "!")])
    assert doc.text == "one\ntwo!"
    assert store.change("file:///missing", 1, []) is None
    assert store.line_text("file:///missing", 0) == ""
    assert store.line_text(doc.uri, 1) == "two!"
    assert store.line_text(doc.uri, 7) == ""
    assert doc.clamp(Cursor(-1, 5)) == Cursor(0, 0)


def test_hooks_snapshot_close() -> None:
    store = DocumentStore()
    seen: list[int] = []
    store.on_change.append(lambda d: seen.append(d.version))

    def broken(d: Document) -> None:
        raise ZeroDivisionError  # a broken hook does not break editing

    store.on_change.append(broken)
    closed: list[str] = []
    store.on_close.append(lambda d: closed.append(d.uri))
    store.open("file:///p/a.py", "python", 1, "x = 1\n")
    store.change("file:///p/a.py", 2, [TextChange(Cursor(0, 0), Cursor(0, 1), "y")])
    snap = store.snapshot("file:///p/a.py")
    assert snap is not None and snap.text == "y = 1\n" and snap.version == 2 and snap.path == "/p/a.py"
    assert seen == [1, 2]
    assert [d.uri for d in store.documents()] == ["file:///p/a.py"]
    store.close("file:///p/a.py")
    assert closed == ["file:///p/a.py"] and store.get("file:///p/a.py") is None


def test_large_binary_and_unknown_documents_have_no_tree() -> None:
    store = DocumentStore(max_syntax_chars=1000)
    big = store.open("file:///big.py", "python", 1, "x = 1\n" * 500)
    assert big.syntax is None and big.tree() is None
    binary = store.open("file:///b.py", "python", 1, "\x00\x01\x02abc")
    assert binary.tree() is None
    unknown = store.open("file:///n.txt", "plaintext", 1, "hello")
    assert unknown.tree() is None
    small = store.open("file:///s.py", "python", 1, "x = 1\n")
    store.change(small.uri, 2, [TextChange(Cursor(1, 0), Cursor(1, 0), "y = 2\n" * 300)])
    assert small.syntax is None  # grew past the limit: line-based from now on


def test_languages() -> None:
    for lang in ("python", "javascript", "javascriptreact", "typescript", "typescriptreact", "go", "rust"):
        assert get_language(lang) is not None, lang
    assert get_language("cobol") is None
    assert language_id_for_path("x/y.tsx") == "typescriptreact"
    assert language_id_for_path("README") == "plaintext"


def test_lines_matches_line_by_line() -> None:
    for text in ["a\nb\r\nc\n", "a", "", "x\ny\nz"]:
        doc = Document("file:///l.py", "python", 1, text)
        for a in range(-1, 5):
            for b in range(a, 6):
                want = [doc.line(r) for r in range(max(0, a), min(b, doc.line_count))]
                assert doc.lines(a, b) == want


def test_a_change_for_an_older_version_is_dropped() -> None:
    store = DocumentStore()
    doc = store.open("file:///a.py", "python", 1, "a = 1\n")
    store.change(doc.uri, 6, [TextChange(None, None, "b = 2\n")])
    # A full text for version 5 arriving late: applying it would roll the text back.
    assert store.is_stale(doc.uri, 5)
    assert store.change(doc.uri, 5, [TextChange(None, None, "OLD = 0\n")]) is None
    # So would an incremental one, spliced into a text it was not computed against.
    assert store.change(doc.uri, 4, [TextChange(Cursor(0, 0), Cursor(0, 1), "zz")]) is None
    assert doc.text == "b = 2\n" and doc.version == 6
    store.change(doc.uri, 7, [TextChange(Cursor(0, 0), Cursor(0, 0), "x")])
    assert doc.text == "xb = 2\n" and doc.version == 7
    # The current version is stale for a new notification (a replay); versions may jump.
    assert store.is_stale(doc.uri, 7) and not store.is_stale(doc.uri, 12)
    assert not store.is_stale("file:///not-open.py", 1)
    # Re-opening resets the version (didOpen is how a client restarts its count).
    store.open(doc.uri, "python", 1, "new\n")
    assert not store.is_stale(doc.uri, 2)


def test_edited_only_on_one_row_until_a_line_or_another_row_changes() -> None:
    # The typing path's caches (symbols, prose spans) keep what they read of other rows
    # while every edit since stays on the typed row and adds no line.
    store = DocumentStore()
    doc = store.open("file:///e.py", "python", 1, "def f(a):\n    return a\n\n\ndef g(b):\n    return b\n")
    assert doc.tree() is not None and doc.syntax is not None
    start = doc.syntax.generation
    store.change(doc.uri, 2, [TextChange(Cursor(1, 12), Cursor(1, 12), "bc")])
    assert doc.tree() is not None
    assert doc.syntax.edited_only_on(start, 1) and not doc.syntax.edited_only_on(start, 5)
    store.change(doc.uri, 3, [TextChange(Cursor(1, 11), Cursor(1, 11), "(")])  # the rows below: an error
    assert doc.tree() is not None
    assert doc.syntax.edited_only_on(start, 1, structural_anywhere=True)
    assert not doc.syntax.edited_only_on(start, 1)  # a prose cache must read the rows below again
    store.change(doc.uri, 4, [TextChange(Cursor(1, 11), Cursor(1, 12), "")])
    store.change(doc.uri, 5, [TextChange(Cursor(1, 14), Cursor(1, 14), "\n")])  # a line added
    assert not doc.syntax.edited_only_on(start, 1, structural_anywhere=True)
    assert not doc.syntax.edited_only_on(-1, 1)  # nothing read yet


def test_line_length_is_the_length_of_line_without_copying_it() -> None:
    text = "first\r\n\nthird line\r\nlast, no newline"
    doc = Document("file:///w/a.txt", "plaintext", 1, text)
    assert [doc.line_length(r) for r in range(-1, doc.line_count + 1)] == [
        0,
        *(len(doc.line(r)) for r in range(doc.line_count)),
        0,
    ]
    assert doc.clamp(Cursor(0, 99)) == Cursor(0, 5)  # not past the "\r"
    assert doc.clamp(Cursor(9, 0)) == Cursor(3, len("last, no newline"))


def test_edit_end_is_where_the_inserted_text_ends() -> None:
    store = DocumentStore()
    doc = store.open("file:///e.py", "python", 1, "ab\ncd\n", "/e.py")
    assert doc.edit_end is None
    store.change("file:///e.py", 2, [TextChange(Cursor(0, 1), Cursor(0, 1), "xy")])
    assert doc.edit_end == Cursor(0, 3)
    store.change("file:///e.py", 3, [TextChange(Cursor(1, 2), Cursor(1, 2), "\n    ")])
    assert doc.edit_end == Cursor(2, 4)
    store.change("file:///e.py", 4, [TextChange(Cursor(0, 0), Cursor(1, 1), "")])  # a deletion
    assert doc.edit_end == Cursor(0, 0)
    store.change("file:///e.py", 5, [TextChange(Cursor(0, 1), Cursor(0, 1), "()")])  # auto-closed
    assert doc.edit_end == Cursor(0, 2)
    store.change("file:///e.py", 6, [TextChange(None, None, "new\n")])
    assert doc.edit_end is None
