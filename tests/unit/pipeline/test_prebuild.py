"""The fast tier's prompt is built where an edit ends, before the request that follows asks."""

from __future__ import annotations

import asyncio

from lsp_assist.config.schema import Config
from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.pipeline.prebuild import PromptPrebuilder
from lsp_assist.pipeline.prompt import PromptBuilder
from tests.unit.pipeline.test_prompt_reuse import CountingContext, NoGovernance

TEXT = "import os\n\ndef f(x):\n    y = x\n    return y\n"


class Excluding(NoGovernance):
    def excluded(self, path: str | None) -> str | None:
        return "secret" if path and "secret" in path else None


def _setup(governance: NoGovernance | None = None) -> tuple[PromptBuilder, DocumentStore, CountingContext]:
    store, context = DocumentStore(), CountingContext()
    store.on_change.append(context.index_document)
    prompts = PromptBuilder(Config(), store, context, governance or NoGovernance(), {})  # type: ignore[arg-type]
    pre = PromptPrebuilder(store, lambda: prompts)
    store.on_change.append(pre.note_change)
    store.on_close.append(lambda doc: pre.forget(doc.uri))
    return prompts, store, context


async def test_the_request_after_an_edit_finds_its_prompt_built() -> None:
    prompts, store, context = _setup()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    # Enter at the end of `y = x`: a fresh line indented like the next, the cursor at its end.
    store.change("file:///a.py", 2, [TextChange(Cursor(3, 9), Cursor(3, 9), "\n    ")])
    await asyncio.sleep(0)  # the editor's request comes later than the next loop turn
    assert context.builds == 1
    built = prompts.for_open("file:///a.py", Cursor(4, 4), "fast")
    assert built is not None and context.builds == 1 and prompts.reused == 1
    assert built.context.prefix.endswith("y = x\n    ")


async def test_fast_edits_build_once_at_the_last_and_excluded_files_not_at_all() -> None:
    prompts, store, context = _setup(Excluding())
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    for k, ch in enumerate("abc"):
        store.change("file:///a.py", 2 + k, [TextChange(Cursor(4, 12 + k), Cursor(4, 12 + k), ch)])
    await asyncio.sleep(0)
    assert context.builds == 1
    assert prompts.for_open("file:///a.py", Cursor(4, 15), "fast") is not None and prompts.reused == 1
    store.open("file:///secret.py", "python", 1, TEXT, "/secret.py")
    store.change("file:///secret.py", 2, [TextChange(Cursor(3, 9), Cursor(3, 9), "\n    ")])
    store.change("file:///a.py", 9, [TextChange(None, None, TEXT)])  # replaced whole: no cursor
    await asyncio.sleep(0)
    assert context.builds == 1


def test_without_an_event_loop_nothing_is_queued() -> None:
    _, store, context = _setup()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    store.change("file:///a.py", 2, [TextChange(Cursor(3, 9), Cursor(3, 9), "\n    ")])
    assert context.builds == 0
