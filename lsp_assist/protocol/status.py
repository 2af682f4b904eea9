"""The `lspAssist/status` notification: tier, last latency and health, throttled.

Every answered request updates the status item, but a burst of keystrokes must not become a
burst of notifications: updates go out at most once per `interval_s`, and the last one of
a burst is sent at the end of its window (trailing edge), so the item always ends on the
latest latency. Health changes (a warning, an error, back to ok) go out at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from lsp_assist.domain import Outcome, Suggestion

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
