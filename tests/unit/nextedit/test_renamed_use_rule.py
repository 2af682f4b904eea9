"""A rule set on the tuning half's errors and kept by both held-out halves: a use renamed
to a fresh name leaves the old name's binding until the change repeats."""

from __future__ import annotations

from tests.unit.nextedit.helpers import line_of, predict, retype, session

URI = "file:///ws/m.py"


IMPORTED = (
    "from .app import Flask\n\n\n"
    "class Provider:\n"
    "    def __init__(self, app: Flask) -> None:\n"
    "        self.app = app\n"
)


def test_a_use_renamed_to_a_fresh_name_does_not_propose_the_import() -> None:
    # The developer points one annotation at another class (imported elsewhere next);
    # `from .app import Flask` still serves whatever else uses it.
    store, history = session(IMPORTED, URI)
    doc = retype(store, URI, "Flask", "App", nth=1)
    assert predict(doc, history) == []


def test_a_renamed_import_still_proposes_its_uses() -> None:
    store, history = session(IMPORTED, URI)
    doc = retype(store, URI, "Flask", "App")
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "def __init__(self, app: Flask) -> None:" and p.text == "App"
