"""The related-lines step reuses each window's names across keystrokes, with the same result."""

from __future__ import annotations

import pytest

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.sources.related import VERSIONS_BYTES, WINDOWS_BYTES, _window_bytes
from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.memory import ByteLRU

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


def test_after_didopen_every_window_is_read_and_fresh_positions_build_as_uncached() -> None:
    """`ContextEngine.warm` reads every window of the version: a request anywhere (its
    reach cut at the file's ends or 200 rows away) looks none up in the rows' memo, and
    each prompt is the one an engine with nothing cached builds."""
    long_body = BODY * 3  # ~960 rows: reaches cut short of the file's end too
    store = DocumentStore()
    doc = store.open("file:///r.py", "python", 1, long_body + TEXT, "/r.py")
    warm = ContextEngine()
    warm.warm(doc)
    related = warm.assembler.sources.related
    at = related._versions[doc.uri].at
    assert len(at) == doc.line_count and None not in at
    looked_up: list[object] = []

    class Counting(ByteLRU[tuple[frozenset[str], ...], frozenset[str]]):
        def get(self, key: tuple[frozenset[str], ...]) -> frozenset[str] | None:
            looked_up.append(key)
            return super().get(key)

    related.windows = Counting(WINDOWS_BYTES, _window_bytes)  # what a request builds itself
    for row in (1, 5, 150, 401, 500, 771, doc.line_count - 3):
        cursor = Cursor(row, len(doc.line(row)))
        got = warm.build(doc, cursor, 4000, crossfile=False, deadline_ms=60_000.0)
        fresh = ContextEngine().build(doc, cursor, 4000, crossfile=False, deadline_ms=60_000.0)
        assert got == fresh, row
    # Only a reach cut 200 rows from the cursor (not at the file's end) builds its last
    # one or two windows: at most 2 a request.
    assert len(looked_up) <= 2 * 7


def test_requests_alternating_between_documents_keep_each_ones_windows_within_the_bound() -> None:
    store = DocumentStore()
    docs = [
        store.open(f"file:///r{i}.py", "python", 1, TEXT.replace("step_", f"s{i}_"), f"/r{i}.py")
        for i in range(3)
    ]
    engine = ContextEngine()
    for doc in docs:
        engine.warm(doc)
    related = engine.assembler.sources.related
    looked_up: list[object] = []

    class Counting(ByteLRU[tuple[frozenset[str], ...], frozenset[str]]):
        def get(self, key: tuple[frozenset[str], ...]) -> frozenset[str] | None:
            looked_up.append(key)
            return super().get(key)

    related.windows = Counting(WINDOWS_BYTES, _window_bytes)
    for doc in docs * 2:  # each document's windows were kept when the next one was asked
        row = doc.line_count // 2
        engine.build(doc, Cursor(row, 0), 4000, crossfile=False, deadline_ms=60_000.0)
    assert looked_up == []
    assert 0 < related.versions_bytes <= VERSIONS_BYTES
    assert engine.memory()["context.window_rows"] == related.versions_bytes
    engine.forget_document(docs[0])
    assert docs[0].uri not in related._versions


