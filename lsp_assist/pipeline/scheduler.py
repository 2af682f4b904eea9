"""Per-document request scheduling: adaptive trailing-edge debounce and supersession.

Every inline-completion request takes a ticket for its document. A newer ticket
supersedes the older ones at once: a request still waiting in its debounce returns
(empty) without touching a model, and the live model stream of an older document version
is aborted by whoever owns it (see `inflight`). The debounce adapts to the typing rhythm
measured from `didChange` timestamps:
- the first key after a pause goes to the model at once: no later key can merge with it
  (the user's next key is hundreds of ms away or never comes), so any wait is pure delay;
- within a burst it waits a little more than the user's own keystroke gap (between the
  minimum and the maximum), so the next key supersedes the request before it reaches the
  model. It is trailing-edge: the last keystroke of a burst always gets its request;
- with `word_triggers`, a key that ends a word (`.`, `(`, a space, a newline) fires at
  once too, and only the keys inside a word wait.
Invoked requests (the user asked explicitly) skip it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from lsp_assist.config.schema import CompletionConfig


@dataclass
class _DocState:
    seq: int = 0
    last_change: float = 0.0
    interval_ewma: float = 1.0  # seconds between keystrokes, smoothed
    rhythm: float = 0.0  # seconds between keys while typing (gaps under `_BURST_END_S`); 0: none yet
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)


_FAST_GAP_S = 0.25  # keystrokes closer than this are one typing burst
#: A gap this long ends the typing: the next key starts over with no rhythm known.
_BURST_END_S = 1.0
#: The shortest quiet after a key that counts as a rest. An average typist's gaps (log-normal,
#: median 170 ms, sigma 0.55: `benchmarks/typing_trace.py`) are shorter 97.5% of the time, so
#: a key still due usually comes first; a prefetch started sooner was usually dropped by it.
_REST_S = 0.5
#: Characters after which a word-trigger scheduler fires at once: the user is likely to
#: want a suggestion there (a member, the arguments, the next token or line).
TRIGGER_CHARACTERS = frozenset(".( \t\n")


@dataclass(frozen=True)
class DebouncePolicy:
    min_ms: int
    max_ms: int
    word_triggers: bool


#: The debounce per kind of fast-tier provider, chosen from the burst curve that
#: `benchmarks/latency.py --sweep` prints (docs/latency.md):
#: - "local": the embedded model (or the offline engine): free, interrupted between
#:   tokens, so the point with the fastest last key;
#: - "remote": a paid or shared server: a point that saves at least 40% of calls for at most
#:   40 ms more on the last key when the curve has one, else the fastest.
#: The curve has no such point (saving 40% takes a wait inside words longer than most
#: keystroke gaps, +80 ms or more on the last key), so both kinds send every key; the
#: trailing debounce and the word triggers stay for users who set them.
DEBOUNCE_DEFAULTS: dict[str, DebouncePolicy] = {
    "local": DebouncePolicy(0, 0, False),
    "remote": DebouncePolicy(0, 0, False),
}


def provider_kind(provider: str) -> str:
    """The kind of a fast tier's provider: "local" for the embedded model and the offline
    engine, "remote" for every other."""
    return "local" if provider in ("local", "offline") else "remote"


def debounce_policy(completion: CompletionConfig, fast_provider: str) -> DebouncePolicy:
    """The debounce for a fast tier served by `fast_provider` (its resolved provider name):
    the kind's default, with every key the user set winning."""
    base = DEBOUNCE_DEFAULTS[provider_kind(fast_provider)]
    return DebouncePolicy(
        base.min_ms if completion.debounce_min_ms is None else completion.debounce_min_ms,
        base.max_ms if completion.debounce_max_ms is None else completion.debounce_max_ms,
        base.word_triggers
        if completion.debounce_word_triggers is None
        else completion.debounce_word_triggers,
    )


class Superseded(Exception):
    """A newer request for the same document arrived."""


class Scheduler:
    def __init__(self, min_ms: int = 10, max_ms: int = 90, *, word_triggers: bool = False) -> None:
        self.min_s = min_ms / 1000.0
        self.max_s = max(min_ms, max_ms) / 1000.0
        self.word_triggers = word_triggers
        self._docs: dict[str, _DocState] = {}
        self.superseded = 0

    def configure(self, policy: DebouncePolicy) -> None:
        self.min_s = max(0, policy.min_ms) / 1000.0
        self.max_s = max(policy.min_ms, policy.max_ms, 0) / 1000.0
        self.word_triggers = policy.word_triggers

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
            if gap < _BURST_END_S:
                st.rhythm = gap if not st.rhythm else 0.5 * st.rhythm + 0.5 * gap
            else:
                st.rhythm = 0.0
        st.last_change = now

    def debounce_for(self, uri: str, typed: str = "") -> float:
        """Seconds to wait after the key that typed `typed` (its last character counts; ""
        when unknown): none after a pause, nor (with `word_triggers`) after a key that ends
        a word; while typing fast, a little more than the user's own keystroke gap (so the
        next key supersedes this request before it reaches the model), between the minimum
        and the maximum."""
        st = self._state(uri)
        since = time.monotonic() - st.last_change if st.last_change else 10.0
        if st.interval_ewma >= _FAST_GAP_S or since >= _FAST_GAP_S:
            return 0.0
        if self.word_triggers and typed and typed[-1] in TRIGGER_CHARACTERS:
            return 0.0
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

    async def debounce(self, uri: str, ticket: int, *, invoked: bool, typed: str = "") -> float:
        """Wait the debounce (`debounce_for`); raise Superseded if a newer request arrives
        meanwhile. Returns the seconds waited; 0.0 without awaiting anything."""
        if invoked:
            if not self.is_current(uri, ticket):
                raise Superseded
            return 0.0
        delay = self.debounce_for(uri, typed)
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

    def pause_left(self, uri: str) -> float:
        """Seconds until the user's typing in `uri` has come to a rest: 0 when they never
        typed there; else until no key has come for twice their keystroke gap (at least
        `_REST_S`, at most `_BURST_END_S`) since the last one. The first key after a pause
        waits too (another key usually follows it), and so does a key after a gap longer
        than the debounce's burst gap: the user is still typing."""
        st = self._docs.get(uri)
        if st is None or not st.last_change:
            return 0.0
        quiet = min(_BURST_END_S, max(_REST_S, 2.0 * st.rhythm))
        return max(0.0, quiet - (time.monotonic() - st.last_change))

    def forget(self, uri: str) -> None:
        st = self._docs.pop(uri, None)
        if st is not None:
            st.wakeup.set()
