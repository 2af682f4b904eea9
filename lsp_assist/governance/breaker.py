"""A circuit breaker per provider: stop calling a provider that keeps failing.

States: CLOSED -> OPEN after `failure_threshold` consecutive failures, or when the failure
ratio over the last `window_s` reaches `error_rate` with at least `min_calls` calls.
OPEN -> HALF_OPEN once `cooldown_s` has passed: exactly ONE probe call is let through;
its success closes the breaker, its failure re-opens it (a new cool-down). A probe that
ends without a verdict (cancelled, a 4xx) frees the slot for the next probe.

Failures: any exception whose `counts_as_failure` is not False (timeouts, 5xx, 429, cut
streams, connection errors). Not failures: `asyncio.CancelledError` (the user typed on),
`PolicyError`s, and provider errors with `counts_as_failure = False` (4xx other than 429).

Hand-written on purpose (~100 lines): pybreaker is synchronous (its async path needs
Tornado and it holds a threading lock), `circuitbreaker` lets every concurrent call through
in half-open and reads the wall clock directly, and purgatory has no error-rate window. We
need a single half-open probe, a ratio window, an injectable clock for tests and no locks
(everything runs on the event loop thread).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections import deque
from collections.abc import Callable

from lsp_assist.errors import PolicyError
from lsp_assist.governance.settings import BreakerSettings

log = logging.getLogger(__name__)


class BreakerState(str, enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


StateListener = Callable[[str, BreakerState, BreakerState], None]  # (name, old, new)


def counts_as_failure(exc: BaseException | None) -> bool:
    if exc is None or isinstance(exc, (asyncio.CancelledError, PolicyError)):
        return False
    return bool(getattr(exc, "counts_as_failure", True))


class CircuitBreaker:
    def __init__(
        self,
        name: str,
        settings: BreakerSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_change: StateListener | None = None,
    ) -> None:
        self.name = name
        self.settings = settings or BreakerSettings()
        self._clock = clock
        self._listeners: list[StateListener] = [on_change] if on_change else []
        self.state = BreakerState.CLOSED
        self._consecutive = 0
        self._window: deque[tuple[float, bool]] = deque()  # (time, failed)
        self._opened_at = 0.0
        self._probe_in_flight = False
        self.opened_count = 0

    def add_listener(self, listener: StateListener) -> None:
        self._listeners.append(listener)

    def _set(self, new: BreakerState) -> None:
        old = self.state
        if old is new:
            return
        self.state = new
        if new is BreakerState.OPEN:
            self._opened_at = self._clock()
            self.opened_count += 1
        for listener in self._listeners:
            try:
                listener(self.name, old, new)
            except Exception:  # a status-bar callback must never break the request path
                log.exception("breaker listener failed")

    def would_allow(self) -> bool:
        """Whether `allow()` would return True now, without taking the half-open probe."""
        if self.state is BreakerState.CLOSED:
            return True
        if self.state is BreakerState.OPEN:
            return self._clock() - self._opened_at >= self.settings.cooldown_s
        return not self._probe_in_flight

    def allow(self) -> bool:
        """May a call go out now? In half-open this takes the single probe slot."""
        if self.state is BreakerState.CLOSED:
            return True
        if self.state is BreakerState.OPEN:
            if self._clock() - self._opened_at < self.settings.cooldown_s:
                return False
            self._set(BreakerState.HALF_OPEN)
        if self._probe_in_flight:
            return False
        self._probe_in_flight = True
        return True

    def retry_in(self) -> float:
        """Seconds until a probe may go out (0 when calls are allowed)."""
        if self.state is not BreakerState.OPEN:
            return 0.0
        return max(0.0, self.settings.cooldown_s - (self._clock() - self._opened_at))

    def _prune(self, now: float) -> None:
        horizon = now - self.settings.window_s
        w = self._window
        while w and w[0][0] < horizon:
            w.popleft()

    def record_success(self) -> None:
        now = self._clock()
        self._consecutive = 0
        if self.state is BreakerState.HALF_OPEN:
            self._probe_in_flight = False
            self._window.clear()
            self._set(BreakerState.CLOSED)
            return
        self._window.append((now, False))
        self._prune(now)

    def record_failure(self, exc: BaseException | None) -> None:
        """Record a failed call; non-counting errors only free a half-open probe slot."""
        if not counts_as_failure(exc):
            self.release()
            return
        now = self._clock()
        if self.state is BreakerState.HALF_OPEN:
            self._probe_in_flight = False
            self._set(BreakerState.OPEN)
            return
        if self.state is BreakerState.OPEN:
            return  # a straggler from before it opened
        self._consecutive += 1
        self._window.append((now, True))
        self._prune(now)
        s = self.settings
        calls = len(self._window)
        failures = sum(1 for _, failed in self._window if failed)
        if self._consecutive >= s.failure_threshold or (
            calls >= s.min_calls and failures / calls >= s.error_rate
        ):
            self._consecutive = 0
            self._window.clear()
            self._set(BreakerState.OPEN)
            log.warning("circuit breaker %s opened", self.name)

    def release(self) -> None:
        """A call ended with no verdict (cancelled): a half-open probe slot becomes free."""
        if self.state is BreakerState.HALF_OPEN:
            self._probe_in_flight = False

    def snapshot(self) -> dict[str, object]:
        return {
            "state": self.state.value,
            "retry_in_s": round(self.retry_in(), 1),
            "consecutive_failures": self._consecutive,
            "opened_count": self.opened_count,
        }
