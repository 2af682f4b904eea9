"""The `lspAssist/status` notification: tier, last latency and health, throttled.

Every answered request updates the status item, but a burst of keystrokes must not become a
burst of notifications: updates go out at most once per `interval_s`, and the last one of
a burst is sent at the end of its window (trailing edge), so the item always ends on the
latest latency. Health changes (a warning, an error, back to ok) go out at once.

`FailureNotices` decides when a failed model call becomes a message naming the endpoint
("cannot connect to http://127.0.0.1:8080/v1"): at the first failure, then not again for
the same endpoint and failure until a minute passed or the tier answered in between.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from lsp_assist.domain import Outcome, Suggestion
from lsp_assist.errors import PolicyError, ProviderError, Unauthorized, Unavailable

Payload = dict[str, Any]

# Outcomes that put a suggestion on screen (or failed trying): their latency is the one a
# user waited for. Cancelled, superseded and stale requests showed nothing.
_SHOWN = {
    Outcome.MODEL,
    Outcome.CACHE,
    Outcome.TYPING_THROUGH,
    Outcome.ATTACHED,
    Outcome.FALLBACK,
    Outcome.ERROR,
}


def request_fields(result: Suggestion) -> Payload | None:
    """The status fields one answered request sets, or None when it showed nothing."""
    if result.outcome not in _SHOWN or (not result.text and result.outcome != Outcome.ERROR):
        return None
    return {
        "tier": result.tier or "fast",
        "provider": result.provider or ("cache" if result.outcome == Outcome.CACHE else ""),
        "outcome": result.outcome.value,
        "lastLatencyMs": round(result.stages.get("total", 0.0), 1),
    }


class StatusThrottle:
    """Sends at most one update per interval; the newest pending one wins."""

    def __init__(
        self,
        send: Callable[[Payload], None],
        interval_s: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send = send
        self.interval_s = interval_s
        self._clock = clock
        self._last_sent = float("-inf")
        self._pending: Payload | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.sent = 0

    def update(self, payload: Payload) -> None:
        self._pending = payload
        wait = self._last_sent + self.interval_s - self._clock()
        if wait <= 0 and self._timer is None:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def now(self, payload: Payload) -> None:
        """Send at once (a health change), replacing anything pending; it does not count
        against the window, so the next request's latency is not held back by it."""
        self._pending = payload
        self.flush(rate_limited=False)

    def flush(self, rate_limited: bool = True) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        payload, self._pending = self._pending, None
        if payload is None:
            return
        if rate_limited:
            self._last_sent = self._clock()
        self.sent += 1
        self._send(payload)


def failure_message(tier: str, exc: BaseException, url: str) -> str | None:
    """What to tell the user about a failed model call, naming the endpoint; None for
    refusals by governance (quota, rate limit, breaker), which the status item reports."""
    if isinstance(exc, PolicyError) or not isinstance(exc, ProviderError):
        return None
    where = url or f"tier {tier}"
    if isinstance(exc, Unavailable) and "cannot connect" in str(exc):
        return f"cannot connect to {where} (tier {tier}); suggestions come from the fallback until it answers"
    if isinstance(exc, Unauthorized):
        return f"{where} refused the request (tier {tier}): {exc}"
    return f"tier {tier} at {where} failed: {exc}"


class FailureNotices:
    """One message per endpoint and kind of failure, at its first failure; again only after
    `repeat_s` or after the tier answered in between (a new outage)."""

    def __init__(self, repeat_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.repeat_s = repeat_s
        self._clock = clock
        self._shown: dict[tuple[str, str], float] = {}  # (tier, message) -> when
        self.failing: set[str] = set()

    def failure(self, tier: str, exc: BaseException, url: str) -> str | None:
        message = failure_message(tier, exc, url)
        if message is None:
            return None
        self.failing.add(tier)
        key = (tier, message)
        now = self._clock()
        last = self._shown.get(key)
        if last is not None and now - last < self.repeat_s:
            return None
        self._shown[key] = now
        return message

    def recovered(self, tier: str) -> bool:
        """The tier answered: forget its notices. True when it had been failing."""
        if tier not in self.failing:
            return False
        self.failing.discard(tier)
        for key in [k for k in self._shown if k[0] == tier]:
            del self._shown[key]
        return True
