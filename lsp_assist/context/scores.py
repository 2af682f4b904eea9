"""The weights of the cross-file step, each named once: other files and their entries.

`CandidateWeights` (`candidates.py`): how much a file weighs by how it became a candidate,
and how much each piece of evidence that the cursor's code uses it counts. `ScoreTable`
(`outline_rank.rank_entries`): an entry's score by the first rule that holds for it (its
name imported, used, spelled here; else its container's standing), then the multipliers.
The numbers that differ by language are the profiles' (`languages/tuning.py`). Values are
the ones measured with `benchmarks/context_recall.py` (docs/context.md, "Which entries";
docs/tuning.md); changing one changes what every prompt carries.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CandidateWeights:
    """A candidate file's weight (its entries' scores are multiplied by it) and its evidence."""

    # The weight, by how the file became a candidate (the strongest way counts):
    imported: float = 1.0  # this file imports it, or a name from it
    imported_unused: float = 0.9  # ... but nothing of it is used near the cursor
    reexports: float = 0.6  # the module an import names when it only re-exports those names
    package: float = 0.9  # visible without an import (its package), or this file's header/source pair
    open: float = 0.8  # open in the editor
    recent: float = 0.7  # edited recently
    defines: float = 0.75  # defines names the enclosing function uses
    sibling: float = 0.55  # in the same directory
    transitive_decay: float = 0.85  # per level of includes past the file's own (C, C++)
    # The evidence that the cursor's code uses the file (its affinity), per name:
    defined_top: float = 1.0  # the enclosing function uses it, the file defines it at top level
    defined_member: float = 0.5  # ... defines it as a member (each over the files defining it)
    mentioned: float = 0.25  # a top-level name of the file spelled elsewhere in this file
    # A file of the package whose top-level names all of this file's similar files spell
    # (`package_prior.py`): half a used name's, as that says what the package's files need,
    # not what this line does.
    prior: float = 0.5


@dataclass(frozen=True)
class ScoreTable:
    """Scores of an outline entry for the code at the cursor (0 = not worth its characters)."""

    # Its own name:
    imported: float = 4.0  # this file imports it by name from that file
    used: float = 3.0  # the enclosing function (or the code near the cursor) uses it
    mentioned: float = 0.15  # this file spells it elsewhere (not near the cursor)
    # A top-level name:
    top_level: float = 1.0  # of any file
    module: float = 1.2  # of a module this file imports as a module
    module_used: float = 1.3  # ... whose name the enclosing function uses
    # A member, by its container (a class; for a declaration group: its values' enumeration):
    near_owner: float = 2.4  # named in the rows around the cursor
    used_owner: float = 2.0  # used by the enclosing function, or the type of what it holds
    imported_owner: float = 1.6  # imported by name
    mentioned_owner: float = 1.4  # spelled elsewhere in this file
    member: float = 0.7  # of any other container
    # Multipliers:
    private: float = 0.8  # `_x`: used, but less often than the public names
    # A name of a family this file already uses (`TypeBlock` where `TypeChar` is spelled):
    # constants and enum members come in families, and a line that needs one needs another.
    family: float = 1.5
    # A name whose distinctive words (past its first two) are at least half spelled near the
    # cursor, where the language's tuning says `near_words` (a C header's shared prefix).
    near_words: float = 2.0
    # Thresholds of `cross_ranking.assemble`:
    worth_a_name: float = 0.1  # below this an entry is not sent at all
    worth_a_signature: float = 2.5  # imported or used names keep their signature line


WEIGHTS = CandidateWeights()
SCORES = ScoreTable()
