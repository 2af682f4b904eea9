"""The fast tier's prompt is built where an edit ends, before the request that follows asks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lsp_assist.config.schema import Config
from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor, PromptContext
from lsp_assist.pipeline.prebuild import PromptPrebuilder
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.pipeline.typing_index import TypingIndex
from tests.unit.pipeline.test_prompt_reuse import CountingContext, NoGovernance

TEXT = "import os\n\ndef f(x):\n    y = x\n    return y\n"


class Excluding(NoGovernance):
    def excluded(self, path: str | None) -> str | None:
        return "secret" if path and "secret" in path else None


def _setup(
    governance: NoGovernance | None = None, typing: TypingIndex | None = None
) -> tuple[PromptBuilder, DocumentStore, CountingContext]:
    store, context = DocumentStore(), CountingContext()
    store.on_change.append(context.index_document)
    prompts = PromptBuilder(Config(), store, context, governance or NoGovernance(), {})  # type: ignore[arg-type]
    pre = PromptPrebuilder(store, lambda: prompts, typing)
    store.on_change.append(pre.note_change)
    store.on_close.append(lambda doc: pre.forget(doc.uri))
    return prompts, store, context


async def test_the_request_after_an_edit_finds_its_prompt_built() -> None:
    prompts, store, context = _setup()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    # Enter at the end of `y = x`: a fresh line indented like the next, the cursor at its end.
    store.change("file:///a.py", 2, [TextChange(Cursor(3, 9), Cursor(3, 9), "\n    ")])
    await asyncio.sleep(0.05)  # the editor asks later (VS Code: 50 ms)
    assert context.builds == 1
    built = prompts.for_open("file:///a.py", Cursor(4, 4), "fast")
    assert built is not None and context.builds == 1 and prompts.reused == 1
    assert built.context.prefix.endswith("y = x\n    ")


async def test_fast_edits_build_once_at_the_last_and_excluded_files_not_at_all() -> None:
    prompts, store, context = _setup(Excluding())
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    for k, ch in enumerate("abc"):
        store.change("file:///a.py", 2 + k, [TextChange(Cursor(4, 12 + k), Cursor(4, 12 + k), ch)])
    await asyncio.sleep(0.05)
    assert context.builds == 1
    assert prompts.for_open("file:///a.py", Cursor(4, 15), "fast") is not None and prompts.reused == 1
    store.open("file:///secret.py", "python", 1, TEXT, "/secret.py")
    store.change("file:///secret.py", 2, [TextChange(Cursor(3, 9), Cursor(3, 9), "\n    ")])
    store.change("file:///a.py", 9, [TextChange(None, None, TEXT)])  # replaced whole: no cursor
    await asyncio.sleep(0.05)
    assert context.builds == 1


def test_without_an_event_loop_nothing_is_queued() -> None:
    _, store, context = _setup()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    store.change("file:///a.py", 2, [TextChange(Cursor(3, 9), Cursor(3, 9), "\n    ")])
    assert context.builds == 0


async def test_a_request_sent_with_the_edit_runs_first_and_the_build_is_not_repeated() -> None:
    prompts, store, context = _setup()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    store.change("file:///a.py", 2, [TextChange(Cursor(3, 9), Cursor(3, 9), "\n    ")])
    assert prompts.for_open("file:///a.py", Cursor(4, 4), "fast") is not None  # the request's own
    await asyncio.sleep(0.05)
    assert context.builds == 1 and prompts.reused == 1  # the queued build found it


async def test_no_prompt_is_built_where_typing_through_answers() -> None:
    typing = TypingIndex()
    _, store, context = _setup(typing=typing)
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    before = TEXT.index("    return y") + len("    return y")
    typing.remember("file:///a.py", TEXT, before, " + 1", "fast")  # the suggestion on screen
    store.change("file:///a.py", 2, [TextChange(Cursor(4, 12), Cursor(4, 12), " ")])  # typed as shown
    await asyncio.sleep(0.05)
    assert context.builds == 0
    store.change("file:///a.py", 3, [TextChange(Cursor(4, 13), Cursor(4, 13), "-")])  # not as shown
    await asyncio.sleep(0.05)
    assert context.builds == 1


async def test_a_huge_document_is_left_to_its_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    import lsp_assist.pipeline.prebuild as prebuild

    monkeypatch.setattr(prebuild, "MAX_CHARS", len(TEXT) - 1)
    _, store, context = _setup()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    store.change("file:///a.py", 2, [TextChange(Cursor(3, 9), Cursor(3, 9), "\n    ")])
    await asyncio.sleep(0.05)
    assert context.builds == 0


def _setup_rest() -> tuple[PromptBuilder, DocumentStore, CountingContext, PromptPrebuilder]:
    store, context = DocumentStore(), CountingContext()
    store.on_change.append(context.index_document)
    prompts = PromptBuilder(Config(), store, context, NoGovernance(), {})  # type: ignore[arg-type]
    pre = PromptPrebuilder(store, lambda: prompts)
    store.on_change.append(pre.note_change)
    return prompts, store, context, pre


async def test_a_request_where_the_cursor_rests_does_no_build_on_the_request_path() -> None:
    prompts, store, context, pre = _setup_rest()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    await asyncio.sleep(0.02)
    assert context.builds == 0  # opened: no cursor to build at
    pre.note_rest("file:///a.py", 1, Cursor(2, 9))  # a click at the end of `def f(x):`
    await asyncio.sleep(0.05)
    assert context.builds == 1 and pre.built_at_rest == 1
    # The request there (Alt+\ after the click, no edit) only looks the prompt up.
    built = prompts.for_open("file:///a.py", Cursor(2, 9), "fast")
    assert built is not None and context.builds == 1 and prompts.reused == 1
    assert built.context.prefix.endswith("def f(x):")


async def test_a_rest_at_an_older_version_or_a_closed_document_builds_nothing() -> None:
    _, store, _context, pre = _setup_rest()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    store.change("file:///a.py", 2, [TextChange(Cursor(4, 12), Cursor(4, 12), " ")])
    pre.note_rest("file:///a.py", 1, Cursor(2, 9))  # typed since: that edit's request is coming
    pre.note_rest("file:///b.py", None, Cursor(0, 0))  # not open
    await asyncio.sleep(0.05)
    assert pre.built == 1 and pre.built_at_rest == 0  # the edit's build only
    pre.note_rest("file:///a.py", None, Cursor(2, 9))
    store.change("file:///a.py", 3, [TextChange(Cursor(4, 13), Cursor(4, 13), " ")])  # before it ran
    await asyncio.sleep(0.05)
    assert pre.built == 2 and pre.built_at_rest == 0  # the edit's build replaced the rest's


async def test_an_opened_document_is_warmed_while_idle_and_excluded_ones_are_not() -> None:
    _, store, context = _setup(Excluding())
    doc = store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    store.open("file:///secret.py", "python", 1, TEXT, "/secret.py")
    await asyncio.sleep(0.15)
    assert context.builds == 0  # no cursor to build at: only what every position reads
    read: list[str] = []
    line = context.lexicon.line
    context.lexicon.line = lambda text: read.append(text) or line(text)  # type: ignore[method-assign]
    assert len(context.lexicon.rows(doc, 0, doc.line_count)) == doc.line_count
    assert read == []  # every row's names were read before any request
    secret = store.get("file:///secret.py")
    assert secret is not None
    context.lexicon.rows(secret, 0, 2)
    assert read != []  # the excluded document was not read ahead


async def test_an_opened_documents_lines_are_known_clean_and_its_prompt_is_unchanged() -> None:
    from lsp_assist.governance import redaction

    class Redacting(NoGovernance):
        def redact_context(self, ctx: PromptContext) -> tuple[PromptContext, int]:
            return redaction.redact_context(ctx)

    redaction._clean_lines.clear()
    prompts, store, _ = _setup(Redacting())
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    await asyncio.sleep(0.15)
    assert set(TEXT.split("\n")) <= redaction._clean_lines._lines.keys()
    hits = redaction._clean_lines.hits
    built = prompts.for_open("file:///a.py", Cursor(3, 9), "fast")
    assert built is not None and redaction._clean_lines.hits == hits + 1  # no scan
    redaction._clean_lines.clear()  # the same build with nothing known: the same prompt
    prompts._memo.forget("file:///a.py")
    again = prompts.for_open("file:///a.py", Cursor(3, 9), "fast")
    assert again is not None and again.context == built.context and again.key == built.key


LIB = (
    "class Ledger:\n    def post(self, entry):\n        return entry\n\n\n"
    "def open_ledger(path):\n    return Ledger()\n"
)
USER = "".join(
    f"def f{i}(items):\n    book = open_ledger(items)\n    book.post({i})\n    return book\n\n"
    for i in range(8)
)


def _rows_setup(**kw: Any) -> tuple[DocumentStore, CountingContext, PromptBuilder, PromptPrebuilder]:
    """A store, its context engine and prompt builder, and a prebuilder (`kw` its options)
    hooked to the store's changes; the ledger library and its user opened."""
    store, context = DocumentStore(), CountingContext()
    store.on_change.append(context.index_document)
    prompts = PromptBuilder(Config(), store, context, NoGovernance(), {})  # type: ignore[arg-type]
    pre = PromptPrebuilder(store, lambda: prompts, **kw)
    store.on_change.append(pre.note_change)
    store.open("file:///p/books.py", "python", 1, LIB, "/p/books.py")
    store.open("file:///p/user.py", "python", 1, USER, "/p/user.py")
    return store, context, prompts, pre


