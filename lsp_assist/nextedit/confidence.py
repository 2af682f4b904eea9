"""A learned confidence for the rule predictor's places (`next_edit.confidence = "learned"`).

`evidence.py` adds hand-set weights; this scores the same admissible places with a logistic
regression over facts the predictor already has, fitted offline on the benchmark corpus's
tuning half (`benchmarks/next_edit_confidence.py` refits it and writes
`confidence_table.py`): the probability that the place is one the developer changed next.
A place is shown at or above the table's threshold, also set on the tuning half. Nothing is
trained at runtime: the server reads the table.

Strong evidence passes every admissible place whatever the table says, as `evidence.RENAME`
and `evidence.REPEATED` lift it over the evidence threshold: a rename (a binding, or a use of
a local or a name the file binds, renamed to a name found nowhere else: the other references
name nothing now) and a second matching edit (the corpus asks after the first edit only, so
it has nothing to weigh that path with). The table weighs the weak evidence the issue asks
to wait on: one edit that is neither.

Features, per request (the edit): whether it deleted text left at one place only, what
was changed (an identifier to an identifier, a deletion, inside a string or comment, a
common token or a value, an attribute, a binding), how common the old token is (its
occurrences in the file, its length) and whether the new one already occurs; per place: the
neighbouring characters and line likeness (`evidence.py`), the distance in lines, and from
the tree the same frame, the same function, module level and the same callee. Not whether
the place is after the cursor: the corpus always replays the commit's first place in file
order, so that feature would learn how the corpus is built, not how people edit (the
predictor's order still prefers the next place after the cursor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from lsp_assist.nextedit import confidence_table
from lsp_assist.nextedit.site import Place

#: Features known before a place is looked up in the tree, then those the tree adds.
CHEAP = (
    "left_once",
    "common",
    "value",
    "literal",
    "ident",
    "deletion",
    "member",
    "binding",
    "log_count",
    "log_len",
    "new_exists",
    "neighbours",
    "similar_line",
    "log_distance",
)
TREE = ("same_frame", "same_function", "module_level", "same_callee")
FEATURES = CHEAP + TREE


@dataclass(frozen=True)
class Table:
    """Logistic weights by feature name, the bias and the threshold on the probability."""

    weights: dict[str, float]
    bias: float
    threshold: float

    def cheap_logit(self, values: dict[str, float]) -> float:
        return self.bias + sum(self.weights.get(k, 0.0) * values[k] for k in CHEAP)

    def tree_bound(self) -> float:
        """The most the tree features (each 0 or 1) can add to a logit."""
        return sum(max(0.0, self.weights.get(k, 0.0)) for k in TREE)

    def threshold_logit(self) -> float:
        t = min(max(self.threshold, 1e-9), 1 - 1e-9)
        return math.log(t / (1 - t))


class EditFacts(NamedTuple):
    """What the rule predictor knows of the edit, the same for every place."""

    rename: bool
    left_once: bool
    common: bool
    value: bool
    old: str
    new: str
    edited: Place
    occurrences: int  # the old token's occurrences in the file
    new_exists: bool  # the new token is already elsewhere in the file


def request_features(facts: EditFacts) -> dict[str, float]:
    """The edit's features, the same for every place (`rename` is no feature: it passes)."""
    rename, left_once, common, value, old, new, edited, count, new_exists = facts
    return {
        "rename": float(rename),
        "left_once": float(left_once),
        "common": float(common),
        "value": float(value),
        "literal": float(bool(edited.literal)),
        "ident": float(old.isidentifier() and new.isidentifier()),
        "deletion": float(not new.strip()),
        "member": float(edited.role == "member"),
        "binding": float(edited.binding),
        "log_count": math.log1p(count),
        "log_len": math.log(max(1, len(old.strip()))),
        "new_exists": float(new_exists),
    }


def place_features(
    request: dict[str, float], neighbours: float, similar_line: float, lines_away: int
) -> dict[str, float]:
    """`request` plus one place's features that need no tree."""
    return {
        **request,
        "neighbours": neighbours,
        "similar_line": similar_line,
        "log_distance": math.log1p(abs(lines_away)),
    }


def tree_features(edited: Place, candidate: Place) -> dict[str, float]:
    return {
        "same_frame": float(edited.frame == candidate.frame),
        "same_function": float(edited.function is not None and edited.function == candidate.function),
        "module_level": float(candidate.function is None),
        "same_callee": float(edited.callee is not None and edited.callee == candidate.callee),
    }


def logit(table: Table, values: dict[str, float]) -> float:
    return table.bias + sum(table.weights.get(k, 0.0) * values[k] for k in FEATURES)


def probability(table: Table, values: dict[str, float]) -> float:
    z = logit(table, values)
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


#: The checked-in table (`confidence_table.py`, written by the refit script).
TABLE = Table(dict(confidence_table.WEIGHTS), confidence_table.BIAS, confidence_table.THRESHOLD)
