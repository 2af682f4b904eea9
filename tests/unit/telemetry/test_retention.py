"""The retention tracker: accepted spans followed through edits, measured at 30 s, 2 min and
10 min on a fake clock, then forgotten."""

from __future__ import annotations

from lsp_assist.telemetry.retention import RetentionTracker, Span, checkpoint_label, retained_chars
from tests.unit.telemetry.clock import FakeClock


class Doc:
    """A document and the changes an editor would send for each edit."""

    def __init__(self, text: str) -> None:
        self.text: str | None = text
        self.tracker: RetentionTracker | None = None

    def edit(self, start: int, end: int, new: str) -> None:
        assert self.text is not None and self.tracker is not None
        self.tracker.on_change("u", start, end, len(new))
        self.text = self.text[:start] + new + self.text[end:]
        self.tracker.after_changes("u")


def make(text: str) -> tuple[Doc, RetentionTracker, FakeClock, list[tuple[float, int]]]:
    doc = Doc(text)
    clock = FakeClock()
    reports: list[tuple[float, int]] = []

    def report(span: Span, at: float, kept: int) -> None:
        reports.append((at, kept))

    tracker = RetentionTracker(lambda uri: doc.text, report, schedule=clock.schedule)
    doc.tracker = tracker
    return doc, tracker, clock, reports


ACCEPTED = "return a + b"


def test_kept_whole_is_reported_at_each_checkpoint_then_forgotten() -> None:
    _, tracker, clock, reports = make("def f(a, b):\n    " + ACCEPTED + "\n")
    tracker.track("s1", "u", 17, ACCEPTED, {"tier": "fast"})
    clock.advance(29)
    assert reports == []
    clock.advance(1)
    assert reports == [(30.0, 12)]
    clock.advance(600)
    assert reports == [(30.0, 12), (120.0, 12), (600.0, 12)]
    assert len(tracker) == 0 and clock.pending == 0  # the text is gone after 10 min


def test_edits_before_and_around_the_span_move_it_without_counting() -> None:
    doc, tracker, clock, reports = make("def f(a, b):\n    " + ACCEPTED + "\n")
    tracker.track("s1", "u", 17, ACCEPTED, {})
    doc.edit(0, 0, "# header\n")  # a line above
    doc.edit(26, 26, "x = 1; ")  # typed right before the span
    end = 26 + 7 + len(ACCEPTED)
    doc.edit(end, end, "  # done")  # typed right after it
    clock.advance(30)
    assert reports == [(30.0, len(ACCEPTED))]


def test_a_changed_span_keeps_what_a_character_diff_finds() -> None:
    doc, tracker, clock, reports = make("    " + ACCEPTED + "\n")
    tracker.track("s1", "u", 4, ACCEPTED, {})
    doc.edit(4 + 11, 4 + 12, "c")  # b -> c
    clock.advance(30)
    doc.edit(4 + 7, 4 + 12, "")  # delete "a + c"
    clock.advance(90)
    doc.edit(4, 4 + 7, "")  # and the rest
    clock.advance(480)
    assert reports == [(30.0, 11), (120.0, 7), (600.0, 0)]


def test_a_span_rewritten_in_place_is_compared_with_the_new_text() -> None:
    doc, tracker, clock, reports = make(ACCEPTED + "\n")
    tracker.track("s1", "u", 0, ACCEPTED, {})
    doc.edit(0, len(ACCEPTED), "")
    doc.edit(0, 0, "return a - b")  # typed where the span was
    clock.advance(30)
    assert reports == [(30.0, len(ACCEPTED) - 1)]


def test_accept_before_the_change_that_inserts_it() -> None:
    # Neovim debounces didChange: the accept can arrive while the text is not there yet.
    doc, tracker, clock, reports = make("x = \n")
    tracker.track("s1", "u", 4, "compute()", {})
    doc.edit(0, 0, "# top\n")  # an edit above, before the insertion arrives
    doc.edit(10, 10, "compute()")  # the accepted text arrives at the moved anchor
    doc.edit(19, 19, " + 1")  # typed after it: outside
    clock.advance(30)
    assert reports == [(30.0, 9)]


def test_a_closed_document_ends_its_measurement() -> None:
    doc, tracker, clock, reports = make(ACCEPTED)
    tracker.track("s1", "u", 0, ACCEPTED, {})
    clock.advance(30)
    tracker.on_close("u")
    doc.text = None
    clock.advance(600)
    assert reports == [(30.0, len(ACCEPTED))]
    assert len(tracker) == 0


def test_memory_is_bounded_oldest_first() -> None:
    doc, _, clock, reports = make("abc " * 100)
    tracker = RetentionTracker(
        lambda uri: doc.text, lambda s, a, k: reports.append((a, k)), schedule=clock.schedule, max_tracked=3
    )
    for i in range(5):
        tracker.track(f"s{i}", "u", 4 * i, "abc", {})
    assert len(tracker) == 3
    clock.advance(30)
    assert reports == [(30.0, 3)] * 3


def test_retained_chars_is_a_character_diff() -> None:
    assert retained_chars("abcdef", "abcdef") == 6
    assert retained_chars("abcdef", "abXdef") == 5
    assert retained_chars("abcdef", "") == 0
    assert retained_chars("abc", "zzabczz") == 3
    assert checkpoint_label(30) == "30s" and checkpoint_label(120) == "2m" and checkpoint_label(600) == "10m"
