"""`StreamLauncher`: starts model streams and owns every stream that is still running.

`launch(spec)` builds the `ModelRequest` from the prompt and the tier, applies the
one-slot rule of the provider (`Provider.single_slot`), asks governance to admit the
call, and starts the stream's task (`stream_run.StreamRun`, reading with
`inflight.read_stream`). Its parts:
- `StreamRegistry` (`stream_registry.py`): the live stream per document a later request
  may attach to, the active streams (the one-slot rule looks at them), the speculative
  ones by prompt key, the background tasks (cancelled at shutdown);
- `StreamRun` (`stream_run.py`): when a stream ends it releases the permit with one
  `CallRecord` and hands a full answer to the `AnswerStore`;
- `Refinements` (`refinement.py`): a stream whose provider cut the prompt to answer in time
  (the embedded model after a jump) is followed by a refinement on the whole prompt whose
  answer replaces the one given; a provider with a stronger model rewrites after a rest.
`abort` closes a stream now (the HTTP response is closed, so the model stops generating);
`abort_later` after a short grace unless someone waits on it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from lsp_assist.config.schema import Config
from lsp_assist.domain import ModelRequest, PromptContext
from lsp_assist.errors import PolicyError, RateLimitSkip
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.inflight import Assembler, InflightStream, ReadPolicy
from lsp_assist.pipeline.ports import GovernancePort, Permit
from lsp_assist.pipeline.refinement import Refinements
from lsp_assist.pipeline.stream_registry import (
    ModelBusy,
    StreamRegistry,
    is_background,
    is_guess,
    slot_of,
)
from lsp_assist.pipeline.stream_run import StreamRun
from lsp_assist.pipeline.stream_spec import StreamSpec, anchor_of
from lsp_assist.providers.base import Provider
from lsp_assist.telemetry.latency import StageClock
from lsp_assist.telemetry.stats import StatsCollector

if TYPE_CHECKING:
    from typing_extensions import NotRequired, Unpack

log = logging.getLogger(__name__)

# Features whose multi-line answers are read on into the enrichment budget.
_ENRICHED = ("completion", "warmup")

_RELEASE_WAIT_S = 0.05  # how long a foreground call waits for closed streams to let go


class LauncherWiring(TypedDict):
    """How the launcher reaches the rest of the pipeline (the keywords of `StreamLauncher`)."""

    assembler: Callable[[PromptContext], Assembler]  # post-processing for a stream's context
    provider_key: Callable[[str], str]  # a tier's governance key
    offline: NotRequired[Provider | None]  # the offline rule engine, when one serves tiers


class StreamLauncher:
    def __init__(
        self,
        config: Config,
        providers: Mapping[str, Provider],
        governance: GovernancePort,
        answers: AnswerStore,
        stats: StatsCollector,
        **wiring: Unpack[LauncherWiring],
    ) -> None:
        self.config = config
        self.providers = providers
        self.governance = governance
        self.answers = answers
        self.stats = stats
        self.assembler = wiring["assembler"]
        self.provider_key = wiring["provider_key"]
        self.offline = wiring.get("offline")
        self.registry = StreamRegistry()
        self.refinements = Refinements(self.registry, answers, providers, self.launch)

    # -- what may run --------------------------------------------------------------------------

    def provider(self, tier: str) -> Provider | None:
        return self.providers.get(tier)

    def busy(self, provider: Provider) -> bool:
        """A stream of `provider` is still reading (for a one-slot provider: it has the slot)."""
        slot = slot_of(provider)
        return any(slot_of(f.provider) is slot and not f.done for f in self.registry.active)

    def is_offline(self, tier: str) -> bool:
        """The tier is served by the offline rule engine (no model call)."""
        provider = self.providers.get(tier)
        return provider is not None and (provider is self.offline or provider.name == "offline")

    def request_for(self, spec: StreamSpec) -> tuple[ModelRequest, bool]:
        """The provider request for `spec`, and whether it reads on into the enrichment."""
        tier = self.config.tier(spec.tier)
        ctx = spec.prompt.context
        completion = self.config.completion
        enrich = completion.enrichment and spec.feature in _ENRICHED and ctx.mode == "multi"
        budget = spec.max_tokens or tier.max_tokens
        if enrich:
            budget = max(budget, completion.enrichment_max_tokens)
        request = ModelRequest(
            context=ctx,
            max_tokens=budget if enrich else min(budget, ctx.max_tokens or budget),
            temperature=tier.temperature if spec.temperature is None else spec.temperature,
            stop=tuple(dict.fromkeys(ctx.stop)),
            fim_template=tier.fim_template,
            feature=spec.feature,  # type: ignore[arg-type]
            refine=spec.shown is not None,
            draft=spec.shown or "",
        )
        return request, enrich

    # -- starting ------------------------------------------------------------------------------

    async def launch(self, spec: StreamSpec, clock: StageClock | None = None) -> InflightStream:
        """Start the stream; raises `PolicyError` when it may not run (nothing is started)."""
        tier_name = spec.tier
        provider = self.providers.get(tier_name)
        if provider is None:
            raise PolicyError(f"tier {tier_name} is not configured")
        if not self.answers.admits(spec.target):
            # A prefetch, rewrite or fallback whose prompt was built under an older boundary.
            raise PolicyError("the data boundary changed since this prompt was built")
        if not spec.speculative:
            self.refinements.end_rest(spec.target.uri)  # the user is not resting: a request came
        if provider.single_slot:
            self._take_slot(spec, provider)
        permit = await self._admit(spec, provider)
        log.debug(
            "stream: tier=%s feature=%s live=%s speculative=%s mode=%s",
            tier_name,
            spec.feature,
            spec.live,
            spec.speculative,
            spec.prompt.context.mode,
        )
        if clock is not None:
            clock.lap("queue")
        return self._start(spec, provider, permit, clock)

    def _take_slot(self, spec: StreamSpec, provider: Provider) -> None:
        """The one-slot rule: raises `ModelBusy` for speculative work when a stream someone
        waits for holds the slot; else closes the streams holding it."""
        # Providers sharing one engine (the quality tier on the typing provider's rewrite
        # model, `strong_model.StrongModel`) share its one slot.
        busy = self.registry.on_slot(provider)
        if spec.speculative and spec.shown is not None:
            # The rewrite the user rests for outranks a guess at the next suggestion:
            # a prefetch holding the slot at the rest used to starve it for good.
            for guess in [f for f in busy if is_guess(f)]:
                self.abort(guess)
            busy = [f for f in busy if not is_guess(f)]
        if spec.speculative and busy:
            # Speculative work never takes the only slot from a stream someone waits for.
            raise ModelBusy("the local model is busy; prefetch skipped")
        # A one-slot server (the embedded llama.cpp) would interrupt the older stream
        # itself when this one arrives and the older would read as a failure: close it
        # here first, as the cancellation it is.
        for other in busy:
            self.abort(other)

    def _start(
        self, spec: StreamSpec, provider: Provider, permit: Permit, clock: StageClock | None
    ) -> InflightStream:
        """Register the stream and start its task (`StreamRun`)."""
        request, enrich = self.request_for(spec)
        ctx = spec.prompt.context
        flight = InflightStream(anchor=anchor_of(spec.target), tier=spec.tier, context=ctx)
        flight.provider = provider
        flight.speculative = spec.speculative
        flight.refinement = spec.shown is not None
        self.registry.add(flight, spec.prompt.key, spec.target.uri if spec.live else None)
        flight.started = time.perf_counter()
        policy = self._read_policy(spec, enrich, flight.started, clock)
        if spec.remember and not spec.speculative and not spec.sample and self.config.completion.grow:
            flight.on_grow = self._grower(flight, spec, spec.tier)
        run = StreamRun(self, spec, flight, permit, request, policy)
        flight.task = asyncio.get_running_loop().create_task(run.run())
        flight.task.add_done_callback(run.settle)
        self.track(flight.task)
        return flight

    def _read_policy(
        self, spec: StreamSpec, enrich: bool, started: float, clock: StageClock | None
    ) -> ReadPolicy:
        """The stream's timeouts and answer budget (`read_stream`)."""
        tier = self.config.tier(spec.tier)
        total_ms = tier.total_timeout_ms
        if enrich:
            total_ms = max(total_ms, self.config.completion.enrichment_timeout_ms)
        # The answer budget is what the user waits: it counts from the request's arrival
        # (its debounce and context build included), on the loop's clock for the timer.
        answer_from: float | None = None
        if clock is not None:
            answer_from = asyncio.get_running_loop().time() - (started - clock.started)
        return ReadPolicy(
            # The request stops waiting at the first-token timeout and falls back; the
            # stream itself may go on (up to the total timeout) to fill the cache.
            first_token_timeout_s=tier.total_timeout_ms / 1000.0,
            total_timeout_s=total_ms / 1000.0,
            quick_on_first_line=True,
            # Answer within the tier's budget with a partial line, then keep going.
            answer_budget_s=0.0 if spec.speculative else tier.answer_budget_ms / 1000.0,
            answer_from=answer_from,
        )

    async def refine(self, spec: StreamSpec, shown: str, rest: float | None = None) -> InflightStream | None:
        """Ask `spec` again on the whole prompt (`Refinements.refine`)."""
        return await self.refinements.refine(spec, shown, rest)

    async def _admit(self, spec: StreamSpec, provider: Provider) -> Permit:
        """Governance's permit. A foreground call never waits behind background work: when
        the provider's concurrency cap is taken by prefetch or by an enrichment nobody waits
        for, those streams are closed and admission is asked again, once."""
        tier, key = spec.tier, self.provider_key(spec.tier)
        try:
            return await self.governance.admit_async(spec.feature, tier, key)
        except RateLimitSkip:
            slot = slot_of(provider)
            background = [f for f in self.registry.active if slot_of(f.provider) is slot and is_background(f)]
            if spec.speculative or not background:
                raise
        log.debug("closing %d background stream(s) for a foreground call", len(background))
        for flight in background:
            self.abort(flight)
        tasks = [f.task for f in background if f.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=_RELEASE_WAIT_S)  # their permits are released on exit
        return await self.governance.admit_async(spec.feature, tier, key)

    def end_refine_rest(self, uri: str) -> None:
        """A refinement waiting for the user to rest in `uri` gives up (`refine`)."""
        self.refinements.end_rest(uri)

    # -- the registry --------------------------------------------------------------------------

    @property
    def aborted(self) -> int:
        """Streams closed before their end."""
        return self.registry.aborted

    def live_stream(self, uri: str) -> InflightStream | None:
        return self.registry.live.get(uri)

    def refining(self, uri: str) -> InflightStream | None:
        """The refinement running for the document's last answer (`refine`), if any."""
        return self.registry.refining.get(uri)

    def speculative_for(self, key: str) -> InflightStream | None:
        """The speculative stream (prefetch) computing the answer to this prompt, until the
        answer is in the cache."""
        return self.registry.speculative.get(key)

    def note_change(self, uri: str) -> None:
        """The document changed (`Refinements.note_change`)."""
        self.refinements.note_change(uri)

    def refine_waiting(self, uri: str) -> bool:
        """A refinement of the document's last answer waits for the user's rest (`refine`)."""
        return self.refinements.waiting(uri)

    def forget(self, uri: str) -> None:
        self.refinements.forget(uri)
        for flight in (self.registry.live.pop(uri, None), self.registry.refining.pop(uri, None)):
            if flight is not None:
                self.abort(flight)

    def abort(self, flight: InflightStream) -> None:
        self.registry.abort(flight)

    def _grower(self, flight: InflightStream, spec: StreamSpec, tier_name: str) -> Callable[[str], None]:
        """The ghost text grows by whole lines: each time the stream completes a line past
        what was shown, the text up to it goes to `AnswerStore.grew` (at most every 50 ms;
        the stream's end announces the rest anyway)."""
        state = {"shown": 0, "at": 0.0}

        def grow(text: str) -> None:
            quick = flight.quick.result() if flight.quick.done() and not flight.quick.exception() else ""
            cut = text.rfind("\n")
            grown = text[:cut].rstrip() if cut > 0 else ""
            now = time.perf_counter()
            if len(grown) <= max(len(quick), state["shown"]) or not grown.startswith(quick.rstrip()):
                return
            if now - state["at"] < 0.05:
                return
            state["shown"], state["at"] = len(grown), now
            self.answers.grew(spec.target, grown, tier_name)

        return grow

    def abort_later(self, flight: InflightStream, grace_s: float = 0.15) -> None:
        """Abort `flight` after a grace period unless a request is waiting on it by then."""
        flight.orphaned = True

        def check() -> None:
            if not flight.done and flight.waiters == 0 and not flight.answered:
                log.debug("aborting a stream nobody waits for")
                self.abort(flight)

        asyncio.get_running_loop().call_later(grace_s, check)

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep a background task alive until it ends; cancelled at shutdown."""
        self.registry.track(task)

    async def aclose(self) -> None:
        await self.registry.aclose()


__all__ = ["LauncherWiring", "ModelBusy", "StreamLauncher", "StreamSpec", "anchor_of"]
