"""What happens to a suggestion on screen: shown, accepted (whole or in part), dismissed,
typed over; and how much of what was accepted is still there later (`retention.py`).

Every answered inline completion gets a suggestion id (`issue`), carried to the editor as
the argument of the item's `lspAssist.accepted` command; the clients report events by that
id (`lspAssist/suggestionEvent`) and the command itself reports a whole accept. An answer
that continues one already on screen (the user typed its first characters, or it grew)
keeps that suggestion's id, so one suggestion is one id however many requests it took.

Each event becomes one row: the event, the id and the suggestion's labels (feature, tier,
provider, model, language, source), plus counts (`accepted_chars`, `retained_chars`,
`checkpoint_s`). Never code: the suggestion's text stays in this process's memory (the
ledger: at most `MAX_ISSUED` suggestions, each forgotten when resolved or after `TTL_S`),
and an accepted span only until its last retention checkpoint. Rows go to the audit log
(where `lsp-assist usage` reads model calls), the stats collector and OpenTelemetry.

Kinds (`KINDS`):

- ``shown``: the editor drew it (Neovim: the extmark is set; VS Code: returned and not
  superseded for 750 ms, its stable API has no "shown" event). Recorded once per id.
- ``accepted``: accepted whole (what was left of it). An accept implies shown.
- ``accepted_partial``: a word or a line of it (``unit``), ``chars`` characters.
- ``dismissed``: the user refused it (Esc / ``<C-]>`` / leaving insert mode, or the cursor
  moved away).
- ``typed_over``: the user typed something it did not predict, so it went away.
- ``retained``: written by the server at each checkpoint (30 s, 2 min, 10 min) per
  accepted span, with ``checkpoint_s`` and ``retained_chars``.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from lsp_assist.telemetry.retention import (
    CHECKPOINTS_S,
    MAX_SPAN_CHARS,
    MAX_TRACKED,
    RetentionTracker,
    Scheduler,
    Span,
    loop_scheduler,
)

log = logging.getLogger(__name__)

CLIENT_KINDS = ("shown", "accepted", "accepted_partial", "dismissed", "typed_over")
KINDS = (*CLIENT_KINDS, "retained")
UNITS = ("word", "line")
MAX_ISSUED = 256
"""Suggestions remembered at once (their text, in memory), oldest forgotten first."""
TTL_S = 600.0
"""An unresolved suggestion is forgotten this long after it was last answered or seen."""
ISSUED_TEXT_CHARS = MAX_SPAN_CHARS
"""A remembered suggestion's text is cut here (retention follows no more of a span)."""
EVENTS_BYTES = MAX_ISSUED * (ISSUED_TEXT_CHARS + 300) + MAX_TRACKED * (MAX_SPAN_CHARS + 200)
"""What `nbytes` can reach: the ledger and the accepted spans, each at its count bound."""
_CONTINUATION_LOOKBACK = 4  # a document's latest suggestions looked at for a continuation
LABELS = ("feature", "tier", "provider", "model", "language", "source")


@dataclass(frozen=True)
class Labels:
    """What a suggestion is counted under. Names only, never code or paths."""

    feature: str = "completion"
    tier: str = ""
    provider: str = ""
    model: str = ""
    language: str = ""
    source: str = ""  # how it was answered: model, cache, typing_through, attached, fallback

    def as_dict(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in LABELS}


@dataclass
class Issued:
    """One suggestion answered to the editor (memory only)."""

    sid: str
    uri: str
    start: int  # code-point offset where the item's insert text starts (its range start)
    text: str  # the item's insert text
    typed: int  # characters of `text` already in the document when it was answered
    labels: Labels
    seen: float
    shown: bool = False
    accepted: bool = False


Row = dict[str, object]


@dataclass
class EventCounts:
    """Running totals for `lspAssist.stats` (this process, since it started)."""

    events: dict[str, int] = field(default_factory=dict)
    accepted_ids: int = 0
    accepted_chars: int = 0
    retained_chars: dict[str, int] = field(default_factory=dict)  # checkpoint label -> chars
    measured_chars: dict[str, int] = field(default_factory=dict)  # accepted chars measured there
    unknown: int = 0  # events for ids this process does not know (restarted, forgotten)


