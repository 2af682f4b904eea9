"""The edit history: keystrokes on one spot coalesce into one edit; bounds; exclusions."""

from __future__ import annotations

import pytest

from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.nextedit import history as history_mod
from lsp_assist.nextedit.history import EditHistory
from tests.unit.nextedit.helpers import change, position, retype, session

URI = "file:///ws/m.py"
TEXT = "def area(width, height):\n    return width * height\n"


def test_typing_over_a_name_is_one_edit_from_the_old_name_to_the_new() -> None:
    store, history = session(TEXT)
    retype(store, URI, "width", "span")
    h = history.get(URI)
    assert h is not None and len(h.edits) == 1
    edit = h.edits[0]
    assert (edit.old, edit.new, edit.line) == ("width", "span", 0)
    assert h.start_text == TEXT


def test_backspacing_then_typing_coalesces_too() -> None:
    store, history = session(TEXT)
    doc = store.get(URI)
    assert doc is not None
    end = doc.text.index("width") + len("width")
    for i in range(3):  # backspace "dth"
        change(store, URI, end - i - 1, end - i, "")
    at = end - 3
    for i, ch in enumerate("nd"):
        change(store, URI, at + i, at + i, ch)
    h = history.get(URI)
    assert h is not None and [(e.old, e.new) for e in h.edits] == [("dth", "nd")]


def test_an_edit_elsewhere_starts_a_new_entry_and_undoing_removes_one() -> None:
    store, history = session(TEXT)
    retype(store, URI, "width", "span")
    retype(store, URI, "height", "tall")
    h = history.get(URI)
    assert h is not None and [(e.old, e.new) for e in h.edits] == [("width", "span"), ("height", "tall")]
    doc = store.get(URI)
    assert doc is not None
    at = doc.text.index("tall")
    change(store, URI, at, at + 4, "height")  # typed back: that spot is unchanged again
    assert [(e.old, e.new) for e in h.edits] == [("width", "span")]


def test_unified_diff_shows_whole_lines() -> None:
    store, history = session(TEXT)
    retype(store, URI, "width", "span", nth=1)
    h = history.get(URI)
    assert h is not None
    assert (
        h.edits[-1]
        .unified("m.py")
        .endswith("@@ -2,1 +2,1 @@\n-    return width * height\n+    return span * height\n")
    )


def test_history_is_bounded_in_entries_and_bytes() -> None:
    store, history = session("x = 1\n" * 400)
    for i in range(60):
        change(store, URI, i * 6, i * 6 + 1, "y")
    h = history.get(URI)
    assert h is not None and len(h.edits) == history_mod.MAX_EDITS
    big = "z" * (history_mod.MAX_EDIT_BYTES // 3)
    for i in range(4):
        doc = store.get(URI)
        assert doc is not None
        change(
            store, URI, len(doc.text), len(doc.text), f"\n{i}" + big
        )  # too large to coalesce: one entry each
    assert h.edit_bytes <= history_mod.MAX_EDIT_BYTES


def test_excluded_documents_are_never_recorded_and_close_forgets() -> None:
    store = DocumentStore()
    history = EditHistory(excluded=lambda path: path is not None and path.endswith(".env"))
    store.on_open.append(history.open)
    store.on_edit.append(history.on_edit)
    store.on_close.append(lambda doc: history.close(doc.uri))
    store.open("file:///ws/.env", "plaintext", 1, "KEY=1\n")
    store.change("file:///ws/.env", 2, [TextChange(None, None, "KEY=2\n")])
    assert history.get("file:///ws/.env") is None
    assert list(history.viewed()) == []
    store.open(URI, "python", 1, TEXT)
    store.change(URI, 2, [TextChange(None, None, TEXT.replace("height", "tall", 1))])
    h = history.get(URI)
    assert h is not None and [(e.old, e.new) for e in h.edits] == [("height", "tall")]
    store.close(URI)
    assert history.get(URI) is None


def test_recently_viewed_files_most_recent_first() -> None:
    store, history = session(TEXT)
    store.open("file:///ws/b.py", "python", 1, "b = 1\n")
    retype(store, URI, "width", "w")
    assert list(history.viewed()) == [URI, "file:///ws/b.py"]


def test_all_histories_together_stay_under_their_byte_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_mod, "HISTORY_BYTES", 30_000)
    store, history = session("a = 1\n" * 2000)  # 12,000 characters of starting text
    retype(store, URI, "a = 1", "b = 2")
    for i in range(4):
        store.open(f"file:///ws/o{i}.py", "python", 1, "c = 3\n" * 2000)
    assert history.nbytes <= 30_000
    first = history.get(URI)
    assert first is not None and first.start_text is None  # the least recently viewed gave first
    newest = history.get("file:///ws/o3.py")
    assert newest is not None and newest.start_text is not None


def vscode_rename(store: DocumentStore, uri: str, nth: int = 0) -> None:
    """`width` -> `widest` as VS Code's `applyEdit` sends it: one didChange of minimal ranges,
    each against the original text, the later first (`h` deleted, `es` inserted before `t`),
    with an untouched character between them."""
    doc = store.get(uri)
    assert doc is not None
    at = -1
    for _ in range(nth + 1):
        at = doc.text.index("width", at + 1)
    drop_h = TextChange(position(doc, at + 4), position(doc, at + 5), "")
    insert_es = TextChange(position(doc, at + 3), position(doc, at + 3), "es")
    assert store.change(uri, doc.version + 1, [drop_h, insert_es]) is not None


def test_one_did_change_with_several_ranges_is_one_edit() -> None:
    store, history = session(TEXT)
    vscode_rename(store, URI)
    doc = store.get(URI)
    assert doc is not None and doc.text.startswith("def area(widest, height)")
    h = history.get(URI)
    # One edit spanning both ranges and the untouched `t` between them.
    assert h is not None and [(e.old, e.new) for e in h.edits] == [("th", "est")]


def test_separate_notifications_at_separate_places_stay_separate_edits() -> None:
    store, history = session(TEXT)
    change(store, URI, 0, 0, "#")
    doc = store.get(URI)
    assert doc is not None
    at = doc.text.index("height")
    change(store, URI, at, at, "x")
    h = history.get(URI)
    assert h is not None and [(e.old, e.new) for e in h.edits] == [("", "#"), ("", "x")]