async def _rows_done(pre: PromptPrebuilder, n: int) -> None:
    for _ in range(600):  # the fill starts once no edit came for ROWS_QUIET_S
        if pre.rows_warmed >= n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the rows were not warmed")


async def test_an_opened_document_has_its_rows_cross_file_memos_filled_and_an_edit_stops_it() -> None:
    """After didOpen, every row's cross-file step (`ContextEngine.warm_rows`) is done in
    slices while idle: a request at any fresh position then only looks it up. An edit stops
    it; its pause starts it again for the new version."""
    store, context, prompts, pre = _rows_setup()
    doc = store.get("file:///p/user.py")
    assert doc is not None
    await _rows_done(pre, 2)
    memo = context.other_files
    assert len(memo.scopes) >= 8 and len(memo.outlines) >= 8  # a scope per function at least
    scopes, outlines = memo.scope_hits, memo.outline_hits
    built = prompts.for_open(doc.uri, Cursor(13, 4), "fast")
    assert built is not None and "open_ledger" in "".join(s.text for s in built.context.snippets)
    assert memo.scope_hits == scopes + 1 and memo.outline_hits == outlines + 1
    done, n = pre.rows_warmed, len(memo.scopes)
    store.change(doc.uri, 2, [TextChange(Cursor(1, 4), Cursor(1, 4), "other = sorted(items)\n    ")])
    await asyncio.sleep(0.1)
    assert pre.rows_warmed == done and len(memo.scopes) <= n + 1  # the edit's own prebuild only
    await _rows_done(pre, done + 1)  # the edit's pause: the new version's rows
    assert len(memo.scopes) > n


