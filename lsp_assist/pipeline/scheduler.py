"""Per-document request scheduling: adaptive trailing-edge debounce and supersession.

Every inline-completion request takes a ticket for its document. A newer ticket
supersedes the older ones at once: a request still waiting in its debounce returns
(empty) without touching a model, and the live model stream of an older document version
is aborted by whoever owns it (see `inflight`). The debounce adapts to the typing rhythm
measured from `didChange` timestamps: short when the user pauses, longer while they type
fast. It is trailing-edge, so the last keystroke of a burst always gets its request.
Invoked requests (the user asked explicitly) skip it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field


@dataclass
class _DocState:
    seq: int = 0
    last_change: float = 0.0
    interval_ewma: float = 1.0  # seconds between keystrokes, smoothed
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)


_FAST_GAP_S = 0.25  # keystrokes closer than this are one typing burst


class Superseded(Exception):
    """A newer request for the same document arrived."""


class Scheduler:
    def __init__(self, min_ms: int = 10, max_ms: int = 90) -> None:
        self.min_s = min_ms / 1000.0
        self.max_s = max(min_ms, max_ms) / 1000.0
        self._docs: dict[str, _DocState] = {}
        self.superseded = 0

    def _state(self, uri: str) -> _DocState:
        st = self._docs.get(uri)
        if st is None:
            st = self._docs[uri] = _DocState()
        return st

    def note_change(self, uri: str) -> None:
        """Called on every didChange: feeds the typing-rhythm estimate."""
        st = self._state(uri)
        now = time.monotonic()
        if st.last_change:
            gap = now - st.last_change
            if gap < _FAST_GAP_S:
                # Smooth only the gaps within a burst; a pause restarts the estimate.
                st.interval_ewma = (
                    gap if st.interval_ewma >= _FAST_GAP_S else 0.5 * st.interval_ewma + 0.5 * gap
                )
            else:
                st.interval_ewma = 1.0
        st.last_change = now

    def debounce_for(self, uri: str) -> float:
        """Seconds to wait: the minimum after a pause; while typing fast, a little more than
        the user's own keystroke gap (so the next key supersedes this request before it
        reaches the model), capped at the maximum."""
        st = self._state(uri)
        since = time.monotonic() - st.last_change if st.last_change else 10.0
        if st.interval_ewma >= _FAST_GAP_S or since >= _FAST_GAP_S:
            return self.min_s
        return min(self.max_s, max(self.min_s, 1.5 * st.interval_ewma))

    def ticket(self, uri: str) -> int:
        """Take a ticket; every older ticket of the document is superseded now."""
        st = self._state(uri)
        st.seq += 1
        old = st.wakeup
        st.wakeup = asyncio.Event()
        old.set()  # wake requests sleeping in their debounce so they return at once
        if st.seq > 1:
            self.superseded += 1
        return st.seq

    def is_current(self, uri: str, ticket: int) -> bool:
        st = self._docs.get(uri)
        return st is not None and st.seq == ticket

    async def debounce(self, uri: str, ticket: int, *, invoked: bool) -> float:
        """Wait the debounce; raise Superseded if a newer request arrives meanwhile."""
        if invoked:
            if not self.is_current(uri, ticket):
                raise Superseded
            return 0.0
        delay = self.debounce_for(uri)
        st = self._state(uri)
        ev = st.wakeup
        if st.last_change:
            # The debounce runs from the keystroke, not from now: a request that already
            # waited (on a live stream it hoped to attach to) does not wait it twice.
            delay = max(0.0, delay - (time.monotonic() - st.last_change))
        if delay > 0:
            try:
                await asyncio.wait_for(ev.wait(), timeout=delay)
            except asyncio.TimeoutError:
                pass
        if not self.is_current(uri, ticket):
            raise Superseded
        return delay

    def forget(self, uri: str) -> None:
        st = self._docs.pop(uri, None)
        if st is not None:
            st.wakeup.set()
