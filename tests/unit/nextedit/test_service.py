"""`NextEditService.suggest`: who answers for each `predictor`, and never for a stale text."""

from __future__ import annotations

import dataclasses

from lsp_assist.config.schema import NextEditConfig
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.proposal import Proposal, proposal
from lsp_assist.nextedit.service import NextEditService
from lsp_assist.telemetry.events import SuggestionEvents
from tests.unit.nextedit.helpers import change, position, retype, session

URI = "file:///ws/m.py"
TEXT = "def f(width):\n    return width * 2\n\n\nvalue = 1\n"


class Model:
    """A model predictor double: proposes `value` -> `VALUE`; may edit the text meanwhile."""

    def __init__(self, on_call: object = None) -> None:
        self.calls = 0
        self.on_call = on_call

    async def __call__(self, doc: Document, history: EditHistory, cursor: Cursor) -> list[Proposal]:
        self.calls += 1
        if callable(self.on_call):
            self.on_call()
        at = doc.text.index("value")
        return [proposal(doc, at, at + 5, "VALUE", "zeta")]


def _service(predictor: str, model: Model, rename: bool = True) -> tuple[NextEditService, Document]:
    store, history = session(TEXT, URI)
    if rename:
        doc = retype(store, URI, "width", "size")
    else:
        doc = change(store, URI, len(TEXT), len(TEXT), "x = 2\n")  # new code: nothing to repeat
    events = SuggestionEvents(lambda row: None, lambda uri: None)
    svc = NextEditService(store, history, events)
    svc.configure(dataclasses.replace(NextEditConfig(), predictor=predictor), model, ("fast", "openai", "m"))
    return svc, doc


async def _ask(svc: NextEditService, doc: Document) -> list[str]:
    h = svc.history.get(doc.uri)
    assert h is not None and h.last is not None
    answers = await svc.suggest(doc.uri, doc.version, position(doc, h.last.end))
    return [a.proposal.text for a in answers]


async def test_rules_never_call_the_model() -> None:
    model = Model()
    svc, doc = _service("rules", model, rename=False)
    assert await _ask(svc, doc) == [] and model.calls == 0


async def test_both_asks_the_model_only_when_the_rules_have_nothing() -> None:
    model = Model()
    svc, doc = _service("both", model)
    assert await _ask(svc, doc) == ["size"] and model.calls == 0
    svc, doc = _service("both", model, rename=False)
    assert await _ask(svc, doc) == ["VALUE"] and model.calls == 1


async def test_model_alone_answers_even_where_the_rules_would() -> None:
    model = Model()
    svc, doc = _service("model", model)
    assert await _ask(svc, doc) == ["VALUE"] and model.calls == 1


async def test_a_text_changed_while_the_model_answered_gets_nothing() -> None:
    holder: dict[str, object] = {}

    def type_meanwhile() -> None:
        store = holder["svc"].store  # type: ignore[attr-defined]
        change(store, URI, 0, 0, "#")

    model = Model(type_meanwhile)
    svc, doc = _service("model", model)
    holder["svc"] = svc
    assert await _ask(svc, doc) == [] and model.calls == 1


async def test_each_answer_has_its_own_id_and_events_resolve_it() -> None:
    svc, doc = _service("rules", Model())
    h = svc.history.get(doc.uri)
    assert h is not None and h.last is not None
    (answer,) = await svc.suggest(doc.uri, doc.version, position(doc, h.last.end))
    assert svc.event(answer.id, "shown") and svc.event(answer.id, "dismissed")
    assert not svc.event(answer.id, "accepted")  # resolved: forgotten


async def test_a_rename_sent_as_several_ranges_in_one_notification_is_proposed_on() -> None:
    """VS Code's `applyEdit` sends a rename as minimal disjoint ranges in one didChange."""
    from tests.unit.nextedit.test_history import vscode_rename

    store, history = session(TEXT, URI)
    vscode_rename(store, URI)
    doc = store.get(URI)
    assert doc is not None
    events = SuggestionEvents(lambda row: None, lambda uri: None)
    svc = NextEditService(store, history, events)
    svc.configure(NextEditConfig(), Model(), ("fast", "openai", "m"))
    assert await _ask(svc, doc) == ["widest"]


async def test_min_confidence_gates_the_rules_and_a_second_matching_edit_lifts_the_gate() -> None:
    text = "a = dict()\nb = [dict(), 1]\nc = (dict(), 2)\n"
    store, history = session(text, URI)
    doc = retype(store, URI, "dict()", "{}")
    events = SuggestionEvents(lambda row: None, lambda uri: None)
    svc = NextEditService(store, history, events)
    config = NextEditConfig()
    assert config.min_confidence == 0.8
    svc.configure(config, None, ("", "", ""))
    assert await _ask(svc, doc) == []  # one edit, unlike lines: below the threshold
    svc.configure(dataclasses.replace(config, min_confidence=0.0), None, ("", "", ""))
    assert await _ask(svc, doc) == ["{}"]  # every admissible place
    svc.configure(config, None, ("", "", ""))
    doc = retype(store, URI, "dict()", "{}")  # the second matching edit
    assert await _ask(svc, doc) == ["{}"]
