"""How sure the rule predictor is that a place wants the change the user just made.

Each place the old text still occurs gets a confidence from what it shares with the
edited place; of the places at or above `THRESHOLD` the next after the cursor is proposed:

- the characters right before and after the token match those around the edit
  (`self.rate` after `self.rate`, `"0"` inside the same kind of quotes);
- the two lines share their words (Jaccard over identifier and punctuation tokens);
- the syntax nodes around the token are of the same types (an assignment's annotation
  is not a parameter's);
- minus a little when the token is common: a number, one or two punctuation characters,
  one character (a version digit changed once is rarely changed everywhere), or a value
  (`rules.py`: a whole string's content, a name bound nowhere in the file such as `float`);
- plus `RENAME` when the edit renamed a binding (a parameter, an assignment target, an
  attribute, a definition, an import), or a use of a local, a parameter or a name the
  file binds, to a name found nowhere else in its scope: the other references now name
  nothing, so they need the change whatever their context;
- plus `REPEATED` when an earlier edit made the same change: the user has shown twice
  that the change repeats, the strongest evidence a predictor can have.

The weights and the threshold were set on the tuning half of the benchmark corpus
(psf/requests, pallets/click, pallets/flask; the threshold checked again once pluggy, rich,
tomlkit and structlog joined it) and checked on the validation and fresh halves; see
docs/next-edit.md for the figures and `benchmarks/next_edit.py` for the command. This gate
is `next_edit.confidence = "evidence"`, the default; `confidence.py` is the learned option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsp_assist.nextedit.site import Place

#: Weight of the neighbour characters matching (both sides: the full weight).
NEIGHBOURS = 0.5
#: Weight of the two lines' token similarity (identical token sets: the full weight).
SIMILAR_LINE = 0.5
#: Weight of the enclosing node types matching.
SAME_FRAME = 0.3
#: Taken off when the old token is common (a number, punctuation, one character).
COMMON_TOKEN = 0.3
#: Added when the edit renamed a binding to a fresh name.
RENAME = 1.0
#: Added when an earlier edit made the same change.
REPEATED = 1.0
#: Proposals below this confidence are not shown: the user makes a second matching edit
#: first (then `REPEATED` lifts every admissible place over it). The default of the
#: `next_edit.min_confidence` setting.
THRESHOLD = 0.8

_TOKENS = re.compile(r"\w+|[^\w\s]")
_COMMON = re.compile(r"[\d.]+|[^\w\s]{1,2}|\w")


def is_common(token: str) -> bool:
    """A number, one or two punctuation characters, or a single character."""
    return _COMMON.fullmatch(token.strip()) is not None


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of two lines' token sets (0..1)."""
    ta, tb = set(_TOKENS.findall(a)), set(_TOKENS.findall(b))
    return len(ta & tb) / len(ta | tb) if ta or tb else 0.0


@dataclass(frozen=True)
class Context:
    """What the edited place looks like, to compare candidates with."""

    left: str  # the character before the changed token ("" at the start of the text)
    right: str  # the character after it
    line: str  # the edited line as the user left it
    common: bool  # the old token is common
    rename: bool  # a binding renamed to a fresh name
    repeated: bool  # an earlier edit made the same change
    threshold: float = THRESHOLD  # shown at or above this confidence


def cheap(ctx: Context, left: str, right: str, line: str) -> float:
    """The part of a candidate's confidence that needs no syntax tree."""
    return cheap_of(ctx, ((left == ctx.left) + (right == ctx.right)) / 2, similarity(ctx.line, line))


def cheap_of(ctx: Context, neighbours: float, similar_line: float) -> float:
    """`cheap` from the share of matching neighbour characters and the line similarity."""
    score = NEIGHBOURS * neighbours + SIMILAR_LINE * similar_line
    score -= COMMON_TOKEN * ctx.common
    score += RENAME * ctx.rename + REPEATED * ctx.repeated
    return score


def confidence(ctx: Context, cheap_score: float, edited: Place, candidate: Place) -> float:
    """A candidate's full confidence: `cheap` plus what the tree says."""
    return cheap_score + SAME_FRAME * (edited.frame == candidate.frame)


def upper_bound(cheap_score: float) -> float:
    """The most the tree can add to `cheap_score`: candidates below the best so far are
    never looked up in the tree."""
    return cheap_score + SAME_FRAME
