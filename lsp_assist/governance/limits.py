"""Workload protection per provider: a token-bucket rate limit and a concurrency cap.

`ProviderLimits.try_acquire()` never waits: completions are latency-bound, so when the
bucket is empty, the concurrency cap is reached or the provider asked us to back off
(429 `Retry-After`), the call is skipped (the pipeline answers from cache or empty) and
the skip is counted by reason. The rate limit is `aiolimiter.AsyncLimiter` (leaky bucket,
bursts up to `requests_per_minute`); we only take capacity after `has_capacity()` said
yes, so its `acquire()` completes without suspending and we can drive it synchronously.
The limiter reads the running loop's clock, so `try_acquire` must run on the event loop.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from types import TracebackType

from aiolimiter import AsyncLimiter

from lsp_assist.governance.settings import RateLimit


class Lease:
    """One admitted call's slot. Release exactly once (idempotent); a context manager too."""

    __slots__ = ("_limits", "_released")

    def __init__(self, limits: ProviderLimits) -> None:
        self._limits = limits
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._limits.in_flight -= 1

    @property
    def released(self) -> bool:
        return self._released

    def __enter__(self) -> Lease:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    async def __aenter__(self) -> Lease:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


class ProviderLimits:
    def __init__(
        self, key: str, limit: RateLimit | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.key = key
        self.limit = limit or RateLimit()
        self._clock = clock
        rpm = self.limit.requests_per_minute
        self._limiter = AsyncLimiter(rpm, 60.0) if rpm else None
        self.in_flight = 0
        self.cooling_until = 0.0
        self.skips: Counter[str] = Counter()
        self.admitted = 0

    def refusal(self) -> str | None:
        """Why a call would be refused now (None: it would be admitted). Takes nothing."""
        if self.cooling_until and self._clock() < self.cooling_until:
            return "cooling"
        mc = self.limit.max_concurrent
        if mc is not None and self.in_flight >= mc:
            return "concurrency"
        if self._limiter is not None and not self._limiter.has_capacity():
            return "rate"
        return None

    def try_acquire(self) -> Lease | None:
        """A lease, or None (skip counted in `skips`) when the provider is full."""
        reason = self.refusal()
        if reason is not None:
            self.skips[reason] += 1
            return None
        if self._limiter is not None:
            coro = self._limiter.acquire()
            try:
                coro.send(None)
            except StopIteration:
                pass
            else:  # pragma: no cover - has_capacity() said yes, so acquire cannot suspend
                coro.close()
                self.skips["rate"] += 1
                return None
        self.in_flight += 1
        self.admitted += 1
        return Lease(self)

    def track(self) -> Lease:
        """A lease counted in `in_flight` but not checked: the shared store admitted the call."""
        self.in_flight += 1
        self.admitted += 1
        return Lease(self)

    def cool_down(self, seconds: float) -> None:
        """Honour a 429 Retry-After: refuse calls to this provider for `seconds`."""
        if seconds > 0:
            self.cooling_until = max(self.cooling_until, self._clock() + min(seconds, 3600.0))

    def snapshot(self) -> dict[str, object]:
        return {
            "in_flight": self.in_flight,
            "admitted": self.admitted,
            "skips": dict(self.skips),
            "cooling_s": round(max(0.0, self.cooling_until - self._clock()), 1),
        }
