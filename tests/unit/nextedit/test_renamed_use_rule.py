"""A rule set on the tuning half's errors and kept by both held-out halves: a use renamed
to a fresh name leaves the old name's binding until the change repeats."""

from __future__ import annotations

from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor
from lsp_assist.nextedit import rules
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.proposal import Proposal
from tests.unit.nextedit.helpers import retype, session

URI = "file:///ws/m.py"


def _predict(doc: Document, history: EditHistory) -> list[Proposal]:
    h = history.get(doc.uri)
    assert h is not None and h.last is not None
    end = h.last.end
    line = doc.text.count("\n", 0, end)
    cursor = Cursor(line, end - (doc.text.rfind("\n", 0, end) + 1))
    return rules.predict(doc, h.last, cursor, [], list(h.edits)[:-1])


def _line(doc: Document, p: Proposal) -> str:
    return doc.line(p.start.line).strip()


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
    assert _predict(doc, history) == []


def test_a_renamed_import_still_proposes_its_uses() -> None:
    store, history = session(IMPORTED, URI)
    doc = retype(store, URI, "Flask", "App")
    p = _predict(doc, history)[0]
    assert _line(doc, p) == "def __init__(self, app: Flask) -> None:" and p.text == "App"
