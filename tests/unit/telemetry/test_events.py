"""Suggestion ids and events: one id per suggestion (continuations keep it), shown once,
accepts (whole, in part) feed the retention tracker, resolved suggestions are forgotten, and
no row holds the suggestion's text."""

from __future__ import annotations

import json

from lsp_assist.telemetry.events import Labels, SuggestionEvents
from tests.unit.telemetry.clock import FakeClock

LABELS = Labels(tier="fast", provider="openai", model="fake-coder", language="python", source="model")
MARKER = "Zq9_MARKER_sk_live_4eC39HqLyjWDarjtT1zdp7dc"


class World:
    def __init__(self, text: str) -> None:
        self.text: str | None = text
        self.rows: list[dict[str, object]] = []
        self.clock = FakeClock()
        ids = iter(f"s{i}" for i in range(1000))
        self.events = SuggestionEvents(
            self.rows.append,
            lambda uri: self.text,
            clock=self.clock,
            schedule=self.clock.schedule,
            new_id=lambda: next(ids),
        )

    def edit(self, start: int, end: int, new: str) -> None:
        assert self.text is not None
        self.events.on_change("u", start, end, len(new))
        self.text = self.text[:start] + new + self.text[end:]
        self.events.after_changes("u")

    def kinds(self) -> list[str]:
        return [str(r["event"]) for r in self.rows]


def test_typing_through_keeps_the_suggestion_id() -> None:
    w = World("x = ")
    sid = w.events.issue("u", 4, "compute(a, b)", 0, LABELS)
    w.edit(4, 4, "com")  # the user types what it predicted
    assert w.events.issue("u", 7, "pute(a, b)", 0, LABELS) == sid
    # VS Code's form: the range covers the typed part, insertText repeats it.
    assert w.events.issue("u", 4, "compute(a, b)", 3, LABELS) == sid
    w.edit(7, 7, "X")  # typed something it did not predict
    assert w.events.issue("u", 8, "(y)", 0, LABELS) != sid


def test_shown_once_accept_implies_shown_and_measures_retention() -> None:
    w = World("x = ")
    sid = w.events.issue("u", 4, "compute()", 0, LABELS)
    assert w.events.event(sid, "shown") and w.events.event(sid, "shown")
    w.edit(4, 4, "compute()")
    assert w.events.event(sid, "accepted")
    assert w.kinds() == ["shown", "accepted"]
    accepted = w.rows[1]
    assert accepted["accepted_chars"] == 9 and accepted["first_accept"] is True
    assert (
        accepted["tier"] == "fast" and accepted["model"] == "fake-coder" and accepted["language"] == "python"
    )
    assert len(w.events) == 0  # resolved: the ledger forgot its text
    w.clock.advance(600)
    retained = [r for r in w.rows if r["event"] == "retained"]
    assert [(r["checkpoint_s"], r["retained_chars"]) for r in retained] == [(30, 9), (120, 9), (600, 9)]
    second = w.events.issue("u", 13, "\n", 0, LABELS)
    assert w.events.event(second, "accepted")
    assert w.kinds()[-2:] == ["shown", "accepted"]  # accepting an unshown one counts it shown


def test_partial_accepts_then_the_rest() -> None:
    w = World("")
    sid = w.events.issue("u", 0, "foo(bar)\nbaz()", 0, LABELS)
    w.events.event(sid, "shown")
    w.edit(0, 0, "foo")
    assert w.events.event(sid, "accepted_partial", chars=3, offset=0, unit="word")
    w.edit(3, 3, "(bar)")
    assert w.events.event(sid, "accepted_partial", chars=5, offset=3, unit="line")
    w.edit(8, 8, "\nbaz()")
    assert w.events.event(sid, "accepted")  # the rest, from where the last accept ended
    accepts = [r for r in w.rows if str(r["event"]).startswith("accepted")]
    assert [(r["event"], r["accepted_chars"], r.get("unit"), r["first_accept"]) for r in accepts] == [
        ("accepted_partial", 3, "word", True),
        ("accepted_partial", 5, "line", False),
        ("accepted", 6, None, False),
    ]
    w.clock.advance(30)
    assert sorted(r["retained_chars"] for r in w.rows if r["event"] == "retained") == [3, 5, 6]


def test_dismissed_and_typed_over_forget_the_text() -> None:
    w = World("")
    a = w.events.issue("u", 0, "first()", 0, LABELS)
    b = w.events.issue("u", 0, "other()", 0, LABELS)
    assert len(w.events) == 2
    w.events.event(a, "shown")
    w.events.event(a, "dismissed")
    w.events.event(b, "typed_over")
    assert len(w.events) == 0
    assert w.kinds() == ["shown", "dismissed", "typed_over"]
    assert not w.events.event(a, "accepted")  # gone: unknown now
    assert w.events.counts.unknown == 1
    assert not w.events.event("nope", "shown") and not w.events.event(b, "exploded")


def test_the_ledger_is_bounded_in_count_and_time() -> None:
    w = World("")
    w.events.max_issued = 5
    for i in range(8):
        w.events.issue("u", 0, f"v{i} = {i}", 0, LABELS)
    assert len(w.events) == 5
    w.clock.advance(w.events.ttl_s + 1)
    w.events.issue("u", 0, "late = 1", 0, LABELS)
    assert len(w.events) == 1


def test_no_row_holds_the_suggestion_or_the_code() -> None:
    w = World(f"token = '{MARKER}'\n")
    text = f"check('{MARKER}')"
    sid = w.events.issue("u", len(w.text or ""), text, 0, LABELS)
    w.events.event(sid, "shown")
    w.edit(len(w.text or ""), len(w.text or ""), text)
    w.events.event(sid, "accepted")
    w.clock.advance(600)
    dumped = json.dumps(w.rows)
    assert len(w.rows) == 5
    assert MARKER not in dumped and "check(" not in dumped and "token" not in dumped
    assert w.events.report()["accepted_chars"] == len(text)


def test_an_accept_at_a_position_holds_for_an_older_copy_of_the_item() -> None:
    # The client still shows the item it got before the server continued it (its reply to
    # the newer request was dropped as superseded): the accept's document position decides.
    w = World("x = ")
    sid = w.events.issue("u", 4, "compute()", 0, LABELS)
    w.edit(4, 4, "co")
    assert w.events.issue("u", 6, "mpute()", 0, LABELS) == sid  # the server's newer copy
    w.edit(6, 6, "mpute()")
    assert w.events.event(sid, "accepted", chars=7, at=6)  # accepted at the cursor after "co"
    assert w.rows[-1]["accepted_chars"] == 7
    w.clock.advance(30)
    assert w.rows[-1]["retained_chars"] == 7
