"""The completion pipeline: one function from (document, cursor) to a suggestion.

Order of work for one request, cheapest first:
1. snapshot the document (version and text) before any await; excluded paths stop here;
2. typing-through / backspace recovery from suggestions already shown (no model call);
3. adaptive debounce (skipped for Invoked), superseded requests return empty at once;
4. context build (tree-sitter trimming, cross-file) and secret redaction;
5. exact cache hit;
6. attach to a live stream of this document the user is typing along with;
7. a model stream on the tier chain (fast -> backup -> offline) under governance, answered
   at its first complete line; the same stream continues in the background into the
   multi-line enrichment, which is cached and announced with `suggestionReady`;
8. version check: a suggestion for text that changed meanwhile is never returned.
Every path records its latency stages and outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from lsp_assist.config.schema import Config, TierConfig
from lsp_assist.domain import (
    Cursor,
    DocumentSnapshot,
    ModelRequest,
    Outcome,
    PromptContext,
    Suggestion,
    Usage,
)
from lsp_assist.errors import (
    PolicyError,
    ProviderError,
)
from lsp_assist.pipeline.components import Components
from lsp_assist.pipeline.escalation import escalate
from lsp_assist.pipeline.inflight import Anchor, InflightStream, StreamResult, read_stream
from lsp_assist.pipeline.prefetch import Prefetcher
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.pipeline.resilience import first_success, hedge_after, retry_delay
from lsp_assist.pipeline.scheduler import Superseded
from lsp_assist.telemetry.latency import StageClock

log = logging.getLogger(__name__)

_TAIL = 2048
_HEAD = 512


def _anchor(snap: DocumentSnapshot, offset: int) -> Anchor:
    text = snap.text
    return Anchor(
        uri=snap.uri,
        version=snap.version,
        before_len=offset,
        before_tail=text[max(0, offset - _TAIL) : offset],
        after_head=text[offset : offset + _HEAD],
    )


class CompletionEngine:
    """Owns the request path; built once by `lsp_assist.server` with every component."""

    def __init__(self, config: Config, parts: Components) -> None:
        self.config = config
        self.c = parts
        self._live: dict[str, InflightStream] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self.prefetcher = Prefetcher(self)
        self.on_suggestion_ready: Callable[[str, int, Cursor], None] | None = None
        self.on_status: Callable[[dict[str, Any]], None] | None = None
        self.last_latency_ms: float = 0.0
        self.hedges = 0
        self._active: set[InflightStream] = set()  # every stream still reading
        self._ttft: dict[str, deque[float]] = {}

    # ------------------------------------------------------------------ public API

    def note_change(self, uri: str) -> None:
        self.c.scheduler.note_change(uri)

    def forget(self, uri: str) -> None:
        self.c.scheduler.forget(uri)
        self.c.typing.forget(uri)
        flight = self._live.pop(uri, None)
        if flight is not None:
            self._abort(flight)
        self.prefetcher.forget(uri)

    def _reparse(self, uri: str) -> None:
        doc = self.c.store.get(uri)
        if doc is not None:
            try:
                doc.tree()
            except Exception as exc:  # the context build falls back to line-based trimming
                log.debug("re-parse failed: %s", exc)

    def excluded(self, snap: DocumentSnapshot) -> str | None:
        """Why this document must not reach a model, or None.

        A file path goes through the data boundary (secret globs, ignore files, policy).
        An `untitled:` buffer has no path and no name that could mark it secret (key-like
        strings in it are still redacted); any other URI without a path fails closed.
        """
        if snap.path is None and snap.uri.startswith("untitled:"):
            return None
        reason: str | None = self.c.governance.boundary.excluded(snap.path)
        return reason

    def _version(self, uri: str) -> int:
        doc = self.c.store.get(uri)
        return -1 if doc is None else int(doc.version)

    def offset_of(self, uri: str, cursor: Cursor) -> int:
        doc = self.c.store.get(uri)
        return 0 if doc is None else int(doc.offset(cursor))

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
        try:
            try:
                result = await self._complete(req, clock)
            except asyncio.CancelledError:
                if not expired:
                    raise
                if task is not None and hasattr(task, "uncancel"):
                    task.uncancel()
                raise asyncio.TimeoutError from None
            finally:
                timer.cancel()
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
        result.stages = self._record(outcome, req, clock, model_call=result.outcome == Outcome.MODEL)
        return result

    # ------------------------------------------------------------------ request path

    async def _complete(self, req: CompletionRequest, clock: StageClock) -> Suggestion:
        c = self.c
        snap = c.store.snapshot(req.uri)
        if snap is None:
            log.info("inline completion for a document that is not open; answering empty")
            return Suggestion("", Outcome.EMPTY, req.tier)
        reason = self.excluded(snap)
        if reason is not None:
            log.info("inline completion: file excluded from models (%s); answering empty", reason)
            return Suggestion("", Outcome.EXCLUDED, req.tier)
        offset = self.offset_of(req.uri, req.cursor)
        ticket = c.scheduler.ticket(req.uri)
        self.prefetcher.drop_unrelated(req.uri, snap, offset)

        hit = c.typing.lookup(req.uri, snap.text, offset)
        if hit is not None:
            clock.lap("queue")
            return Suggestion(hit.text, Outcome.TYPING_THROUGH, hit.tier)

        if not req.invoked:
            # Re-parse while the debounce timer runs: the incremental parse (usually ~1 ms,
            # tens of ms at some edits) then overlaps the wait instead of adding to it.
            asyncio.get_running_loop().call_soon(self._reparse, req.uri)
        try:
            await c.scheduler.debounce(req.uri, ticket, invoked=req.invoked)
        except Superseded:
            clock.lap("debounce")
            return Suggestion("", Outcome.CANCELLED, req.tier)
        clock.lap("debounce")
        if self._version(req.uri) != snap.version:
            return Suggestion("", Outcome.STALE, req.tier)

        if snap.language_id in self.config.completion.languages_disabled:
            return Suggestion("", Outcome.EMPTY, req.tier)

        tier = self.config.tier(req.tier)
        too_big = len(snap.text) > self.config.completion.max_document_bytes
        ctx = self.build_context(req.uri, req.cursor, tier, snap)
        clock.lap("context")
        if ctx is None:
            return Suggestion("", Outcome.EMPTY, req.tier)

        provider_for_key = c.providers.get(req.tier)
        model_name = provider_for_key.model if provider_for_key is not None else "offline"
        key = ctx.key(req.tier, model_name)
        cached = c.cache.get(key)
        if cached is not None:
            clock.lap("queue")
            c.typing.remember(req.uri, snap.text, offset, cached, req.tier)
            return Suggestion(cached, Outcome.CACHE, req.tier)

        # Attach to a live stream the user is typing along with.
        flight = self._live.get(req.uri)
        if flight is not None:
            typed = flight.anchor.typed_since(snap.text, offset)
            if typed is not None and flight.attachable(typed):
                text = await self._await_attached(flight, typed, tier)
                clock.lap("queue")
                if text is not None and self._version(req.uri) == snap.version:
                    return Suggestion(text, Outcome.ATTACHED, flight.tier)
            # Superseded: nobody will see this stream's answer.
            if not flight.done:
                self._abort(flight)

        if too_big:
            return await self._offline(req, ctx, clock, snap, offset, reason="document too large")
        return await self._model_path(req, ctx, key, clock, snap, offset)

    def build_context(
        self, uri: str, cursor: Cursor, tier: TierConfig, snap: DocumentSnapshot
    ) -> PromptContext | None:
        c = self.c
        doc = c.store.get(uri)
        if doc is None:
            return None
        others = [
            d for d in c.store.documents() if d.uri != uri and not c.governance.boundary.excluded(d.path)
        ]
        ctx = c.context.build(doc, cursor, tier.context_chars, others=others, deadline_ms=15.0)
        return c.redact_context(ctx)

    async def _await_attached(self, flight: InflightStream, typed: str, tier: TierConfig) -> str | None:
        flight.waiters += 1
        try:
            return await self._attached_text(flight, typed, tier)
        except asyncio.CancelledError:
            self._abort_later(flight)
            raise
        finally:
            flight.waiters -= 1

    async def _attached_text(self, flight: InflightStream, typed: str, tier: TierConfig) -> str | None:
        try:
            first = await asyncio.wait_for(
                asyncio.shield(flight.quick), timeout=tier.first_token_timeout_ms / 1000.0
            )
        except (asyncio.TimeoutError, ProviderError, PolicyError):
            return None
        if first.startswith(typed) and len(first) > len(typed):
            flight.answered = True
            return first[len(typed) :]
        if not flight.done:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(flight.final), timeout=tier.total_timeout_ms / 1000.0)
        if flight.final.done():
            full = flight.final.result().text
            if full.startswith(typed) and len(full) > len(typed):
                flight.answered = True
                return full[len(typed) :]
        return None

    async def _model_path(
        self,
        req: CompletionRequest,
        ctx: PromptContext,
        key: str,
        clock: StageClock,
        snap: DocumentSnapshot,
        offset: int,
    ) -> Suggestion:
        """Walk the tier chain: fast, then backup (breaker open, quota, errors), then offline."""
        chain = list(self.c.tier_chain(req.tier))
        last_error: BaseException | None = None
        for index, tier_name in enumerate(chain):
            tier = self.config.tier(tier_name)
            if self.is_offline(tier_name):
                # The offline floor makes no model call: no quota, limiter, breaker or audit line.
                break
            hedge_with = chain[index + 1] if index + 1 < len(chain) else None
            retried = False
            while True:
                try:
                    flight = await self.start_stream(
                        req,
                        tier_name,
                        tier,
                        ctx,
                        key,
                        snap,
                        offset,
                        clock,
                        fallback_from=chain[0] if index else None,
                        retries=int(retried),
                    )
                except PolicyError as exc:
                    log.info("tier %s skipped: %s", tier_name, exc)
                    last_error = exc
                    break
                try:
                    flight, text = await self._await_quick(
                        flight, req, tier_name, tier, ctx, key, snap, offset, hedge_with
                    )
                except asyncio.TimeoutError:
                    # First token too slow: answer from the fallback now; the stream may still
                    # finish into the cache for the next request.
                    log.info(
                        "tier %s: no first token in %d ms; falling back",
                        tier_name,
                        tier.first_token_timeout_ms,
                    )
                    if self.c.providers[tier_name].name == "local":
                        # One llama.cpp slot: a stream left running would delay the next request.
                        self._abort_later(flight, grace_s=0.0)
                    return await self._offline(req, ctx, clock, snap, offset, reason="first-token timeout")
                except (ProviderError, PolicyError) as exc:
                    last_error = exc
                    delay = self._retry_delay(exc, flight, retried, clock)
                    if delay is None:
                        log.warning("tier %s failed: %s", tier_name, exc)
                        break
                    retried = True
                    log.info(
                        "tier %s failed before any token (%s); one retry in %.0f ms",
                        tier_name,
                        exc,
                        delay * 1000,
                    )
                    await asyncio.sleep(delay)
                    continue
                return self._answer(req, clock, snap, offset, key, flight, text)
        return await self._offline(
            req, ctx, clock, snap, offset, reason=str(last_error or "no tier available")
        )

    def is_offline(self, tier_name: str) -> bool:
        provider = self.c.providers.get(tier_name)
        return provider is self.c.offline or getattr(provider, "name", "") == "offline"

    def _retry_delay(
        self, exc: BaseException, flight: InflightStream, retried: bool, clock: StageClock
    ) -> float | None:
        remaining = self.config.completion.deadline_ms / 1000.0 - clock.elapsed_ms() / 1000.0
        return retry_delay(exc, produced=bool(flight.raw), retried=retried, remaining_s=remaining)

    async def _await_quick(
        self,
        flight: InflightStream,
        req: CompletionRequest,
        tier_name: str,
        tier: TierConfig,
        ctx: PromptContext,
        key: str,
        snap: DocumentSnapshot,
        offset: int,
        hedge_with: str | None,
    ) -> tuple[InflightStream, str]:
        """The first good suggestion of `flight`, racing a hedge on the next tier if enabled."""
        timeout = tier.first_token_timeout_ms / 1000.0 + 0.05
        hedge_after = self._hedge_delay(tier_name, hedge_with)
        flights = [flight]
        for f in flights:
            f.waiters += 1
        try:
            if hedge_after is not None and hedge_after < timeout:
                done, _ = await asyncio.wait([asyncio.shield(flight.quick)], timeout=hedge_after)
                if not done and hedge_with is not None:
                    try:
                        hedge = await self.start_stream(
                            req,
                            hedge_with,
                            self.config.tier(hedge_with),
                            ctx,
                            ctx.key(hedge_with, self.c.providers[hedge_with].model),
                            snap,
                            offset,
                            None,
                            live=False,
                            fallback_from=tier_name,
                            hedged=True,
                        )
                        hedge.waiters += 1
                        flights.append(hedge)
                        self.hedges += 1
                        log.info(
                            "hedging: %s has no first token after %.0f ms; racing %s",
                            tier_name,
                            hedge_after * 1000,
                            hedge_with,
                        )
                    except PolicyError as exc:
                        log.debug("no hedge: %s", exc)
            winner, text = await first_success(flights, timeout)
        except asyncio.CancelledError:
            # The editor cancelled (it does on every keystroke). A new request may attach to
            # this stream within moments; if none does, nobody will see it: abort it.
            for f in flights:
                self._abort_later(f)
            raise
        finally:
            for f in flights:
                f.waiters -= 1
        for f in flights:
            if f is not winner:
                self._abort(f)
        if winner.first_token_at:
            self._ttft.setdefault(winner.tier, deque(maxlen=50)).append(
                (winner.first_token_at - winner.started) * 1000.0
            )
        return winner, text

    def _hedge_delay(self, tier_name: str, hedge_with: str | None) -> float | None:
        """Hedge after the tier's recent p95 time to first token (needs a few samples)."""
        settings = getattr(self.c.governance, "settings", None)
        hedging = getattr(settings, "hedging", None)
        if hedge_with is None or hedging is None or not hedging.enabled or hedging.max_extra < 1:
            return None
        if self.c.providers.get(hedge_with) is self.c.offline:
            return None  # the offline floor is not a hedge; it answers on failure anyway
        return hedge_after(self._ttft.get(tier_name, ()))

    def _answer(
        self,
        req: CompletionRequest,
        clock: StageClock,
        snap: DocumentSnapshot,
        offset: int,
        key: str,
        flight: InflightStream,
        text: str,
    ) -> Suggestion:
        tier_name = flight.tier
        waited = clock.lap("generation")
        if flight.first_token_at:
            # Split the wait into time to first token and generation of the first line.
            ttft = min(waited, (flight.first_token_at - flight.started) * 1000.0)
            clock.stages["generation"] -= ttft
            connect = min(ttft, flight.connect_ms)
            clock.add("connect", connect)
            clock.add("ttft", ttft - connect)
        # Post-processing runs on each streamed piece; report it apart from generation.
        post = min(clock.stages.get("generation", 0.0), flight.post_ms)
        clock.stages["generation"] = clock.stages.get("generation", 0.0) - post
        clock.add("postprocess", post)
        if self._version(req.uri) != snap.version:
            return Suggestion("", Outcome.STALE, tier_name)
        flight.answered = True
        text = text.rstrip() if "\n" not in text else text
        if text:
            # Cache the quick answer now; the enrichment replaces it if the stream goes on.
            if not flight.done:
                self.c.cache.put(key, text)
            self.c.typing.remember(req.uri, snap.text, offset, text, tier_name)
            self.prefetcher.schedule(req, snap, offset, text)
        provider = self.c.providers[tier_name]
        return Suggestion(
            text, Outcome.MODEL, tier_name, provider=provider.name, model=provider.model, complete=flight.done
        )

    async def _offline(
        self,
        req: CompletionRequest,
        ctx: PromptContext,
        clock: StageClock,
        snap: DocumentSnapshot,
        offset: int,
        *,
        reason: str,
    ) -> Suggestion:
        """The floor: cache first, then the instant rule engine."""
        for tier_name in ("fast", "backup"):
            provider = self.c.providers.get(tier_name)
            if provider is not None:
                cached = self.c.cache.get(ctx.key(tier_name, provider.model))
                if cached:
                    return Suggestion(cached, Outcome.FALLBACK, tier_name, provider="cache")
        text = await self.c.offline_suggest(ctx)
        clock.lap("generation")
        if self._version(req.uri) != snap.version:
            return Suggestion("", Outcome.STALE, "offline")
        log.debug("fallback to offline engine (%s)", reason)
        if text:
            self.c.typing.remember(req.uri, snap.text, offset, text, "offline")
        return Suggestion(text, Outcome.FALLBACK if text else Outcome.EMPTY, "offline", provider="offline")

    # ------------------------------------------------------------------ streams

    async def start_stream(
        self,
        req: CompletionRequest,
        tier_name: str,
        tier: TierConfig,
        ctx: PromptContext,
        key: str,
        snap: DocumentSnapshot,
        offset: int,
        clock: StageClock | None,
        *,
        feature: str | None = None,
        max_tokens: int | None = None,
        live: bool = True,
        speculative: bool = False,
        fallback_from: str | None = None,
        retries: int = 0,
        hedged: bool = False,
    ) -> InflightStream:
        c = self.c
        provider = c.providers.get(tier_name)
        if provider is None:
            raise PolicyError(f"tier {tier_name} is not configured")
        feat = feature or req.feature
        if getattr(provider, "single_slot", False):
            busy = [f for f in self._active if f.provider is provider and not f.done]
            if speculative and busy:
                # Speculative work never takes the only slot from a stream someone waits for.
                raise PolicyError("the local model is busy; prefetch skipped")
            # A one-slot server (the embedded llama.cpp) would interrupt the older stream
            # itself when this one arrives and the older would read as a failure: close it
            # here first, as the cancellation it is.
            for other in busy:
                self._abort(other)
        permit = await c.governance.admit_async(feat, tier_name, c.provider_key(tier_name))
        log.debug(
            "stream: tier=%s feature=%s live=%s speculative=%s mode=%s",
            tier_name,
            feat,
            live,
            speculative,
            ctx.mode,
        )
        if clock is not None:
            clock.lap("queue")
        enrich = self.config.completion.enrichment and feat == "completion" and ctx.mode == "multi"
        budget = max_tokens or tier.max_tokens
        if enrich:
            budget = max(budget, self.config.completion.enrichment_max_tokens)
        stop = tuple(dict.fromkeys((*ctx.stop,)))
        mreq = ModelRequest(
            context=ctx,
            max_tokens=min(budget, ctx.max_tokens or budget) if not enrich else budget,
            temperature=tier.temperature,
            stop=stop,
            fim_template=tier.fim_template,
            feature=feat,  # type: ignore[arg-type]
        )
        flight = InflightStream(anchor=_anchor(snap, offset), tier=tier_name, context=ctx)
        assembler = c.assembler(ctx)
        flight.provider = provider
        self._active.add(flight)
        if live:
            old = self._live.get(req.uri)
            if old is not None and old is not flight and not old.done:
                self._abort(old)
            self._live[req.uri] = flight
        t_start = time.perf_counter()
        flight.started = t_start

        def finish(
            outcome: str, usage: Usage | None, stages: dict[str, float], err: BaseException | None
        ) -> None:
            """Release the governance permit: breaker verdict, quota tokens, the audit line."""
            permit.finish(
                outcome,
                usage,
                stages,
                ctx.size,
                err,
                provider.model,
                provider.endpoint_host,
                provider=provider.name,
                fallback_from=fallback_from,
                retries=retries,
                hedged=hedged,
            )

        async def run() -> None:
            result: StreamResult | None = None
            try:
                result = await read_stream(
                    flight,
                    provider.stream(mreq),
                    assembler,
                    # The request stops waiting at the first-token timeout and falls back; the
                    # stream itself may go on (up to the total timeout) to fill the cache.
                    first_token_timeout_s=tier.total_timeout_ms / 1000.0,
                    total_timeout_s=(
                        max(tier.total_timeout_ms, self.config.completion.enrichment_timeout_ms)
                        if enrich
                        else tier.total_timeout_ms
                    )
                    / 1000.0,
                    quick_on_first_line=True,
                    on_first_token=flight.mark_first_token,
                )
            except asyncio.CancelledError:
                finish("cancelled", None, {}, None)
                raise
            finally:
                self._active.discard(flight)
                if flight.wasted_tokens:
                    c.stats.record_waste(flight.wasted_tokens)
                if self._live.get(req.uri) is flight and flight.done:
                    self._live.pop(req.uri, None)
            err = result.error
            stages = dict(result.stages)
            stages["total"] = (time.perf_counter() - t_start) * 1000.0
            finish("error" if err is not None else "model", result.usage, stages, err)
            if err is None and result.text:
                c.cache.put(key, result.text)
                c.typing.remember(req.uri, snap.text, offset, result.text, tier_name)
                quick = flight.quick.result() if flight.quick.done() and not flight.quick.exception() else ""
                if (
                    len(result.text) > len(quick)
                    and self.on_suggestion_ready is not None
                    and self._version(req.uri) == snap.version
                ):
                    self.on_suggestion_ready(req.uri, snap.version, req.cursor)

        flight.task = asyncio.get_running_loop().create_task(run())
        self.track(flight.task)
        return flight

    def _abort_later(self, flight: InflightStream, grace_s: float = 0.15) -> None:
        """Abort `flight` after a grace period unless a request is waiting on it by then."""

        flight.orphaned = True

        def check() -> None:
            if not flight.done and flight.waiters == 0 and not flight.answered:
                log.debug("aborting a stream nobody waits for")
                self._abort(flight)

        asyncio.get_running_loop().call_later(grace_s, check)

    def _abort(self, flight: InflightStream) -> None:
        if flight.done:
            return
        flight.abort()
        self.c.aborted_streams += 1

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep a background task alive until it ends; cancelled at shutdown."""
        self._background.add(task)
        task.add_done_callback(self._reap)

    def live_stream(self, uri: str) -> InflightStream | None:
        return self._live.get(uri)

    async def start_speculative_stream(
        self, req: CompletionRequest, ctx: PromptContext, snap: DocumentSnapshot, offset: int, max_tokens: int
    ) -> InflightStream:
        """A fast-tier stream nobody waits for yet (prefetch). Raises PolicyError when it may not run."""
        tier = self.config.tier("fast")
        provider = self.c.providers.get("fast")
        if provider is None or self.is_offline("fast"):
            raise PolicyError("no model on the fast tier")
        key = ctx.key("fast", provider.model)
        return await self.start_stream(
            req, "fast", tier, ctx, key, snap, offset, None,
            feature="completion", max_tokens=max_tokens, live=False, speculative=True,
        )  # fmt: skip

    def _reap(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background stream failed: %s", task.exception())

    # ------------------------------------------------------------------ escalation

    async def escalate(
        self,
        uri: str,
        cursor: Cursor,
        *,
        recompute: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Suggestion:
        """Ask the quality tier for a fuller completion at `cursor`, store it, return it."""
        return await escalate(self, uri, cursor, recompute=recompute, progress=progress)

    # ------------------------------------------------------------------ bookkeeping

    def _record(
        self, outcome: Outcome, req: CompletionRequest, clock: StageClock, *, model_call: bool = False
    ) -> dict[str, float]:
        stages = clock.finish()
        self.last_latency_ms = stages.get("total", 0.0)
        self.c.stats.record(outcome.value, req.tier, stages, feature=req.feature, model_call=model_call)
        return stages

    async def aclose(self) -> None:
        for flight in list(self._live.values()):
            flight.abort()
        for task in list(self._background):
            task.cancel()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