def test_past_the_bound_the_least_recent_documents_windows_go_first(monkeypatch: pytest.MonkeyPatch) -> None:
    from lsp_assist.context.sources import related as related_mod

    store = DocumentStore()
    docs = [store.open(f"file:///r{i}.py", "python", 1, TEXT, f"/r{i}.py") for i in range(3)]
    engine = ContextEngine()
    related = engine.assembler.sources.related
    engine.warm(docs[0])
    one = related.versions_bytes
    monkeypatch.setattr(related_mod, "VERSIONS_BYTES", int(one * 2.5))
    engine.warm(docs[1])
    engine.warm(docs[2])
    assert list(related._versions) == [docs[1].uri, docs[2].uri]
    assert related.versions_bytes <= one * 2.5
    monkeypatch.setattr(related_mod, "VERSIONS_BYTES", one // 2)  # one alone is over: started over
    engine = ContextEngine()
    engine.warm(docs[2])
    assert 0 < engine.assembler.sources.related.versions_bytes <= one // 2
    got = engine.build(docs[2], Cursor(100, 0), 4000, crossfile=False, deadline_ms=60_000.0)
    assert got == ContextEngine().build(docs[2], Cursor(100, 0), 4000, crossfile=False, deadline_ms=60_000.0)


def test_the_best_windows_are_those_a_full_sort_by_score_then_distance_gives() -> None:
    import random

    from lsp_assist.context.lexicon import Lexicon
    from lsp_assist.context.parts import PartLedger, Placer
    from lsp_assist.context.sources.related import RELATED_BEST, RELATED_STEP, RELATED_WINDOW, RelatedLines
    from lsp_assist.context.trimming import LineSelection

    rng = random.Random(3)
    words = [f"w{i}" for i in range(30)]
    text = "\n".join(" ".join(rng.sample(words, rng.randint(0, 4))) for _ in range(500))
    doc = DocumentStore().open("file:///w.py", "python", 1, text, "/w.py")
    lex = Lexicon()
    related = RelatedLines(lex)
    for _ in range(60):
        row = rng.randrange(doc.line_count)
        sel = LineSelection(doc, row, 10_000, "# ...")
        sel.try_add(range(row - rng.randint(0, 5), row + rng.randint(0, 5)))
        query = set(rng.sample(words, rng.randint(1, 10)))
        lo, hi = max(0, row - 200), min(doc.line_count, row + 200)
        scored = []
        for start in range(lo, hi, RELATED_STEP):
            if start <= row < start + RELATED_WINDOW or start in sel.kept or start + 4 in sel.kept:
                continue
            ids = frozenset().union(*lex.rows(doc, start, min(hi, start + RELATED_WINDOW)))
            inter = len(ids & query)
            if inter:
                scored.append((inter / (len(ids) + len(query) - inter), start))
        scored.sort(key=lambda t: (-t[0], abs(t[1] - row)))
        want = [start for _, start in scored][:RELATED_BEST]
        assert related._ranked(Placer(sel, PartLedger()), doc, query, (lo, hi)) == want


def test_the_versions_tables_follow_edits_and_builds_stay_those_of_an_uncached_engine() -> None:
    """After each didChange (one range or several, new lines, joined lines, a whole
    replacement) the row names and windows by row kept for the old text move with their
    rows: every entry is what reading the new text gives, and a build equals one of an
    engine that reads every new text again."""
    import random

    from lsp_assist.context.lexicon import Lexicon

    rng = random.Random(9)
    store, twin_store = DocumentStore(), DocumentStore()
    engine, twin = ContextEngine(), ContextEngine()  # the twin reads each new text again
    twin.lexicon.follow_edit = lambda doc: None  # type: ignore[method-assign]
    twin.assembler.sources.related.follow_edit = lambda doc: None  # type: ignore[method-assign]
    store.on_change.append(engine.index_document)
    twin_store.on_change.append(twin.index_document)
    doc = store.open("file:///e.py", "python", 1, BODY * 2, "/e.py")
    twin_doc = twin_store.open("file:///e.py", "python", 1, BODY * 2, "/e.py")
    engine.warm(doc)
    twin.warm(twin_doc)
    related = engine.assembler.sources.related
    fresh_lex = Lexicon()
    followed = 0
    for version in range(2, 60):
        changes = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            row = rng.randrange(doc.line_count)
            start = Cursor(row, rng.randint(0, len(doc.line(row))))
            end_row = min(doc.line_count - 1, row + rng.choice((0, 0, 0, 1, 3)))
            end = Cursor(end_row, rng.randint(0, len(doc.line(end_row)))) if end_row > row else start
            text = rng.choice((" ", "x", "value_9", "\n", "\n    total = 1\n", ""))
            changes.append(TextChange(start, end, text))
        if version == 40:
            changes = [TextChange(None, None, BODY)]
        before = related._versions.get(doc.uri)
        store.change(doc.uri, version, changes)
        twin_store.change(doc.uri, version, changes)
        if before is not None and related._versions.get(doc.uri) is before:
            followed += 1
        table = engine.lexicon._tables.get(doc.uri)
        if table is not None:
            assert table.text is doc.text and len(table.at) == doc.line_count
            for r, names in enumerate(table.at):
                assert names is None or names == fresh_lex.line(doc.line(r)), (version, r)
        v = related._versions.get(doc.uri)
        if v is not None:
            assert v.text is doc.text and len(v.at) == doc.line_count
            for s, ids in enumerate(v.at):
                rows = [fresh_lex.line(t) for t in doc.lines(s, s + 6)]
                assert ids is None or ids == frozenset().union(*rows), (version, s)
        row = rng.randrange(doc.line_count)
        cursor = Cursor(row, len(doc.line(row)))
        got = engine.build(doc, cursor, 4000, crossfile=False, deadline_ms=60_000.0)
        assert got == twin.build(twin_doc, cursor, 4000, crossfile=False, deadline_ms=60_000.0), version
    assert followed > 40


def test_the_text_an_edit_started_from_is_not_kept_after_its_hooks() -> None:
    store = DocumentStore()
    seen: list[object] = []
    store.on_change.append(lambda d: seen.append(d.row_edits_since(before)))
    doc = store.open("file:///k.py", "python", 1, TEXT, "/k.py")
    before = doc.text
    store.change(doc.uri, 2, [TextChange(Cursor(1, 0), Cursor(1, 0), "x = 1\n")])
    assert seen == [[(1, 1, 1)]]  # the hooks saw the rows the change replaced
    assert doc.batch_before is None and doc.row_edits_since(before) is None
