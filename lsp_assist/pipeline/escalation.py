"""Escalation: the quality tier's fuller completion at one position, on request.

The `lspAssist.escalate` command (and `lspAssist.recompute`, which bypasses the cache)
asks the quality tier with its own larger context budget, in multi-line mode, stores the
answer in the cache and the typing-through index so the next inline-completion request at
that position returns it, and reports progress. When no quality model may be used (not
configured, refused by policy) the offline engine answers instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from lsp_assist.domain import Cursor, Outcome, Suggestion
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.telemetry.latency import StageClock

if TYPE_CHECKING:
    from lsp_assist.pipeline.engine import CompletionEngine


async def escalate(
    engine: CompletionEngine,
    uri: str,
    cursor: Cursor,
    *,
    recompute: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Suggestion:
    """Ask the quality tier for a fuller completion at `cursor`, store it, return it."""
    clock = StageClock()
    c = engine.c
    snap = c.store.snapshot(uri)
    if snap is None:
        return Suggestion("", Outcome.EMPTY, "quality")
    if engine.excluded(snap):
        return Suggestion("", Outcome.EXCLUDED, "quality")
    tier = engine.config.tier("quality")
    offset = engine.offset_of(uri, cursor)
    ctx = engine.build_context(uri, cursor, tier, snap)
    if ctx is None:
        return Suggestion("", Outcome.EMPTY, "quality")
    ctx = replace(ctx, mode="multi")
    clock.lap("context")
    key = ctx.key("quality", c.providers["quality"].model if "quality" in c.providers else "")
    if not recompute:
        cached = c.cache.get(key)
        if cached:
            c.typing.remember(uri, snap.text, offset, cached, "quality")
            return Suggestion(cached, Outcome.CACHE, "quality", stages=clock.finish())
    if progress:
        progress("asking the quality model")
    if engine.is_offline("quality"):
        # No quality model (not configured, or refused by policy): the offline engine
        # answers, which is no model call and so passes no quota and writes no audit line.
        text = await c.offline_suggest(ctx)
        return Suggestion(
            text, Outcome.FALLBACK if text else Outcome.EMPTY, "offline", provider="offline",
            stages=clock.finish(),
        )  # fmt: skip
    req = CompletionRequest(uri, cursor, invoked=True, feature="escalation", tier="quality")
    flight = await engine.start_stream(req, "quality", tier, ctx, key, snap, offset, clock, live=False)
    result = await asyncio.shield(flight.final)
    if result.error is not None:
        raise result.error
    text = result.text
    if progress:
        progress("done")
    if text:
        c.cache.put(key, text)
        c.typing.remember(uri, snap.text, offset, text, "quality")
    stages = clock.finish()
    engine.c.stats.record(
        "model" if text else "empty", "quality", stages, feature="escalation", model_call=True
    )
    return Suggestion(
        text,
        Outcome.MODEL if text else Outcome.EMPTY,
        "quality",
        provider=c.providers["quality"].name,
        model=c.providers["quality"].model,
        stages=stages,
    )
