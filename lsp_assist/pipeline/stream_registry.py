"""`StreamRegistry`: every model stream still running, by what finds it.

- the live stream of each document (a later request may attach to it);
- the active streams (the one-slot rule looks at them);
- the speculative streams (prefetch) by prompt key, until their answer is in the cache: a
  request for that very prompt waits for it instead of paying for a second call;
- the refinement running for each document (not attachable, so apart from the live ones);
- the background tasks (cancelled at shutdown).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsp_assist.errors import PolicyError
from lsp_assist.pipeline.inflight import InflightStream

log = logging.getLogger("lsp_assist.pipeline.launcher")


class ModelBusy(PolicyError):
    """The one-slot model is busy with a stream someone waits for; speculative work yields."""


class StreamRegistry:
    """The streams still running (see module docstring)."""

    def __init__(self) -> None:
        self.live: dict[str, InflightStream] = {}
        self.active: set[InflightStream] = set()  # every stream still reading
        self.speculative: dict[str, InflightStream] = {}
        self.refining: dict[str, InflightStream] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.aborted = 0

    def on_slot(self, provider: object) -> list[InflightStream]:
        """The streams still reading on `provider`'s slot (for a one-slot provider)."""
        slot = slot_of(provider)
        return [f for f in self.active if slot_of(f.provider) is slot and not f.done]

    def add(self, flight: InflightStream, key: str, live_uri: str | None) -> None:
        """Register a started stream: active; speculative under `key` when it is; the live
        stream of `live_uri` when given (a live one still running there is aborted)."""
        self.active.add(flight)
        if flight.speculative and key:
            self.speculative[key] = flight
        if live_uri is not None:
            old = self.live.get(live_uri)
            if old is not None and old is not flight and not old.done:
                self.abort(old)
            self.live[live_uri] = flight

    def ended(self, flight: InflightStream, uri: str) -> None:
        """`flight` stopped reading: it leaves the registry (the speculative entry stays
        until its answer is stored: `drop_speculative`)."""
        self.active.discard(flight)
        if self.live.get(uri) is flight and flight.done:
            self.live.pop(uri, None)
        if self.refining.get(uri) is flight:
            self.refining.pop(uri, None)

    def drop_speculative(self, key: str, flight: InflightStream) -> None:
        if self.speculative.get(key) is flight:
            del self.speculative[key]

    def abort(self, flight: InflightStream) -> None:
        if flight.done:
            return
        flight.abort()
        self.aborted += 1

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep a background task alive until it ends; cancelled at shutdown."""
        self._tasks.add(task)
        task.add_done_callback(self._reap)

    def _reap(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background stream failed: %s", task.exception())

    async def aclose(self) -> None:
        for flight in list(self.live.values()):
            flight.abort()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def slot_of(provider: object) -> object:
    """What a one-slot provider's streams queue on: its `slot` (the engine's owner, for a
    view sharing another provider's engine), else the provider itself."""
    return getattr(provider, "slot", None) or provider


def is_guess(flight: InflightStream) -> bool:
    """A speculative stream that is not a rewrite: a prefetch of the next suggestion."""
    return flight.speculative and not flight.refinement


def is_background(flight: InflightStream) -> bool:
    """Nobody waits for it: a prefetch, or an enrichment whose first answer was delivered."""
    if flight.done or flight.waiters:
        return False
    return flight.speculative or (flight.answered and flight.quick.done())
