"""`StreamLauncher`: starts model streams and owns every stream that is still running.

`launch(spec)` builds the `ModelRequest` from the prompt and the tier, applies the
one-slot rule of the provider (`Provider.single_slot`), asks governance to admit the
call, and starts a reader task (`inflight.read_stream`). It keeps:
- the live-stream registry: the one stream per document a later request may attach to;
- the set of active streams (the one-slot rule looks at it);
- the background tasks (cancelled at shutdown).
When a stream ends it releases the permit with one `CallRecord` and hands a full answer
to the `AnswerStore`. A stream whose provider cut the prompt to answer in time (the embedded
model after a jump) is followed by a refinement: the same request on the whole prompt, in the
background, whose answer replaces the one given (issue 26: the longer suggestion came from the
cut prompt; HumanEval exact match 15.0% vs 25.0%, docs/embedded-latency.md). `abort`
closes a stream now (the HTTP response is closed, so the model stops generating);
`abort_later` after a short grace unless someone waits on it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from lsp_assist.config.schema import Config
from lsp_assist.domain import ModelRequest, PromptContext, Usage
from lsp_assist.errors import PolicyError, RateLimitSkip, StreamAborted
from lsp_assist.governance.record import CallRecord
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.inflight import Anchor, Assembler, InflightStream, StreamResult, read_stream
from lsp_assist.pipeline.ports import GovernancePort, Permit
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import Target
from lsp_assist.providers.base import Provider
from lsp_assist.telemetry.latency import StageClock
from lsp_assist.telemetry.stats import StatsCollector

log = logging.getLogger(__name__)

_TAIL = 2048
_HEAD = 512
# Features whose multi-line answers are read on into the enrichment budget.
_ENRICHED = ("completion", "warmup")


_RELEASE_WAIT_S = 0.05  # how long a foreground call waits for closed streams to let go
# A rewrite that finds the model busy waits for the stream holding it, this many times at
# most (each ends with that stream or with the user acting): a bound, not a timer.
_REFINE_TRIES = 8


class ModelBusy(PolicyError):
    """The one-slot model is busy with a stream someone waits for; speculative work yields."""


def _background(flight: InflightStream) -> bool:
    """Nobody waits for it: a prefetch, or an enrichment whose first answer was delivered."""
    if flight.done or flight.waiters:
        return False
    return flight.speculative or (flight.answered and flight.quick.done())


def anchor_of(target: Target) -> Anchor:
    text, offset = target.snap.text, target.offset
    return Anchor(
        uri=target.uri,
        version=target.snap.version,
        before_len=offset,
        before_tail=text[max(0, offset - _TAIL) : offset],
        after_head=text[offset : offset + _HEAD],
    )


@dataclass(frozen=True)
class StreamSpec:
    """One model call to start: what to ask, for whom, and how it is accounted."""

    target: Target
    prompt: Prompt
    feature: str = "completion"
    max_tokens: int | None = None
    live: bool = True  # registered as the document's live stream (attachable)
    speculative: bool = False  # nobody waits for it yet: it yields the one slot
    fallback_from: str | None = None
    retries: int = 0
    hedged: bool = False
    # Remember the answer for typing-through at the target; False caches only (precompute
    # for a file that is not open: no one types along with it yet).
    remember: bool = True
    # An extra sample for an Invoked request's choices (`choices.second_sample`): its own
    # temperature, and its text is neither cached nor remembered (it is not the answer).
    temperature: float | None = None
    sample: bool = False
    # A refinement (see `StreamLauncher.refine`): the answer the editor was given from a
    # prompt the provider cut; this stream reads the whole prompt and its answer replaces it.
    shown: str | None = None

    @property
    def tier(self) -> str:
        return self.prompt.tier


class StreamLauncher:
    def __init__(
        self,
        config: Config,
        providers: Mapping[str, Provider],
        governance: GovernancePort,
        answers: AnswerStore,
        stats: StatsCollector,
        *,
        assembler: Callable[[PromptContext], Assembler],
        provider_key: Callable[[str], str],
        offline: Provider | None = None,
    ) -> None:
        self.config = config
        self.providers = providers
        self.governance = governance
        self.answers = answers
        self.stats = stats
        self.assembler = assembler
        self.provider_key = provider_key
        self.offline = offline
        self._live: dict[str, InflightStream] = {}
        self._active: set[InflightStream] = set()  # every stream still reading
        # Speculative streams (prefetch) by prompt key, until their answer is in the cache: a
        # request for that very prompt waits for it instead of paying for a second call.
        self._speculative: dict[str, InflightStream] = {}
        # Refinements still running, by document (`refine`): not attachable, so apart from `_live`.
        # Refinements waiting for the user's rest, by document: a new stream ends the wait.
        self._refine_rests: dict[str, asyncio.Future[None]] = {}
        self._refining: dict[str, InflightStream] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self.aborted = 0

    # -- what may run --------------------------------------------------------------------------

    def provider(self, tier: str) -> Provider | None:
        return self.providers.get(tier)

    def busy(self, provider: Provider) -> bool:
        """A stream of `provider` is still reading (for a one-slot provider: it has the slot)."""
        slot = _slot(provider)
        return any(_slot(f.provider) is slot and not f.done for f in self._active)

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
            self.end_refine_rest(spec.target.uri)  # the user is not resting: a request came
        if provider.single_slot:
            # Providers sharing one engine (the quality tier on the typing provider's rewrite
            # model, `strong_model.StrongModel`) share its one slot.
            slot = _slot(provider)
            busy = [f for f in self._active if _slot(f.provider) is slot and not f.done]
            if spec.speculative and spec.shown is not None:
                # The rewrite the user rests for outranks a guess at the next suggestion:
                # a prefetch holding the slot at the rest used to starve it for good.
                for guess in [f for f in busy if _guess(f)]:
                    self.abort(guess)
                busy = [f for f in busy if not _guess(f)]
            if spec.speculative and busy:
                # Speculative work never takes the only slot from a stream someone waits for.
                raise ModelBusy("the local model is busy; prefetch skipped")
            # A one-slot server (the embedded llama.cpp) would interrupt the older stream
            # itself when this one arrives and the older would read as a failure: close it
            # here first, as the cancellation it is.
            for other in busy:
                self.abort(other)
        permit = await self._admit(spec, provider)
        ctx = spec.prompt.context
        log.debug(
            "stream: tier=%s feature=%s live=%s speculative=%s mode=%s",
            tier_name,
            spec.feature,
            spec.live,
            spec.speculative,
            ctx.mode,
        )
        if clock is not None:
            clock.lap("queue")
        request, enrich = self.request_for(spec)
        flight = InflightStream(anchor=anchor_of(spec.target), tier=tier_name, context=ctx)
        flight.provider = provider
        flight.speculative = spec.speculative
        flight.refinement = spec.shown is not None
        self._active.add(flight)
        uri = spec.target.uri
        key = spec.prompt.key
        if spec.speculative and key:
            self._speculative[key] = flight
        if spec.live:
            old = self._live.get(uri)
            if old is not None and old is not flight and not old.done:
                self.abort(old)
            self._live[uri] = flight
        flight.started = time.perf_counter()
        # The answer budget is what the user waits: it counts from the request's arrival
        # (its debounce and context build included), on the loop's clock for the timer.
        answer_from: float | None = None
        if clock is not None:
            answer_from = asyncio.get_running_loop().time() - (flight.started - clock.started)
        tier = self.config.tier(tier_name)
        total_ms = tier.total_timeout_ms
        if enrich:
            total_ms = max(total_ms, self.config.completion.enrichment_timeout_ms)

        def finish(
            outcome: str, usage: Usage | None, stages: dict[str, float], err: BaseException | None
        ) -> None:
            """Release the governance permit: breaker verdict, quota tokens, the audit line."""
            permit.finish(
                CallRecord(
                    outcome,
                    model=provider.model,
                    endpoint_host=provider.endpoint_host,
                    provider=provider.name,
                    usage=usage,
                    stages=stages,
                    request_bytes=ctx.size,
                    error=err,
                    fallback_from=spec.fallback_from,
                    hedged=spec.hedged,
                    retries=spec.retries,
                    redactions=spec.prompt.redactions,
                    http_status=flight.http_status,
                    language=ctx.language,
                )
            )

        if spec.remember and not spec.speculative and not spec.sample and self.config.completion.grow:
            flight.on_grow = self._grower(flight, spec, tier_name)

        async def run() -> None:
            try:
                await read_and_store()
            finally:
                # Only now, with the answer stored (or none to store), may a request for this
                # prompt stop finding the stream: no moment where neither has it.
                self._drop_speculative(key, flight)

        async def read_and_store() -> None:
            result: StreamResult | None = None
            try:
                result = await read_stream(
                    flight,
                    provider.stream(request),
                    self.assembler(ctx),
                    # The request stops waiting at the first-token timeout and falls back; the
                    # stream itself may go on (up to the total timeout) to fill the cache.
                    first_token_timeout_s=tier.total_timeout_ms / 1000.0,
                    total_timeout_s=total_ms / 1000.0,
                    quick_on_first_line=True,
                    on_first_token=flight.mark_first_token,
                    # Answer within the tier's budget with a partial line, then keep going.
                    answer_budget_s=0.0 if spec.speculative else tier.answer_budget_ms / 1000.0,
                    answer_from=answer_from,
                )
            except asyncio.CancelledError:
                finish("cancelled", None, {}, None)
                raise
            finally:
                self._active.discard(flight)
                if flight.wasted_tokens:
                    self.stats.record_waste(flight.wasted_tokens)
                if self._live.get(uri) is flight and flight.done:
                    self._live.pop(uri, None)
                if self._refining.get(uri) is flight:
                    self._refining.pop(uri, None)
            err = result.error
            stages = dict(result.stages)
            stages["total"] = (time.perf_counter() - flight.started) * 1000.0
            finish("error" if err is not None else "model", result.usage, stages, err)
            if err is not None or spec.sample:
                return
            quick = flight.quick.result() if flight.quick.done() and not flight.quick.exception() else ""
            if result.text:
                if spec.remember:
                    self.answers.stream_ended(
                        spec.prompt.key,
                        spec.target,
                        result.text,
                        tier_name,
                        shown=quick if spec.shown is None else spec.shown,
                        replaces=spec.shown is not None,
                    )
                else:
                    self.answers.cache.put(spec.prompt.key, result.text)
            if self._wants_refinement(spec, flight):
                await self.refine(spec, result.text or quick, rest=_refine_rest(flight.provider))

        def settle(task: asyncio.Task[None]) -> None:
            """A task cancelled before it ran never reaches `run`'s own cleanup: release the
            permit (idempotent) and end the flight here, or the slot would leak."""
            if not task.cancelled() or flight.done:
                return
            finish("cancelled", None, {}, None)
            self._active.discard(flight)
            self._drop_speculative(key, flight)
            if self._live.get(uri) is flight:
                self._live.pop(uri, None)
            flight.aborted = True
            if not flight.quick.done():
                flight.quick.set_exception(StreamAborted("the stream was closed before it started"))
                flight.quick.exception()  # retrieved: nobody need wait on a closed stream
            flight.final.set_result(StreamResult("", Usage(), {}, aborted=True))

        flight.task = asyncio.get_running_loop().create_task(run())
        flight.task.add_done_callback(settle)
        self.track(flight.task)
        return flight

    def _wants_refinement(self, spec: StreamSpec, flight: InflightStream) -> bool:
        """The provider answered `spec` from a cut prompt, or has a stronger model to rewrite
        its answers with (`refine_after_s`), for the user still there."""
        return (
            (flight.prompt_cut > 0 or _refine_rest(flight.provider) is not None)
            and not flight.aborted
            and spec.shown is None
            and spec.remember
            and not spec.speculative
            and spec.feature == "completion"
            and self.answers.current(spec.target)
        )

    async def refine(self, spec: StreamSpec, shown: str, rest: float | None = None) -> InflightStream | None:
        """Ask `spec` again on the whole prompt, after its answer `shown` came from a prompt
        cut to the provider's budget (the first answer's latency at a fresh position): the
        longer suggestion (`suggestionReady`), the cache and the typing-through memory then
        hold what the whole context gives. It runs as background work: it never takes the
        one slot from a request (any request closes it; the provider reads its prompt in
        small batches) and a request for the same prompt waits for it. It is not the
        document's live stream: a key typed meanwhile gets its own (cut) stream at once
        instead of attaching to one still reading ~1 s of prompt. `refining(uri)` finds it
        from the moment the stream it follows has ended.

        `rest` (a provider with a stronger refine model, seconds): the refinement starts only
        after the user has rested that long with the document unchanged, so a typing burst
        never starts one. It then takes the slot from a prefetch, and waits for a stream
        someone waits for (and tries again) as long as the user still rests there."""
        uri = spec.target.uri
        if rest is not None and not await self._rested(spec.target, rest):
            return None
        again = replace(spec, shown=shown, speculative=True, live=False)
        while True:
            try:
                flight = await self.launch(again)
                break
            except ModelBusy:
                # A stream someone waits for holds the one slot: the rewrite waits for it
                # and tries again while the user still rests there.
                if rest is None or not await self._slot_freed(spec.target, again):
                    log.debug("no refinement: the model stayed busy until the rest ended")
                    return None
            except PolicyError as exc:
                log.debug("no refinement: %s", exc)
                return None
        if not flight.done:
            self._refining[uri] = flight
        return flight

    async def _rested(self, target: Target, rest: float) -> bool:
        """Wait `rest` seconds of the user resting at `target`: False when a request for the
        document or an edit came first (`end_refine_rest`), or the answer is gone."""
        uri = target.uri
        self.end_refine_rest(uri)
        waiting = asyncio.get_running_loop().create_future()
        self._refine_rests[uri] = waiting
        try:
            await asyncio.wait_for(asyncio.shield(waiting), rest)
            return False  # a newer request for the document came first
        except asyncio.TimeoutError:
            pass
        finally:
            if self._refine_rests.get(uri) is waiting:
                del self._refine_rests[uri]
        live = self._live.get(uri)
        if live is not None and not live.done:
            return await self._slot_freed(target, None)
        return self.answers.current(target)

    async def _slot_freed(self, target: Target, spec: StreamSpec | None) -> bool:
        """Wait until no stream someone waits for holds the model a rewrite at `target` needs
        (the document's own live stream, or the provider's one slot); False when the user
        acted meanwhile (a request or an edit for the document) or the answer is gone."""
        uri = target.uri
        waiting = asyncio.get_running_loop().create_future()
        self._refine_rests[uri] = waiting
        try:
            for _ in range(_REFINE_TRIES):
                provider = self.providers.get(spec.tier) if spec is not None else None
                blockers = [
                    f
                    for f in self._active
                    if not f.done
                    and not _guess(f)
                    and (
                        (provider is not None and _slot(f.provider) is _slot(provider))
                        or f is self._live.get(uri)
                    )
                ]
                if not blockers:
                    return not waiting.done() and self.answers.current(target)
                if any(f.anchor.uri != uri for f in blockers):
                    return False  # the user works in another document: not resting here
                finals = [asyncio.ensure_future(asyncio.shield(f.final)) for f in blockers]
                await asyncio.wait([waiting, *finals], return_when=asyncio.FIRST_COMPLETED)
                for fut in finals:
                    fut.cancel()
                if waiting.done() or not self.answers.current(target):
                    return False
            return False
        finally:
            if self._refine_rests.get(uri) is waiting:
                del self._refine_rests[uri]

    async def _admit(self, spec: StreamSpec, provider: Provider) -> Permit:
        """Governance's permit. A foreground call never waits behind background work: when
        the provider's concurrency cap is taken by prefetch or by an enrichment nobody waits
        for, those streams are closed and admission is asked again, once."""
        tier, key = spec.tier, self.provider_key(spec.tier)
        try:
            return await self.governance.admit_async(spec.feature, tier, key)
        except RateLimitSkip:
            background = [f for f in self._active if _slot(f.provider) is _slot(provider) and _background(f)]
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
        waiting = self._refine_rests.pop(uri, None)
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    # -- the registry --------------------------------------------------------------------------

    def live_stream(self, uri: str) -> InflightStream | None:
        return self._live.get(uri)

    def refining(self, uri: str) -> InflightStream | None:
        """The refinement running for the document's last answer (`refine`), if any."""
        return self._refining.get(uri)

    def speculative_for(self, key: str) -> InflightStream | None:
        """The speculative stream (prefetch) computing the answer to this prompt, until the
        answer is in the cache."""
        return self._speculative.get(key)

    def _drop_speculative(self, key: str, flight: InflightStream) -> None:
        if self._speculative.get(key) is flight:
            del self._speculative[key]

    def note_change(self, uri: str) -> None:
        """The document changed: a refinement waiting for the user's rest gives up, and one
        running on a provider's refine model (seconds of both cores for an answer at a
        version now gone) is closed. A refinement by the main model itself runs on: it also
        fills that model's cache with the whole prompt for the next key."""
        self.end_refine_rest(uri)
        flight = self._refining.get(uri)
        if flight is not None and not flight.done and _refine_rest(flight.provider) is not None:
            self.abort(flight)

    def refine_waiting(self, uri: str) -> bool:
        """A refinement of the document's last answer waits for the user's rest (`refine`)."""
        return uri in self._refine_rests

    def forget(self, uri: str) -> None:
        self.end_refine_rest(uri)
        for flight in (self._live.pop(uri, None), self._refining.pop(uri, None)):
            if flight is not None:
                self.abort(flight)

    def abort(self, flight: InflightStream) -> None:
        if flight.done:
            return
        flight.abort()
        self.aborted += 1

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
        self._background.add(task)
        task.add_done_callback(self._reap)

    def _reap(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background stream failed: %s", task.exception())

    async def aclose(self) -> None:
        for flight in list(self._live.values()):
            flight.abort()
        for task in list(self._background):
            task.cancel()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)


def _slot(provider: object) -> object:
    """What a one-slot provider's streams queue on: its `slot` (the engine's owner, for a
    view sharing another provider's engine), else the provider itself."""
    return getattr(provider, "slot", None) or provider


def _guess(flight: InflightStream) -> bool:
    """A speculative stream that is not a rewrite: a prefetch of the next suggestion."""
    return flight.speculative and not flight.refinement


def _refine_rest(provider: object) -> float | None:
    """The rest after which `provider`'s stronger model rewrites an answer, or None when it
    has none (`LocalProvider.refine_after_s`; other providers have no such attribute)."""
    rest = getattr(provider, "refine_after_s", None)
    return float(rest) if isinstance(rest, (int, float)) else None
