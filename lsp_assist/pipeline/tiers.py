"""`TierRunner`: the tier chain, with one retry, a hedge and the offline floor.

`run` walks the request's chain (fast -> backup; quality -> fast -> backup), starting a
stream on each tier through the `StreamLauncher`, until one produces a first answer:
- a tier governance refuses (quota, breaker, rate limit) is skipped;
- a failure before any token is retried once when `resilience.retry_delay` allows;
- after the tier's recent p95 time to first token, a hedge races the next tier;
- a first token slower than the tier's timeout, or the end of the chain, lands on the
  floor: a cached answer of the fast/backup tier, else the offline rule engine.
The rules themselves are pure functions in `resilience`; this module applies them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypedDict

from lsp_assist.config.schema import Config
from lsp_assist.domain import Outcome, PromptContext, Suggestion
from lsp_assist.errors import PolicyError, ProviderError, StreamAborted
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.inflight import InflightStream
from lsp_assist.pipeline.launcher import StreamLauncher, StreamSpec
from lsp_assist.pipeline.ports import GovernancePort
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.pipeline.resilience import first_success, hedge_after, retry_delay
from lsp_assist.pipeline.state import RequestState
from lsp_assist.telemetry.latency import StageClock

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger(__name__)

OfflineAnswer = Callable[[PromptContext], Awaitable[str]]
#: (tier name, error) of a failed attempt on a tier.
FailureListener = Callable[[str, BaseException], None]


class TierRoutes(TypedDict):
    """Where a request may go (the keywords of `TierRunner`)."""

    chain: Callable[[str], Sequence[str]]  # a tier's chain: itself, then its fallbacks
    offline_answer: OfflineAnswer  # the floor's instant answer


@dataclass(frozen=True)
class _Skipped:
    """A tier that gave no answer: the chain goes on to the next one."""

    error: BaseException


class TierRunner:
    def __init__(
        self,
        config: Config,
        launcher: StreamLauncher,
        answers: AnswerStore,
        prompts: PromptBuilder,
        governance: GovernancePort,
        **routes: Unpack[TierRoutes],
    ) -> None:
        self.config = config
        self.launcher = launcher
        self.answers = answers
        self.prompts = prompts
        self.governance = governance
        self.chain = routes["chain"]
        self.offline_answer = routes["offline_answer"]
        self.hedges = 0
        self._ttft: dict[str, deque[float]] = {}
        # Told about every failed attempt on a tier (before any retry), so the user hears
        # about an unreachable endpoint at its first failure, not when the breaker opens.
        self.on_failure: FailureListener | None = None

    async def run(self, s: RequestState) -> Suggestion | None:
        """Set `s.flight`/`s.text` from the first tier that answers (None returned), or
        return the floor's suggestion."""
        chain = list(self.chain(s.req.tier))
        last_error: BaseException | None = None
        for index, tier_name in enumerate(chain):
            if self.launcher.is_offline(tier_name):
                # The offline floor makes no model call: no quota, limiter, breaker or audit line.
                break
            outcome = await self._on_tier(s, chain, index)
            if not isinstance(outcome, _Skipped):
                return outcome
            last_error = outcome.error
        return await self.floor(s, reason=str(last_error or "no tier available"))

    async def _on_tier(self, s: RequestState, chain: list[str], index: int) -> Suggestion | _Skipped | None:
        """Ask the chain's tier `index` (retried once): None when it answered (`s.flight`,
        `s.text`), a suggestion that ends the request, or `_Skipped` for the next tier."""
        tier_name = chain[index]
        hedge_with = chain[index + 1] if index + 1 < len(chain) else None
        # Every tier of the chain answers the request's own key: the next request there
        # finds the answer whichever tier gave it.
        prompt = s.prompt if tier_name == s.prompt.tier else replace(s.prompt, tier=tier_name)
        retried = False
        while True:
            spec = StreamSpec(
                s.target,
                prompt,
                feature=s.req.feature,
                fallback_from=chain[0] if index else None,
                retries=int(retried),
            )
            try:
                flight = await self.launcher.launch(spec, s.clock)
            except PolicyError as exc:
                log.info("tier %s skipped: %s", tier_name, exc)
                return _Skipped(exc)
            try:
                s.flight, s.text = await self._first_answer(flight, spec, hedge_with)
            except StreamAborted:
                # Closed for a newer request: its text is cut and nobody will see an
                # answer here; no other tier is asked on its behalf.
                return Suggestion("", Outcome.CANCELLED, tier_name)
            except asyncio.TimeoutError:
                return await self._too_slow(s, flight, tier_name)
            except (ProviderError, PolicyError) as exc:
                delay = self._after_failure(exc, flight, retried, s.clock, tier_name)
                if delay is None:
                    return _Skipped(exc)
                retried = True
                await asyncio.sleep(delay)
                continue
            return None

    async def _too_slow(self, s: RequestState, flight: InflightStream, tier_name: str) -> Suggestion:
        """First token too slow: answer from the fallback now; the stream may still finish
        into the cache for the next request."""
        log.info(
            "tier %s: no first token in %d ms; falling back",
            tier_name,
            self.config.tier(tier_name).first_token_timeout_ms,
        )
        provider = self.launcher.provider(tier_name)
        if provider is not None and provider.single_slot:
            # One slot: a stream left running would delay the next request.
            self.launcher.abort_later(flight, grace_s=0.0)
        return await self.floor(s, reason="first-token timeout")

    def _after_failure(
        self, exc: BaseException, flight: InflightStream, retried: bool, clock: StageClock, tier_name: str
    ) -> float | None:
        """Report a failed attempt; the delay before its one retry, or None for none."""
        if self.on_failure is not None:
            self.on_failure(tier_name, exc)
        delay = self._retry_delay(exc, flight, retried, clock)
        if delay is None:
            log.warning("tier %s failed: %s", tier_name, exc)
            return None
        log.info(
            "tier %s failed before any token (%s); one retry in %.0f ms",
            tier_name,
            exc,
            delay * 1000,
        )
        return delay

    def _retry_delay(
        self, exc: BaseException, flight: InflightStream, retried: bool, clock: StageClock
    ) -> float | None:
        remaining = self.config.completion.deadline_ms / 1000.0 - clock.elapsed_ms() / 1000.0
        return retry_delay(exc, produced=bool(flight.raw), retried=retried, remaining_s=remaining)

    async def _first_answer(
        self, flight: InflightStream, spec: StreamSpec, hedge_with: str | None
    ) -> tuple[InflightStream, str]:
        """The first good suggestion of `flight`, racing a hedge on the next tier if enabled."""
        tier_name = spec.tier
        timeout = self.config.tier(tier_name).first_token_timeout_ms / 1000.0 + 0.05
        hedge_delay = self._hedge_delay(tier_name, hedge_with)
        flights = [flight]
        for f in flights:
            f.waiters += 1
        try:
            if hedge_delay is not None and hedge_delay < timeout:
                done, _ = await asyncio.wait([asyncio.shield(flight.quick)], timeout=hedge_delay)
                if not done and hedge_with is not None:
                    try:
                        hedge = await self.launcher.launch(
                            StreamSpec(
                                spec.target,
                                self.prompts.retier(spec.prompt, hedge_with),
                                feature=spec.feature,
                                live=False,
                                fallback_from=tier_name,
                                hedged=True,
                            )
                        )
                        hedge.waiters += 1
                        flights.append(hedge)
                        self.hedges += 1
                        log.info(
                            "hedging: %s has no first token after %.0f ms; racing %s",
                            tier_name,
                            hedge_delay * 1000,
                            hedge_with,
                        )
                    except PolicyError as exc:
                        log.debug("no hedge: %s", exc)
            winner, text = await first_success(flights, timeout)
        except asyncio.CancelledError:
            # The editor cancelled (it does on every keystroke). A new request may attach to
            # this stream within moments; if none does, nobody will see it: abort it.
            for f in flights:
                self.launcher.abort_later(f)
            raise
        finally:
            for f in flights:
                f.waiters -= 1
        for f in flights:
            if f is not winner:
                self.launcher.abort(f)
        if winner.first_token_at:
            self._ttft.setdefault(winner.tier, deque(maxlen=50)).append(
                (winner.first_token_at - winner.started) * 1000.0
            )
        return winner, text

    def _hedge_delay(self, tier_name: str, hedge_with: str | None) -> float | None:
        """Hedge after the tier's recent p95 time to first token (needs a few samples)."""
        if hedge_with is None or not self.governance.hedging_enabled:
            return None
        if self.launcher.is_offline(hedge_with):
            return None  # the offline floor is not a hedge; it answers on failure anyway
        return hedge_after(self._ttft.get(tier_name, ()))

    async def floor(self, s: RequestState, *, reason: str) -> Suggestion:
        """The floor: a cached answer of the fast or backup tier, then the instant rule engine."""
        ctx = s.prompt.context
        for tier_name in ("fast", "backup"):
            provider = self.launcher.provider(tier_name)
            if provider is not None:
                cached = self.answers.cached(ctx.key(tier_name, provider.model))
                if cached:
                    return Suggestion(cached, Outcome.FALLBACK, tier_name, provider="cache")
        text = await self.offline_answer(ctx)
        s.clock.lap("generation")
        if not self.answers.current(s.target):
            return Suggestion("", Outcome.STALE, "offline")
        log.debug("fallback to offline engine (%s)", reason)
        if text:
            self.answers.remember(s.target, text, "offline")
        return Suggestion(text, Outcome.FALLBACK if text else Outcome.EMPTY, "offline", provider="offline")
