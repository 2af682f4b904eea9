"""`CrossFileTuning`: the numbers of the cross-file step that differ by language.

The defaults are every language's; a profile overrides the few its language measured
better with. Each value's measurements (what it trades, the figures on the benchmark
corpora, the seeds) are in docs/tuning.md, not here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CrossFileTuning:
    #: Candidate files whose outlines share the cross-file budget (fewer files, more of each).
    max_candidates: int = 5
    #: Evidence per member name (method, field, variant) of a file spelled in this one.
    member_evidence: float = 0.0
    #: Share of the cross-file budget for the package's names line.
    package_share: float = 0.3
    #: How an entry's share of its file's score spreads the budget (lower: hub files win).
    spread: float = 0.5
    #: How much a file's affinity (how much the cursor's code leans on it) scales its share.
    affinity_share: float = 1.0
    #: How much a file's affinity scales its candidate weight.
    affinity_weight: float = 0.3
    #: A name declared in a header and defined in a source counts for the header only.
    declared_in_headers: bool = False
    #: Rank a name higher when the words past its prefix are spelled around the cursor.
    near_words: bool = False


DEFAULT = CrossFileTuning()
