"""The score table: every weight that ranks another file's outline entries, named once.

`outline.rank_entries` scores an entry by the first rule of this table that holds for it
(its name imported, used, spelled here; else its container's standing), then applies the
multipliers. Values are the ones measured with `benchmarks/context_recall.py`
(docs/context.md, "Which entries"); changing one changes what every prompt carries.
"""

from __future__ import annotations

from dataclasses import dataclass


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


SCORES = ScoreTable()
