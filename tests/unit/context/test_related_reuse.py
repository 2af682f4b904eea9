"""The related-lines step reuses each window's names across keystrokes, with the same result."""

from __future__ import annotations

from lsp_assist.context.builder import ContextEngine
from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor

BODY = "".join(
    f"def step_{i}(items, total):\n    value_{i} = items[{i}] * total\n    return value_{i} + offset\n\n"
    for i in range(60)
)
TEXT = BODY + "def final(items, total):\n    value = items[0] * total\n    return val"


def test_an_edit_rebuilds_only_the_windows_it_touches_and_the_prompt_is_the_same() -> None:
    # No deadline in play: the question is reuse, and a loaded machine must not cut the
    # fresh build short where the warm one was not.
    store = DocumentStore()
    doc = store.open("file:///r.py", "python", 1, TEXT, "/r.py")
    row = doc.line_count - 1
    warm = ContextEngine()
    warm.build(doc, Cursor(row, 14), 4000, crossfile=False, deadline_ms=60_000.0)
    windows_before = len(warm._windows)
    store.change("file:///r.py", 2, [TextChange(Cursor(row, 14), Cursor(row, 14), "u")])
    reused = warm.build(doc, Cursor(row, 15), 4000, crossfile=False, deadline_ms=60_000.0)
    fresh = ContextEngine().build(doc, Cursor(row, 15), 4000, crossfile=False, deadline_ms=60_000.0)
    assert windows_before > 50
    assert len(warm._windows) - windows_before <= 2  # only windows holding the edited row
    assert reused.prefix == fresh.prefix and reused.suffix == fresh.suffix
    assert reused.parts == fresh.parts
