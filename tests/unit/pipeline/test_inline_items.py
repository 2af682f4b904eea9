"""An answer's items: the range over typed text, and one suggestion id per item (no pygls)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lsp_assist.domain import Cursor, Outcome, Suggestion
from lsp_assist.pipeline import inline_items
from lsp_assist.telemetry.events import Labels

URI = "file:///w/a.py"


@dataclass
class _Issuer:
    issued: list[tuple[Cursor, str, int]] = field(default_factory=list)
    labelled: list[tuple[str, str, str, str]] = field(default_factory=list)

    def suggestion_labels(self, uri: str, tier: str, provider: str, model: str, source: str) -> Labels:
        self.labelled.append((tier, provider, model, source))
        return Labels(feature="completion", tier=tier, provider=provider, model=model, source=source)

    def issue_suggestion(self, uri: str, at: Cursor, text: str, typed: int, labels: Labels) -> str:
        self.issued.append((at, text, typed))
        return f"id{len(self.issued)}"


def test_typed_text_on_the_cursors_line_is_covered() -> None:
    assert inline_items.typed_span(Cursor(3, 10), "ret") == (Cursor(3, 7), "ret")
    # Only what follows the last newline: a range stays on one line.
    assert inline_items.typed_span(Cursor(3, 4), "x = 1\n    ") == (Cursor(3, 0), "    ")


def test_nothing_is_covered_without_typed_text_or_room_before_the_cursor() -> None:
    assert inline_items.typed_span(Cursor(3, 10), "") == (Cursor(3, 10), "")
    assert inline_items.typed_span(Cursor(3, 2), "return") == (Cursor(3, 2), "")
    assert inline_items.typed_span(Cursor(3, 2), "a\n") == (Cursor(3, 2), "")


def test_items_issue_one_id_per_item_from_the_range_start() -> None:
    issuer = _Issuer()
    result = Suggestion(
        text="urn x",
        outcome=Outcome.TYPING_THROUGH,
        tier="fast",
        provider="p",
        model="m",
        typed="ret",
        alternatives=["a", "", "b"],
    )
    got = inline_items.items(issuer, URI, Cursor(2, 7), result)
    assert got == inline_items.Items(start=Cursor(2, 4), typed="ret", ids=["id1", "id2", "id3"])
    # The first covers the typed text; alternatives insert at the cursor; empty ones get none.
    assert issuer.issued == [(Cursor(2, 4), "return x", 3), (Cursor(2, 7), "a", 0), (Cursor(2, 7), "b", 0)]
    assert issuer.labelled == [("fast", "p", "m", "typing_through")]


def test_items_without_typed_text_start_at_the_cursor() -> None:
    issuer = _Issuer()
    got = inline_items.items(
        issuer, URI, Cursor(0, 0), Suggestion(text="x", outcome=Outcome.MODEL, typed="ab")
    )
    assert got == inline_items.Items(start=Cursor(0, 0), typed="", ids=["id1"])
    assert issuer.issued == [(Cursor(0, 0), "x", 0)]


def test_answered_line_has_numbers_only() -> None:
    result = Suggestion(
        text="secret()",
        outcome=Outcome.MODEL,
        tier="fast",
        stages={"ttft": 10.0, "connect": 2.5, "total": 40.04},
    )
    line = inline_items.answered_line(result, 7, Cursor(3, 4))
    assert line == (
        "inline completion answered: outcome=model tier=fast version=7 line=3 col=4"
        " ttft_ms=12.5 total_ms=40.0 chars=8"
    )