@dataclass(frozen=True)
class EventBounds:
    """How much the recorder remembers and for how long: suggestions at once, an unresolved
    one's lifetime, and the checkpoints at which an accepted span is measured."""

    max_issued: int = MAX_ISSUED
    ttl_s: float = TTL_S
    checkpoints: tuple[float, ...] = CHECKPOINTS_S


class SuggestionEvents:
    """The ledger of answered suggestions, the event recorder and the retention tracker."""

    def __init__(
        self,
        write: Callable[[Row], None],
        read_text: Callable[[str], str | None],
        *,
        clock: Callable[[], float] = time.monotonic,
        schedule: Scheduler = loop_scheduler,
        new_id: Callable[[], str] | None = None,
        bounds: EventBounds = EventBounds(),
    ) -> None:
        self._write = write
        self._read = read_text
        self._clock = clock
        self.max_issued = bounds.max_issued
        self.ttl_s = bounds.ttl_s
        self._new_id = new_id or (lambda: "s" + secrets.token_hex(8))
        self._issued: OrderedDict[str, Issued] = OrderedDict()
        self.counts = EventCounts()
        self.retention = RetentionTracker(
            read_text, self._retained, schedule=schedule, checkpoints=bounds.checkpoints
        )

    # --- the ledger ---------------------------------------------------------------------

    def issue(self, uri: str, start: int, text: str, typed: int, labels: Labels) -> str:
        """The id for an answer inserting `text` at `start` (a continuation keeps its id)."""
        text = text[:ISSUED_TEXT_CHARS]
        now = self._clock()
        self._expire(now)
        doc = self._read(uri)
        prior = self._continued(uri, start, text, doc)
        if prior is not None:
            prior.start, prior.text, prior.typed, prior.seen = start, text, typed, now
            self._issued.move_to_end(prior.sid)
            return prior.sid
        sid = self._new_id()
        self._issued[sid] = Issued(sid, uri, start, text, typed, labels, now)
        while len(self._issued) > self.max_issued:
            self._issued.popitem(last=False)
        return sid

    def _continued(self, uri: str, start: int, text: str, doc: str | None) -> Issued | None:
        """The suggestion this answer continues: same document, starting at or after it, the
        text between typed as it predicted, and the rest agreeing (either may be longer)."""
        if doc is None:
            return None
        looked = 0
        for entry in reversed(self._issued.values()):
            if entry.uri != uri:
                continue
            looked += 1
            if looked > _CONTINUATION_LOOKBACK:
                break
            lo = min(start, entry.start)
            # Both read from the earlier start: what the document holds up to each one's own
            # start (typed through), then its text; one must begin inside the other's text.
            if start > entry.start and start - entry.start >= len(entry.text):
                continue
            if entry.start > start and entry.start - start > len(text):
                continue
            mine = doc[lo : entry.start] + entry.text
            theirs = doc[lo:start] + text
            if mine.startswith(theirs) or theirs.startswith(mine):
                return entry
        return None

    def _expire(self, now: float) -> None:
        while self._issued:
            first = next(iter(self._issued.values()))
            if now - first.seen <= self.ttl_s:
                break
            self._issued.popitem(last=False)

    def __len__(self) -> int:
        return len(self._issued)

    @property
    def nbytes(self) -> int:
        """About the memory held by suggestion texts (ledger and accepted spans)."""
        return sum(len(e.text) + 300 for e in self._issued.values()) + self.retention.nbytes

    # --- events -------------------------------------------------------------------------

    def event(
        self,
        sid: str,
        kind: str,
        *,
        chars: int | None = None,
        offset: int | None = None,
        at: int | None = None,
        unit: str = "",
    ) -> bool:
        """A client's event for suggestion `sid`. False when the id or the kind is unknown.

        For accepts, `offset` is how many characters of the item's text were already in the
        document (typed through, or accepted in part before) and `chars` how many this
        accept inserted; without them, the rest of the item after what was typed when it
        was answered. `at` (a code-point offset in the document) says where the accepted
        text starts instead of `offset`: it holds even when the client's copy of the item is
        older than the server's latest continuation of it.
        """
        if kind not in CLIENT_KINDS:
            return False
        entry = self._issued.get(sid)
        if entry is None:
            self.counts.unknown += 1
            return False
        entry.seen = self._clock()
        if kind == "shown":
            if not entry.shown:
                entry.shown = True
                self._emit(entry, "shown")
            return True
        if kind in ("accepted", "accepted_partial"):
            if not entry.shown:  # accepting it means it was on screen
                entry.shown = True
                self._emit(entry, "shown")
            if at is not None:
                offset = at - entry.start
            begin = entry.typed if offset is None else max(0, min(offset, len(entry.text)))
            stop = len(entry.text) if chars is None else min(len(entry.text), begin + max(0, chars))
            span = entry.text[begin:stop]
            first = not entry.accepted
            entry.accepted = True
            entry.typed = stop  # a later accept without an offset goes on from here
            extra: Row = {"accepted_chars": len(span), "first_accept": first}
            if kind == "accepted_partial" and unit in UNITS:
                extra["unit"] = unit
            self._emit(entry, kind, extra)
            if first:
                self.counts.accepted_ids += 1
            self.counts.accepted_chars += len(span)
            self.retention.track(entry.sid, entry.uri, entry.start + begin, span, entry.labels.as_dict())
            if kind == "accepted":
                self._issued.pop(sid, None)
            return True
        # dismissed / typed_over: resolved; its text is forgotten.
        self._emit(entry, kind)
        self._issued.pop(sid, None)
        return True

    def _emit(self, entry: Issued, kind: str, extra: Mapping[str, object] | None = None) -> None:
        self.counts.events[kind] = self.counts.events.get(kind, 0) + 1
        row: Row = {"event": kind, "suggestion_id": entry.sid, **entry.labels.as_dict()}
        if extra:
            row.update(extra)
        self._send(row)

    def _retained(self, span: Span, at: float, kept: int) -> None:
        label = str(int(at))
        self.counts.retained_chars[label] = self.counts.retained_chars.get(label, 0) + kept
        self.counts.measured_chars[label] = self.counts.measured_chars.get(label, 0) + len(span.text)
        self.counts.events["retained"] = self.counts.events.get("retained", 0) + 1
        row: Row = {
            "event": "retained",
            "suggestion_id": span.sid,
            **span.labels,
            "checkpoint_s": int(at),
            "accepted_chars": len(span.text),
            "retained_chars": kept,
        }
        self._send(row)

    def _send(self, row: Row) -> None:
        try:
            self._write(row)
        except Exception as exc:  # telemetry never breaks the server
            log.debug("suggestion event not recorded: %s", exc)

    # --- the document's life ----------------------------------------------------------------

    def on_change(self, uri: str, start: int, end: int, new_len: int) -> None:
        self.retention.on_change(uri, start, end, new_len)

    def after_changes(self, uri: str) -> None:
        self.retention.after_changes(uri)

    def on_close(self, uri: str) -> None:
        self.retention.on_close(uri)
        for sid in [s for s, e in self._issued.items() if e.uri == uri]:
            self._issued.pop(sid, None)

    def close(self) -> None:
        self.retention.close()
        self._issued.clear()

    def report(self) -> dict[str, object]:
        c = self.counts
        shown = c.events.get("shown", 0)
        return {
            "events": dict(c.events),
            "shown": shown,
            "accepted": c.accepted_ids,
            "acceptance_rate": (c.accepted_ids / shown) if shown else None,
            "accepted_chars": c.accepted_chars,
            "retained_chars": dict(c.retained_chars),
            "retention_rate": {
                k: (c.retained_chars.get(k, 0) / v) if v else None for k, v in c.measured_chars.items()
            },
            "unknown_ids": c.unknown,
        }


__all__ = ["CLIENT_KINDS", "KINDS", "Issued", "Labels", "SuggestionEvents"]
