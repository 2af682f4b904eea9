"""Resilience rules of the tier chain: when to retry, when to hedge, who wins a race.

Pure functions so the rules can be read, and tested, apart from the engine's state:
- at most one retry, only before any token arrived, with jitter, and only when the
  request's deadline leaves room (a 429 whose Retry-After is beyond a keystroke's
  patience moves on to the backup tier instead);
- hedging fires after the tier's recent p95 time to first token (once there are samples);
- a race returns the first stream that produces a suggestion, or the last error.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable, Sequence

from lsp_assist.errors import BadResponse, PolicyError, ProviderTimeout, RateLimited, Unavailable
from lsp_assist.pipeline.inflight import InflightStream

MAX_RETRY_AFTER_S = 1.0  # longer waits go to the backup tier
MIN_HEDGE_SAMPLES = 5


def retry_delay(exc: BaseException, *, produced: bool, retried: bool, remaining_s: float) -> float | None:
    """Seconds to wait before the one retry, or None when the failure is not retried."""
    if retried or produced or isinstance(exc, PolicyError):
        return None
    if isinstance(exc, RateLimited):
        if exc.retry_after is None or exc.retry_after > MAX_RETRY_AFTER_S:
            return None
        delay = exc.retry_after
    elif isinstance(exc, (Unavailable, BadResponse)) and not isinstance(exc, ProviderTimeout):
        delay = random.uniform(0.05, 0.15)  # jitter: retries from many clients spread out
    else:
        return None
    return delay if remaining_s > delay + 0.5 else None


def hedge_after(ttft_samples_ms: Iterable[float]) -> float | None:
    """The recent p95 time to first token in seconds; None until there are enough samples."""
    samples = sorted(ttft_samples_ms)
    if len(samples) < MIN_HEDGE_SAMPLES:
        return None
    return samples[min(len(samples) - 1, int(0.95 * len(samples)))] / 1000.0


async def first_success(flights: Sequence[InflightStream], timeout: float) -> tuple[InflightStream, str]:
    """Whichever flight produces a suggestion first; the last error if all fail.

    Waits on the `quick` futures themselves: no wrapper tasks, and nothing is cancelled
    here (the caller decides what happens to the losers).
    """
    pending: dict[asyncio.Future[str], InflightStream] = {f.quick: f for f in flights}
    deadline = time.perf_counter() + timeout
    last_exc: BaseException | None = None
    while pending:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise asyncio.TimeoutError
        done, _ = await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        if not done:
            raise asyncio.TimeoutError
        for fut in done:
            flight = pending.pop(fut)
            exc = fut.exception()
            if exc is None:
                return flight, fut.result()
            last_exc = exc
    assert last_exc is not None
    raise last_exc
