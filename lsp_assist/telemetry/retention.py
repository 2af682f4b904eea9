"""How much of an accepted suggestion is still in the code 30 s, 2 min and 10 min later.

`RetentionTracker.track` takes the accepted span (where it starts in the document, as a
code-point offset, and its text) and follows that region through every `didChange`
(`on_change`, in pre-change offsets, in the order the editor applied them): an edit before
the region moves it, an edit inside grows or shrinks it, an edit after it leaves it alone;
typing right before or right after the span stays outside it. At each checkpoint the
region's current text is compared with the accepted text character by character
(`retained_chars`: the characters of the longest matching blocks, `difflib`), and the
figure is reported; after the last checkpoint the span is forgotten.

The editor's accept notice may arrive before the `didChange` that inserts the text (Neovim
sends changes debounced): a span whose text is not yet at its place is held as a
zero-width anchor until it appears there.

Privacy and bounds: the accepted text is held in memory only, for at most the last
checkpoint (10 min), capped at `MAX_SPAN_CHARS` characters per span and `MAX_TRACKED`
spans (the oldest are dropped first); only counts leave this module. A closed document
ends the measurement of its spans (the checkpoints they had not reached are not reported).
Timers run on the asyncio loop (`loop.call_later`) or on an injected scheduler (tests).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

CHECKPOINTS_S: tuple[float, ...] = (30.0, 120.0, 600.0)
"""When the accepted text is compared with what is there now, in seconds after the accept."""
MAX_TRACKED = 512
"""Spans followed at once; the oldest is dropped when one more is accepted."""
MAX_SPAN_CHARS = 4000
"""The longest accepted span measured; a longer one is measured on its first 4,000 chars."""


class Cancellable(Protocol):
    def cancel(self) -> Any: ...


Scheduler = Callable[[float, Callable[[], None]], Cancellable]


def loop_scheduler(delay: float, callback: Callable[[], None]) -> Cancellable:
    """`loop.call_later` on the running loop (the server's)."""
    return asyncio.get_running_loop().call_later(delay, callback)


def scaled_scheduler(scale: float) -> Scheduler:
    """`loop_scheduler` with every delay multiplied by `scale`: the end-to-end tests' clock
    (`LSP_ASSIST_TIME_SCALE=0.002` fires the 10 min checkpoint after 1.2 s); the checkpoints
    are still reported as 30 s, 2 min and 10 min."""

    def schedule(delay: float, callback: Callable[[], None]) -> Cancellable:
        return loop_scheduler(delay * scale, callback)

    return schedule


def scheduler_from_env(environ: Mapping[str, str]) -> Scheduler:
    """The loop's scheduler, scaled when `LSP_ASSIST_TIME_SCALE` is a positive number."""
    try:
        scale = float(environ.get("LSP_ASSIST_TIME_SCALE", "") or 1.0)
    except ValueError:
        scale = 1.0
    return scaled_scheduler(scale) if 0 < scale != 1.0 else loop_scheduler


def checkpoint_label(seconds: float) -> str:
    """30 -> "30s", 120 -> "2m", 600 -> "10m"."""
    s = int(seconds)
    return f"{s // 60}m" if s >= 60 and s % 60 == 0 else f"{s}s"


def retained_chars(accepted: str, current: str) -> int:
    """Characters of `accepted` still present in `current`, in order (a character diff)."""
    if not accepted or not current:
        return 0
    if accepted == current:
        return len(accepted)
    # Bound the work: the region cannot keep more than the accepted text, and a region grown
    # far past it (a pasted block inside) is compared on a window of comparable size.
    current = current[: 4 * len(accepted) + 256]
    matcher = difflib.SequenceMatcher(None, accepted, current, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks())


@dataclass
class Span:
    """One accepted span being followed (the text lives only here, in memory)."""

    sid: str
    uri: str
    start: int
    end: int
    text: str
    labels: dict[str, str]
    inserted: bool = False
    step: int = 0  # the next checkpoint's index
    timer: Cancellable | None = field(default=None, repr=False)


RetentionSink = Callable[[Span, float, int], None]
"""Called at each checkpoint with the span, the checkpoint (s) and the retained characters."""


class RetentionTracker:
    def __init__(
        self,
        read: Callable[[str], str | None],
        report: RetentionSink,
        *,
        schedule: Scheduler = loop_scheduler,
        checkpoints: tuple[float, ...] = CHECKPOINTS_S,
        max_tracked: int = MAX_TRACKED,
    ) -> None:
        self._read = read  # uri -> the document's current text (None when closed)
        self._report = report
        self._schedule = schedule
        self.checkpoints = tuple(sorted(checkpoints))
        self.max_tracked = max_tracked
        self._spans: OrderedDict[int, Span] = OrderedDict()
        self._next_key = 0

    def __len__(self) -> int:
        return len(self._spans)

    @property
    def nbytes(self) -> int:
        """About the memory held: the accepted texts (for `lspAssist.stats`' memory report)."""
        return sum(len(s.text) + 200 for s in self._spans.values())

    def track(self, sid: str, uri: str, start: int, text: str, labels: dict[str, str]) -> None:
        text = text[:MAX_SPAN_CHARS]
        if not text:
            return
        key = self._next_key
        self._next_key += 1
        span = Span(sid=sid, uri=uri, start=start, end=start, text=text, labels=dict(labels))
        self._check_inserted(span, self._read(uri))
        self._spans[key] = span
        while len(self._spans) > self.max_tracked:
            _, old = self._spans.popitem(last=False)
            self._cancel(old)
        self._arm(key, span, 0.0)

    def _arm(self, key: int, span: Span, elapsed: float) -> None:
        if span.step >= len(self.checkpoints):
            self._spans.pop(key, None)
            return
        delay = self.checkpoints[span.step] - elapsed
        at = self.checkpoints[span.step]
        span.timer = self._schedule(max(0.0, delay), lambda: self._checkpoint(key, at))

    def _checkpoint(self, key: int, at: float) -> None:
        span = self._spans.get(key)
        if span is None:
            return
        text = self._read(span.uri)
        if text is None:  # closed meanwhile (on_close should have dropped it)
            self._spans.pop(key, None)
            return
        if not span.inserted:
            # Never seen at its place: compare with what is there now, the accepted length.
            span.end = min(len(text), span.start + len(span.text))
        kept = retained_chars(span.text, text[span.start : span.end])
        try:
            self._report(span, at, min(kept, len(span.text)))
        except Exception as exc:  # telemetry never breaks the server
            log.debug("retention report failed: %s", exc)
        span.step += 1
        self._arm(key, span, at)

    def _check_inserted(self, span: Span, text: str | None) -> None:
        if text is not None and text[span.start : span.start + len(span.text)] == span.text:
            span.inserted = True
            span.end = span.start + len(span.text)

    def on_change(self, uri: str, start: int, end: int, new_len: int) -> None:
        """One content change, in offsets of the text before it (apply them in order)."""
        delta = new_len - (end - start)
        for span in self._spans.values():
            if span.uri != uri:
                continue
            if not span.inserted:
                # A zero-width anchor: an insertion exactly at it is the accepted text arriving.
                if end < span.start or (start < span.start and end <= span.start):
                    span.start += delta
                elif start < span.start < end:
                    span.start = start
                span.end = span.start
                continue
            s0, e0 = span.start, span.end
            if end <= s0 and not (start == end == s0 == e0):
                span.start = s0 + delta
            elif start < s0:
                span.start = start
            if start == end == s0 == e0:
                span.end = e0 + new_len  # typed where the whole span was deleted: a rewrite
            elif start >= e0:
                pass  # after the span (typing right after it stays outside)
            elif end <= e0:
                span.end = e0 + delta
            else:
                span.end = start + new_len
            if span.end < span.start:
                span.end = span.start

    def after_changes(self, uri: str) -> None:
        """A didChange was applied: spans still waiting for their text look for it now."""
        waiting = [s for s in self._spans.values() if s.uri == uri and not s.inserted]
        if waiting:
            text = self._read(uri)
            for span in waiting:
                self._check_inserted(span, text)

    def on_replace(self, uri: str) -> None:
        """A full-document replacement: offsets are unknown now; keep them as they were."""
        self.after_changes(uri)

    def on_close(self, uri: str) -> None:
        for key in [k for k, s in self._spans.items() if s.uri == uri]:
            self._cancel(self._spans.pop(key))

    def close(self) -> None:
        for span in self._spans.values():
            self._cancel(span)
        self._spans.clear()

    @staticmethod
    def _cancel(span: Span) -> None:
        if span.timer is not None:
            span.timer.cancel()
            span.timer = None


__all__ = ["CHECKPOINTS_S", "RetentionTracker", "Span", "checkpoint_label", "retained_chars"]
