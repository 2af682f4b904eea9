"""Each answer split at the model, and the figures of a scenario.

An answer's split: the server's time before the model call (request written -> the model read
the HTTP request) and after the token it needed (the model wrote the token ending the first
line -> the answer parsed), and its whole overhead, the answer's time less the model's own
time between the two (read -> first line). An answer no model stream of its own served
(a cache hit, typing-through) is all overhead. The floor: what the model itself took, read ->
first line and read -> last token, on its own records.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lsp_assist.bench.model import StreamRecord


def p50(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def p90(values: list[float]) -> float | None:
    """The nearest-rank 90th percentile."""
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, -(-9 * len(s) // 10) - 1))]


@dataclass
class Answer:
    sent: float  # monotonic: the request was written
    received: float  # monotonic: its response was parsed
    text: str  # the first item's text ("" for none)
    item: dict[str, Any] = field(default_factory=dict)

    @property
    def ms(self) -> float:
        return (self.received - self.sent) * 1000.0


def first_item(response: dict[str, Any]) -> dict[str, Any]:
    """The first item of an inline-completion or completion answer ({} for none)."""
    res = response.get("result") or {}
    items = res.get("items", []) if isinstance(res, dict) else res
    return dict(items[0]) if isinstance(items, list) and items and isinstance(items[0], dict) else {}


def item_text(item: dict[str, Any]) -> str:
    text = item.get("insertText")
    if isinstance(text, dict):  # an inline-completion StringValue snippet
        text = text.get("value")
    if text is None:
        text = (item.get("textEdit") or {}).get("newText") or item.get("label") or ""
    return str(text)


def stream_of(records: list[StreamRecord], answer: Answer) -> StreamRecord | None:
    """The model stream the answer came from: read after the request was sent, its first
    line written before the answer arrived (the latest such line when several were)."""
    found = [
        r
        for r in records
        if answer.sent <= r.t_read <= answer.received
        and r.t_first_line is not None
        and r.t_first_line <= answer.received
    ]
    return max(found, key=lambda r: r.t_first_line or 0.0) if found else None


def calls_since(
    records: list[StreamRecord], since: float, background: Callable[[dict[str, Any]], bool]
) -> Calls:
    """Model requests read since `since`: all of them, and those `background` marks."""
    late = [r for r in records if r.t_read >= since]
    return Calls(len(late), sum(1 for r in late if background(r.body)))


@dataclass(frozen=True)
class Calls:
    all: int
    background: int  # of them, made for no request of the editor's (a prefetch)


@dataclass
class Figures:
    """One scenario for one server, in ms."""

    answer: list[float] = field(default_factory=list)  # request sent -> answer parsed
    before: list[float] = field(default_factory=list)  # request sent -> the model read it
    after: list[float] = field(default_factory=list)  # first line's last token -> answer parsed
    overhead: list[float] = field(default_factory=list)  # the answer less the model's own time
    calls: list[int] = field(default_factory=list)  # model calls per trial
    background: list[int] = field(default_factory=list)  # of them, in the background
    empty: int = 0  # answers with no text
    unanswered: int = 0  # requests that got no answer in time

    def add(self, answer: Answer, records: list[StreamRecord], calls: Calls) -> None:
        self.answer.append(answer.ms)
        self.calls.append(calls.all)
        self.background.append(calls.background)
        if not answer.text.strip():
            self.empty += 1
        stream = stream_of(records, answer)
        if stream is None or stream.t_first_line is None:
            self.overhead.append(answer.ms)
            return
        before = (stream.t_read - answer.sent) * 1000.0
        after = (answer.received - stream.t_first_line) * 1000.0
        self.before.append(before)
        self.after.append(after)
        self.overhead.append(before + after)


@dataclass
class Floor:
    """The model's own time, read -> first line's last token and -> last token, in ms."""

    first_line: list[float] = field(default_factory=list)
    full: list[float] = field(default_factory=list)
    # The full stream as the model's settings make it: shown when no stream was read to its
    # end (a Tabby answer ends at the first line).
    expected_full: float | None = None

    @classmethod
    def of(cls, records: list[StreamRecord]) -> Floor:
        floor = cls()
        for r in records:
            if r.t_first_line is not None:
                floor.first_line.append((r.t_first_line - r.t_read) * 1000.0)
            if r.t_last is not None:
                floor.full.append((r.t_last - r.t_read) * 1000.0)
        return floor

    def extend(self, other: Floor) -> None:
        self.first_line.extend(other.first_line)
        self.full.extend(other.full)
