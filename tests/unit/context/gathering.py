"""`gather_candidates` as the tests call it: no recent edits, no open tabs unless given,
nothing defined here, nothing used near the cursor and a deadline far off."""

from __future__ import annotations

import time

from lsp_assist.context.candidates import Candidate, CandidateQuery, gather_candidates
from lsp_assist.structure.symbols import SymbolIndex


def gather(
    index: SymbolIndex,
    path: str,
    language: str,
    head: tuple[str, ...] = (),
    mentioned: frozenset[str] = frozenset(),
) -> list[Candidate]:
    return gather_candidates(
        CandidateQuery(
            path=path,
            language=language,
            head_lines=head,
            open_paths=(),
            recent=[],
            index=index,
            used=frozenset(),
            defined_here=frozenset(),
            deadline=time.perf_counter() + 1,
            mentioned=mentioned,
        )
    )
