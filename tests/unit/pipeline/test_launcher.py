"""The stream launcher: a foreground call is never refused because background work (a
prefetch, an enrichment nobody waits for) holds the provider's only concurrency slot."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lsp_assist.config.schema import Config
from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor, ModelRequest, PromptContext, StreamChunk
from lsp_assist.errors import RateLimitSkip
from lsp_assist.governance.guard import Governance, Surroundings
from lsp_assist.governance.settings import parse_settings
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.launcher import StreamLauncher, StreamSpec
from lsp_assist.pipeline.postprocess import StreamAssembler
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import Target
from lsp_assist.pipeline.typing_index import TypingIndex
from lsp_assist.telemetry.stats import StatsCollector


class SlowProvider:
    """Streams one token every 50 ms, forever (until closed)."""

    name = "openai"
    model = "slow"
    endpoint_host = "127.0.0.1"
    single_slot = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        while True:
            await asyncio.sleep(0.05)
            yield StreamChunk("x ")

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _launcher(tmp_path: Path, provider: SlowProvider | None = None) -> StreamLauncher:
    settings, errors = parse_settings({"rate_limits": {"default": {"max_concurrent": 1}}}, environ={})
    assert errors == []
    gov = Governance(settings, tmp_path / "cache", [str(tmp_path)], surroundings=Surroundings(environ={}))
    store = DocumentStore()
    answers = AnswerStore(SuggestionCache(None), TypingIndex(), store)
    return StreamLauncher(
        Config(),
        {"fast": provider or SlowProvider()},
        gov,
        answers,
        StatsCollector(Config().budget, tmp_path / "stats.jsonl"),
        assembler=lambda ctx: StreamAssembler(ctx, "multi"),
        provider_key=lambda tier: f"openai:127.0.0.1:slow:{tier}",
    )


def _spec(**kw: object) -> StreamSpec:
    store = DocumentStore()
    store.open("file:///a.py", "python", 1, "x = ", "/a.py")
    snap = store.snapshot("file:///a.py")
    assert snap is not None
    ctx = PromptContext(language="python", path="/a.py", prefix="x = ", suffix="", mode="multi")
    return StreamSpec(Target(snap, 4, Cursor(0, 4)), Prompt(ctx, "fast", "k"), **kw)  # type: ignore[arg-type]


async def test_a_foreground_call_closes_a_prefetch_holding_the_only_slot(tmp_path: Path) -> None:
    launcher = _launcher(tmp_path)
    prefetch = await launcher.launch(_spec(live=False, speculative=True))
    foreground = await launcher.launch(_spec())
    assert prefetch.aborted and not foreground.aborted
    await launcher.aclose()


async def test_background_work_still_gives_way_only_to_foreground(tmp_path: Path) -> None:
    launcher = _launcher(tmp_path)
    first = await launcher.launch(_spec(live=False, speculative=True))
    with pytest.raises(RateLimitSkip):  # a second prefetch does not close the first
        await launcher.launch(_spec(live=False, speculative=True))
    assert not first.aborted
    await launcher.aclose()


async def test_a_stream_someone_waits_for_is_not_closed(tmp_path: Path) -> None:
    launcher = _launcher(tmp_path)
    waited = await launcher.launch(_spec())
    waited.waiters += 1
    with pytest.raises(RateLimitSkip):
        await launcher.launch(_spec(live=False))
    assert not waited.aborted
    await launcher.aclose()


async def test_a_stream_closed_before_its_task_ran_releases_its_permit(tmp_path: Path) -> None:
    launcher = _launcher(tmp_path)
    flight = await launcher.launch(_spec())
    launcher.abort(flight)  # at once: the reader task has not started
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert flight.final.done() and flight.final.result().aborted
    gov = launcher.governance
    assert isinstance(gov, Governance)
    assert gov.limits_for("openai:127.0.0.1:slow:fast").in_flight == 0  # the slot came back
    assert launcher.live_stream("file:///a.py") is None
    await launcher.aclose()


class StallingProvider(SlowProvider):
    """Streams the start of a line, then stalls (a first line that never completes)."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        for piece in ("total", " =", " compute", "(a", ","):
            yield StreamChunk(piece)
        await asyncio.sleep(3600)
        yield StreamChunk(" b)\n")


async def test_the_answer_budget_counts_from_the_request_arrival(tmp_path: Path) -> None:
    """A request that arrived a minute before its stream started (its budget is 30 s) is
    answered with the text so far at once; the same budget counted from the stream's start
    keeps it waiting for the first line."""
    from dataclasses import replace

    from lsp_assist.telemetry.latency import StageClock

    launcher = _launcher(tmp_path, StallingProvider())
    launcher.config.tiers["fast"] = replace(launcher.config.tiers["fast"], answer_budget_ms=30_000)
    late = await launcher.launch(_spec(), StageClock(start=time.perf_counter() - 60.0))
    # Spent already: the first word, as soon as the next token shows it is whole.
    assert await asyncio.wait_for(asyncio.shield(late.quick), 10) == "total"
    assert late.early
    await launcher.aclose()
    other = _launcher(tmp_path / "fresh", StallingProvider())
    other.config.tiers["fast"] = replace(other.config.tiers["fast"], answer_budget_ms=30_000)
    fresh = await other.launch(_spec(), StageClock())
    await asyncio.sleep(0.3)  # stalled mid-line, the budget not spent: nothing shown yet
    assert not fresh.quick.done()
    await other.aclose()
