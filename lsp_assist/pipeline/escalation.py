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

from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor, Outcome, Suggestion
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.launcher import StreamLauncher, StreamSpec
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.pipeline.tiers import OfflineAnswer
from lsp_assist.telemetry.latency import StageClock
from lsp_assist.telemetry.stats import StatsCollector

TIER = "quality"


class Escalator:
    def __init__(
        self,
        store: DocumentStore,
        prompts: PromptBuilder,
        answers: AnswerStore,
        launcher: StreamLauncher,
        stats: StatsCollector,
        offline_answer: OfflineAnswer,
    ) -> None:
        self.store = store
        self.prompts = prompts
        self.answers = answers
        self.launcher = launcher
        self.stats = stats
        self.offline_answer = offline_answer

    async def escalate(
        self,
        uri: str,
        cursor: Cursor,
        *,
        recompute: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Suggestion:
        """Ask the quality tier for a fuller completion at `cursor`, store it, return it."""
        clock = StageClock()
        snap = self.store.snapshot(uri)
        if snap is None:
            return Suggestion("", Outcome.EMPTY, TIER)
        if self.prompts.excluded(snap):
            return Suggestion("", Outcome.EXCLUDED, TIER)
        target = self.prompts.target(snap, cursor)
        prompt = self.prompts.for_open(uri, cursor, TIER, mode="multi")
        if prompt is None:
            return Suggestion("", Outcome.EMPTY, TIER)
        clock.lap("context")
        if not recompute:
            cached = self.answers.cached(prompt.key)
            if cached:
                self.answers.remember(target, cached, TIER)
                return Suggestion(cached, Outcome.CACHE, TIER, stages=clock.finish())
        if progress:
            progress("asking the quality model")
        if self.launcher.is_offline(TIER):
            # No quality model (not configured, or refused by policy): the offline engine
            # answers, which is no model call and so passes no quota and writes no audit line.
            text = await self.offline_answer(prompt.context)
            return Suggestion(
                text, Outcome.FALLBACK if text else Outcome.EMPTY, "offline", provider="offline",
                stages=clock.finish(),
            )  # fmt: skip
        spec = StreamSpec(target, prompt, feature="escalation", live=False)
        flight = await self.launcher.launch(spec, clock)
        result = await asyncio.shield(flight.final)
        if result.error is not None:
            raise result.error
        text = result.text if self.answers.admits(target) else ""  # the policy changed meanwhile
        if progress:
            progress("done")
        self.answers.keep(prompt.key, target, text, TIER)
        stages = clock.finish()
        self.stats.record("model" if text else "empty", TIER, stages, feature="escalation", model_call=True)
        provider = self.launcher.provider(TIER)
        return Suggestion(
            text,
            Outcome.MODEL if text else Outcome.EMPTY,
            TIER,
            provider=provider.name if provider is not None else "",
            model=provider.model if provider is not None else "",
            stages=stages,
        )