async def test_the_rows_fill_waits_while_an_embedded_model_works() -> None:
    """~1 s of CPU for an 800-row file would slow a model reading on both cores (the
    rewrite the user rests for): the fill waits until no embedded model works."""
    busy = [True]
    _, context, _, pre = _rows_setup(models_busy=lambda: busy[0])
    await asyncio.sleep(0.6)  # past the open's warm-up and a retry or two
    assert pre.rows_warmed == 0 and len(context.other_files.scopes) <= 2  # the prebuilds' own
    busy[0] = False
    await _rows_done(pre, 2)


async def test_the_rows_fill_waits_while_the_user_edits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Edits to any document keep the fill off the loop until they stop for ROWS_QUIET_S."""
    from lsp_assist.pipeline import prebuild

    monkeypatch.setattr(prebuild, "ROWS_QUIET_S", 0.3)
    store, _, _, pre = _rows_setup()
    scratch = store.open("file:///p/scratch.py", "python", 1, "x = 1\n", "/p/scratch.py")
    for k in range(8):  # an edit every 0.1 s elsewhere, for 0.8 s
        await asyncio.sleep(0.1)
        store.change(scratch.uri, 2 + k, [TextChange(Cursor(0, 5), Cursor(0, 5), "1")])
    assert pre.rows_warmed == 0
    await _rows_done(pre, 3)


async def test_closed_at_shutdown_nothing_queued_runs_after() -> None:
    """At shutdown the runtime closes the prebuilder before the workspace index: a row fill
    still queued read the index after its files were gone (the demo's last stop)."""
    busy = [True]
    _, context, _, pre = _rows_setup(models_busy=lambda: busy[0])
    await asyncio.sleep(0.3)  # the opens' fills queued, waiting for the model
    assert pre._rows  # something is queued
    pre.close()
    busy[0] = False
    scopes = len(context.other_files.scopes)
    await asyncio.sleep(1.5)  # past the fills' retries and the quiet wait
    assert pre.rows_warmed == 0 and len(context.other_files.scopes) == scopes
    assert not pre._rows and not pre._pending
