"""The learned confidence (`confidence.py`, `next_edit.confidence = "learned"`): on weak
evidence each admissible place gets a probability from the checked-in table, and only places
at or above the table's threshold are shown; a rename and a second matching edit pass."""

from __future__ import annotations

import dataclasses

import pytest

from lsp_assist.config.schema import NextEditConfig
from lsp_assist.documents.store import Document
from lsp_assist.nextedit import confidence, rules
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.proposal import Proposal
from lsp_assist.nextedit.service import NextEditService
from lsp_assist.telemetry.events import SuggestionEvents
from tests.unit.nextedit.helpers import line_of, position, retype, session

URI = "file:///ws/m.py"
#: One expression rewritten once, on unlike lines: admissible places, weak evidence.
REWRITE = "a = dict()\nb = [dict(), 1]\nc = (dict(), 2)\n"
#: A name the file binds nowhere switched once on like lines: weak evidence, but a like place.
SWITCH = "x = compute(1)\ny = compute(2)\nz = compute(3)\n"
#: A local renamed at its binding: strong evidence for its other use.
RENAME = "def scale(total, step):\n    count = total // step\n    return count + 1\n"


def _ask(
    doc: Document, history: EditHistory, table: confidence.Table | None = confidence.TABLE
) -> tuple[list[Proposal], list[float]]:
    """(the predictor's proposals with `table`, the probability of every admissible place)."""
    h = history.get(doc.uri)
    assert h is not None and h.last is not None
    cursor, earlier = position(doc, h.last.end), list(h.edits)[:-1]
    places = rules.candidates(doc, h.last, cursor, earlier)
    probabilities = [confidence.probability(confidence.TABLE, values) for _, values, _ in places]
    return rules.predict(doc, h.last, cursor, [], earlier, rules.Gate(table=table)), probabilities


def test_the_table_is_complete_and_the_evidence_gate_stays_the_default() -> None:
    assert NextEditConfig().confidence == "evidence"
    assert set(confidence.TABLE.weights) == set(confidence.FEATURES)
    assert 0.0 < confidence.TABLE.threshold < 1.0


def test_a_weak_one_off_edit_is_suppressed_by_the_gate() -> None:
    store, history = session(REWRITE, URI)
    doc = retype(store, URI, "dict()", "{}")
    found, probabilities = _ask(doc, history)
    # Both other places are admissible (the hard rules let them through) ...
    assert len(probabilities) == 2
    # ... but below the table's threshold: nothing is shown until the change repeats.
    assert max(probabilities) < confidence.TABLE.threshold
    assert found == []
    # Without the gate (every admissible place passes) the first would be shown.
    open_gate = dataclasses.replace(confidence.TABLE, threshold=0.0)
    assert len(_ask(doc, history, open_gate)[0]) == 1


def test_a_like_place_is_shown_above_the_threshold() -> None:
    store, history = session(SWITCH, URI)
    doc = retype(store, URI, "compute", "evaluate")
    found, probabilities = _ask(doc, history)
    assert probabilities[0] >= confidence.TABLE.threshold
    assert [line_of(doc, p) for p in found] == ["y = compute(2)"]
    # The same place under a threshold above its probability is held back: the gate decides.
    strict = dataclasses.replace(confidence.TABLE, threshold=(max(probabilities) + 1) / 2)
    assert _ask(doc, history, strict)[0] == []


def test_a_rename_passes_the_gate_whatever_its_probability() -> None:
    store, history = session(RENAME, URI)
    doc = retype(store, URI, "count", "n")
    closed = dataclasses.replace(confidence.TABLE, threshold=0.999)
    found, probabilities = _ask(doc, history, closed)
    assert probabilities[0] < closed.threshold
    assert [line_of(doc, p) for p in found] == ["return count + 1"]


def test_a_second_matching_edit_passes_the_gate() -> None:
    store, history = session(REWRITE, URI)
    retype(store, URI, "dict()", "{}")
    doc = retype(store, URI, "dict()", "{}")  # the change made twice
    closed = dataclasses.replace(confidence.TABLE, threshold=0.999)
    found, _ = _ask(doc, history, closed)
    assert [line_of(doc, p) for p in found] == ["c = (dict(), 2)"]


def test_the_probability_is_the_logistic_of_the_weighted_features() -> None:
    table = confidence.Table({"neighbours": 2.0, "same_frame": 1.0}, -1.0, 0.5)
    values = dict.fromkeys(confidence.FEATURES, 0.0) | {"neighbours": 1.0, "same_frame": 0.5}
    assert confidence.logit(table, values) == 1.5
    assert abs(confidence.probability(table, values) - 1 / (1 + 2.718281828459045**-1.5)) < 1e-9
    assert table.tree_bound() == 1.0  # same_frame, a tree feature
    assert table.threshold_logit() == 0.0


async def test_the_service_gates_by_the_table_only_when_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    store, history = session(SWITCH, URI)
    doc = retype(store, URI, "compute", "evaluate")
    svc = NextEditService(store, history, SuggestionEvents(lambda row: None, lambda uri: None))
    h = history.get(URI)
    assert h is not None and h.last is not None
    cursor = position(doc, h.last.end)

    async def ask(config: NextEditConfig) -> list[str]:
        svc.configure(config, None, ("", "", ""))
        return [a.proposal.text for a in await svc.suggest(URI, doc.version, cursor)]

    assert await ask(NextEditConfig(confidence="learned")) == ["evaluate"]
    # A table whose threshold no weak evidence reaches: the learned gate holds the place
    # back, the evidence gate (the default) does not read the table.
    monkeypatch.setattr(confidence, "TABLE", dataclasses.replace(confidence.TABLE, threshold=0.999))
    assert await ask(NextEditConfig(confidence="learned")) == []
    assert await ask(NextEditConfig()) == ["evaluate"]
