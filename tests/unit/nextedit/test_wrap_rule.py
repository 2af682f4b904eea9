"""A rule set on the enlarged tuning half's false alarms and borne out by both held-out
halves: an edit that wraps the old text in a larger expression waits for a second one."""

from __future__ import annotations

from tests.unit.nextedit.helpers import line_of, predict, retype, session

URI = "file:///ws/m.py"

TYPED = (
    "def table(name: str, width: int = 80) -> None:\n"
    "    pass\n\n\n"
    "def array(name: str, height: int = 80) -> None:\n"
    "    pass\n"
)


def test_a_type_widened_once_proposes_nothing() -> None:
    # `width: int` -> `width: Optional[int]` is that parameter's change, not a pattern.
    store, history = session(TYPED, URI)
    doc = retype(store, URI, "int", "Optional[int]")
    assert predict(doc, history) == []


def test_the_second_matching_wrap_proposes_the_rest() -> None:
    text = TYPED + "\n\ndef other(depth: int = 80) -> None:\n    pass\n"
    store, history = session(text, URI)
    retype(store, URI, "int", "Optional[int]")
    doc = retype(store, URI, "int", "Optional[int]", nth=1)  # the 0th is inside the first
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "def other(depth: int = 80) -> None:" and p.text == "Optional[int]"


def test_a_rename_is_no_wrap() -> None:
    # The new name contains the old one but is a name itself: `count` -> `counter`.
    text = "def f(count: int) -> int:\n    return count + 1\n"
    store, history = session(text, URI)
    doc = retype(store, URI, "count", "counter")
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "return count + 1" and p.text == "counter"
