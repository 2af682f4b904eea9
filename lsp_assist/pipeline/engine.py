"""The completion pipeline: one function from (document, cursor) to a suggestion.

`CompletionEngine.complete` runs the stages of `pipeline.stages` in order, cheapest first,
under the request's deadline, and records the latency stages and outcome of every path:

    gate -> typing_through -> debounce -> typed_meanwhile -> prompt -> cached -> attach
         -> generate -> answer

Where each concern lives:
- `stages/`: the stage functions, each over one `RequestState` (`state.py`);
- `prompt.py` `PromptBuilder`: exclusion, context, redaction, cache key (every feature);
- `launcher.py` `StreamLauncher`: request building, admission, the one-slot rule, the
  live-stream registry, abort;
- `tiers.py` `TierRunner`: the chain, retry, hedge, the offline floor;
- `answers.py` `AnswerStore`: the cache, typing-through memory, `suggestionReady`, the
  last latency and tier;
- `prefetch.py`, `escalation.py`: the other features, built on the same parts.
This module only wires them and owns the deadline.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from lsp_assist.after_reply import after_reply
from lsp_assist.config.schema import Config
from lsp_assist.domain import Cursor, Outcome, Suggestion
from lsp_assist.pipeline import choices
from lsp_assist.pipeline.answers import AnswerStore, ReadyListener
from lsp_assist.pipeline.components import Components
from lsp_assist.pipeline.escalation import Escalator
from lsp_assist.pipeline.launcher import StreamLauncher
from lsp_assist.pipeline.prefetch import Prefetcher
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.pipeline.stages import STAGES, Services
from lsp_assist.pipeline.state import RequestState
from lsp_assist.pipeline.tiers import TierRunner
from lsp_assist.telemetry.latency import StageClock

log = logging.getLogger(__name__)


class CompletionEngine:
    """Owns the request path; built once by `lsp_assist.server` with every component."""

    def __init__(self, config: Config, parts: Components) -> None:
        self.config = config
        self.c = parts
        self.prompts = PromptBuilder(
            config, parts.store, parts.context, parts.governance, parts.providers, parts.epoch
        )
        self.answers = AnswerStore(parts.cache, parts.typing, parts.store, parts.epoch)
        self.launcher = StreamLauncher(
            config,
            parts.providers,
            parts.governance,
            self.answers,
            parts.stats,
            assembler=parts.assembler,
            provider_key=parts.provider_key,
            offline=parts.offline,
        )
        self.tiers = TierRunner(
            config,
            self.launcher,
            self.answers,
            self.prompts,
            parts.governance,
            chain=parts.tier_chain,
            offline_answer=parts.offline_suggest,
        )
        self.prefetcher = Prefetcher(config, self.prompts, self.launcher, parts.scheduler.pause_left)
        self.escalator = Escalator(
            parts.store, self.prompts, self.answers, self.launcher, parts.stats, parts.offline_suggest
        )
        self.services = Services(
            config=config,
            store=parts.store,
            scheduler=parts.scheduler,
            prompts=self.prompts,
            answers=self.answers,
            launcher=self.launcher,
            tiers=self.tiers,
            prefetcher=self.prefetcher,
        )
        self.on_status: Callable[[dict[str, Any]], None] | None = None
        # Invoked requests' alternatives, gathered after the answer (`choices`).
        self.choice_book = choices.ChoiceBook()
        #: (uri, version, cursor, items): an Invoked answer's choices are ready at `cursor`.
        self.on_choices_ready: Callable[[str, int, Cursor, int], None] | None = None

    # ------------------------------------------------------------------ hooks and figures

    @property
    def on_suggestion_ready(self) -> ReadyListener | None:
        return self.answers.on_suggestion_ready

    @on_suggestion_ready.setter
    def on_suggestion_ready(self, listener: ReadyListener | None) -> None:
        self.answers.on_suggestion_ready = listener

    @property
    def last_latency_ms(self) -> float:
        return self.answers.last_latency_ms

    @property
    def hedges(self) -> int:
        return self.tiers.hedges

    # ------------------------------------------------------------------ public API

    def note_change(self, uri: str) -> None:
        self.c.scheduler.note_change(uri)
        self.launcher.note_change(uri)

    def forget(self, uri: str) -> None:
        self.c.scheduler.forget(uri)
        self.answers.forget(uri)
        self.launcher.forget(uri)
        self.prefetcher.forget(uri)
        self.choice_book.forget(uri)
        # The prompt memo keeps the document's prompts: a reopen as it was reuses them.

    async def complete(self, req: CompletionRequest) -> Suggestion:
        """Answer one inline-completion request; never raises except CancelledError."""
        clock = StageClock()
        outcome = Outcome.EMPTY
        result = Suggestion(text="", outcome=Outcome.EMPTY, tier=req.tier)
        # A timer that cancels this task at the deadline: cheaper than wait_for's extra task.
        task = asyncio.current_task()
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            if task is not None:
                task.cancel()

        timer = asyncio.get_running_loop().call_later(self.config.completion.deadline_ms / 1000.0, expire)
        state = RequestState(req, clock)
        try:
            try:
                result = await self._run_stages(state)
                if req.invoked and result.text and not result.typed:
                    # Never a wait: the answer goes at its first line like an Automatic one.
                    result.text, result.alternatives = self._choices_now(state, result.text)
            except asyncio.CancelledError:
                if not expired:
                    raise
                if task is not None and hasattr(task, "uncancel"):
                    task.uncancel()
                raise asyncio.TimeoutError from None
            finally:
                timer.cancel()
            if result.text and not self._admitted(state):
                result = Suggestion("", Outcome.STALE, req.tier)  # the policy changed meanwhile
            outcome = result.outcome
        except asyncio.TimeoutError:
            log.warning(
                "inline completion: deadline of %d ms reached; answering empty",
                self.config.completion.deadline_ms,
            )
            outcome = Outcome.EMPTY
            result = Suggestion(text="", outcome=outcome, tier=req.tier)
        except asyncio.CancelledError:
            self._record(Outcome.CANCELLED, req, clock)
            raise
        except Exception:  # the request path must answer whatever happens below
            log.exception("inline completion failed; answering empty")
            outcome = Outcome.ERROR
            result = Suggestion(text="", outcome=outcome, tier=req.tier)
        stages = clock.finish()
        result.stages = stages
        model_call, tier = result.outcome == Outcome.MODEL, result.tier

        def bookkeeping() -> None:  # nothing in the reply depends on it
            self.c.stats.record(outcome.value, req.tier, stages, feature=req.feature, model_call=model_call)
            self.answers.answered(stages.get("total", 0.0), tier, outcome.value)

        after_reply(bookkeeping)
        return result

    def _admitted(self, state: RequestState) -> bool:
        """The answer's input was read under the current policy epoch (`governance/epoch.py`):
        an answer from a memory or a stream of an older boundary is never returned."""
        return state.has_target and self.answers.admits(state.target)

    async def _run_stages(self, state: RequestState) -> Suggestion:
        services = self.services
        for stage in STAGES:
            answer = await stage(state, services)
            if answer is not None:
                return answer
        raise AssertionError("the answer stage always answers")  # pragma: no cover

    async def escalate(
        self,
        uri: str,
        cursor: Cursor,
        *,
        recompute: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Suggestion:
        """Ask the quality tier for a fuller completion at `cursor`, store it, return it."""
        return await self.escalator.escalate(uri, cursor, recompute=recompute, progress=progress)

    def _choices_now(self, s: RequestState, primary: str) -> tuple[str, list[str]]:
        """An Invoked answer and the alternatives that exist now: the choices gathered
        before at this version and cursor (the user cycles: item 1 stays the one first
        shown), else the first line of a multi-line primary, with the rest gathered in the
        background and announced (`on_choices_ready`)."""
        limit = self.config.completion.invoked_choices
        if limit <= 1:
            return primary, []
        t = s.target
        key = (t.uri, t.snap.version, t.cursor, t.epoch)
        stored = self.choice_book.get(key, primary)
        if stored is not None:
            return stored[0], list(stored[1])[: limit - 1]
        now = choices.distinct_choices(primary, (choices.first_line(primary),), limit)[1:]
        if self.choice_book.start(key):
            task = asyncio.get_running_loop().create_task(self._gather_choices(s, primary, now))
            self.launcher.track(task)
        return primary, now

    async def _gather_choices(self, s: RequestState, primary: str, now: list[str]) -> None:
        """Gather an Invoked answer's other choices behind it, cheapest first (the offline
        rules, then the stream's fuller answer, then a second sample, within
        `invoked_choices_wait_ms`), and announce the set each time it grows."""
        t = s.target
        key = (t.uri, t.snap.version, t.cursor, t.epoch)
        completion = self.config.completion
        found: dict[str, str] = {}
        shown = len(now)

        def publish() -> None:
            nonlocal shown
            # Kept in the order of preference whatever order they arrive in.
            candidates = ("fuller", "sample", "first_line", "offline")
            found["first_line"] = choices.first_line(primary)
            alternatives = choices.distinct_choices(
                primary, (found.get(c, "") for c in candidates), completion.invoked_choices
            )[1:]
            if len(alternatives) <= shown or not self.answers.current(t):
                return
            shown = len(alternatives)
            self.choice_book.put(key, primary, alternatives)
            listener = self.on_choices_ready
            if listener is not None:
                listener(t.uri, t.snap.version, t.cursor, 1 + len(alternatives))

        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + max(0.0, completion.invoked_choices_wait_ms / 1000.0)
            if s.has_prompt:
                found["offline"] = await self.c.offline_suggest(s.prompt.context)
                publish()
            found["fuller"] = await choices.fuller_text(s.flight, deadline - loop.time())
            publish()
            if s.has_prompt:
                found["sample"] = await choices.second_sample(
                    self.launcher,
                    t,
                    s.prompt,
                    completion.invoked_sample_temperature,
                    deadline - loop.time(),
                )
                publish()
        except Exception as exc:  # choices are extras: the answer was already given
            log.debug("gathering an Invoked answer's choices failed: %s", exc)
        finally:
            self.choice_book.done(key)

    # ------------------------------------------------------------------ bookkeeping

    def _record(
        self, outcome: Outcome, req: CompletionRequest, clock: StageClock, *, model_call: bool = False
    ) -> dict[str, float]:
        stages = clock.finish()
        self.c.stats.record(outcome.value, req.tier, stages, feature=req.feature, model_call=model_call)
        return stages

    async def aclose(self) -> None:
        await self.launcher.aclose()
