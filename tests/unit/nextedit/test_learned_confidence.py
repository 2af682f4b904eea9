"""The learned confidence (`confidence.py`, `next_edit.confidence = "learned"`): each
admissible place gets a probability from the checked-in table, and only places at or above
the table's threshold are shown; a second matching edit passes the gate."""

from __future__ import annotations

import dataclasses

from lsp_assist.config.schema import NextEditConfig
from lsp_assist.documents.store import Document
from lsp_assist.nextedit import confidence, rules
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.proposal import Proposal
from tests.unit.nextedit.helpers import line_of, position, retype, session

URI = "file:///ws/m.py"
#: One expression rewritten once, on unlike lines: admissible places, weak evidence.
REWRITE = "a = dict()\nb = [dict(), 1]\nc = (dict(), 2)\n"
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
    return rules.predict(doc, h.last, cursor, [], earlier, table=table), probabilities


def test_the_learned_confidence_is_the_default_and_its_table_is_complete() -> None:
    assert NextEditConfig().confidence == "learned"
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


def test_a_renamed_local_is_shown_above_the_threshold() -> None:
    store, history = session(RENAME, URI)
    doc = retype(store, URI, "count", "n")
    found, probabilities = _ask(doc, history)
    assert probabilities and probabilities[0] >= confidence.TABLE.threshold
    assert [line_of(doc, p) for p in found] == ["return count + 1"]
    # The same place under a threshold above its probability is held back: the gate decides.
    strict = dataclasses.replace(confidence.TABLE, threshold=(probabilities[0] + 1) / 2)
    assert _ask(doc, history, strict)[0] == []


def test_a_second_matching_edit_passes_the_gate() -> None:
    store, history = session(REWRITE, URI)
    retype(store, URI, "dict()", "{}")
    doc = retype(store, URI, "dict()", "{}")  # the change made twice
    found, _ = _ask(doc, history)
    assert [line_of(doc, p) for p in found] == ["c = (dict(), 2)"]


def test_the_probability_is_the_logistic_of_the_weighted_features() -> None:
    table = confidence.Table({"rename": 2.0, "similar_line": 1.0}, -1.0, 0.5)
    values = dict.fromkeys(confidence.FEATURES, 0.0) | {"rename": 1.0, "similar_line": 0.5}
    assert confidence.logit(table, values) == 1.5
    assert abs(confidence.probability(table, values) - 1 / (1 + 2.718281828459045**-1.5)) < 1e-9
    assert table.tree_bound() == 0.0
    assert table.threshold_logit() == 0.0
