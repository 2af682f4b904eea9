"""A real `StreamLauncher` over one open document and a fake model, for the refinement tests
(`test_refine_after_cut.py`, `test_refine_after_rest.py`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_assist.config.schema import Config
from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.governance.guard import Governance, Surroundings
from lsp_assist.governance.settings import parse_settings
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.launcher import StreamLauncher
from lsp_assist.pipeline.postprocess import StreamAssembler
from lsp_assist.pipeline.request import Target
from lsp_assist.pipeline.typing_index import TypingIndex
from lsp_assist.providers.base import Provider
from lsp_assist.telemetry.stats import StatsCollector

URI = "file:///a.py"


def one_document(
    tmp_path: Path, model: Provider, text: str
) -> tuple[StreamLauncher, DocumentStore, Target, list[Cursor]]:
    """The launcher with `model` on the fast tier, `text` open as /a.py (version 1), the
    target at the end of `text`, and the cursors suggestionReady was sent for."""
    settings, errors = parse_settings({}, environ={})
    assert errors == []
    gov = Governance(settings, tmp_path / "cache", [str(tmp_path)], surroundings=Surroundings(environ={}))
    store = DocumentStore()
    store.open(URI, "python", 1, text + "\n", "/a.py")
    snap = store.snapshot(URI)
    assert snap is not None
    answers = AnswerStore(SuggestionCache(None), TypingIndex(), store)
    ready: list[Cursor] = []
    answers.on_suggestion_ready = lambda uri, version, cursor: ready.append(cursor)
    launcher = StreamLauncher(
        Config(),
        {"fast": model},
        gov,
        answers,
        StatsCollector(Config().budget, tmp_path / "stats.jsonl"),
        assembler=lambda ctx: StreamAssembler(ctx, "single"),
        provider_key=lambda tier: f"local:fake:{tier}",
    )
    line = text.count("\n")
    target = Target(snap, len(text), Cursor(line, len(text) - text.rfind("\n") - 1))
    return launcher, store, target, ready


async def settle(launcher: StreamLauncher, uri: str = URI) -> None:
    """Wait until no stream, refinement or refinement's rest is left for the document."""
    for _ in range(400):
        flight = launcher.live_stream(uri)
        if flight is None or flight.done:
            flight = launcher.refining(uri)
        if flight is not None and not flight.done:
            await asyncio.wait_for(asyncio.shield(flight.final), 5)
        elif launcher.refine_waiting(uri):
            await asyncio.sleep(0.01)
        else:
            return
    raise AssertionError("the document's streams never settled")
