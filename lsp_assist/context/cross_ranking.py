"""The outline lines of the candidate files that fit the cross-file budget.

Each candidate's outline (ready since the file was opened or indexed) is scored by
`outline_rank.rank_entries`; the best entries of all candidates are taken together until
the budget is spent (one file never takes more than `MAX_FILE_SHARE` of it) and rendered
per file, files in a stable order, entries in file order, so consecutive requests send
the same bytes first.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lsp_assist.context.candidates import Candidate
from lsp_assist.context.outline_rank import OutlinePick, Relevance, rank_entries, visible_here
from lsp_assist.context.scores import SCORES
from lsp_assist.context.sources.package import PackageNames
from lsp_assist.domain import Snippet
from lsp_assist.languages import PROFILES, tuning_for
from lsp_assist.languages.tuning import DEFAULT
from lsp_assist.structure.outline import FileOutline, used_types
from lsp_assist.structure.symbols import path_stem

# What `assemble` takes: the longest candidate list of any language.
MAX_FILES = max(DEFAULT.max_candidates, *(p.tuning.max_candidates for p in PROFILES))
MAX_FILE_SHARE = 0.85  # of the cross-file budget: one big module does not take all of it
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
FULL_SHARE = 0.12  # of the budget, at most, for whole signature lines; the rest is names


@dataclass
class Gathered:
    """What the cross-file step chose: snippets in prompt order and, per file, why."""

    snippets: list[Snippet]
    why: dict[str, str]  # snippet path -> reasons and what was kept
    considered: int = 0
    candidates: tuple[str, ...] = ()  # the candidate files, strongest first (diagnostics)
    ranked: int = 0  # how many of them were ranked before the deadline


@dataclass(frozen=True)
class Here:
    """The current file, as `assemble` weighs other files' entries for it."""

    outline: FileOutline | None = None  # its own outline (its fields' types: `used_types`)
    language: str = ""


@dataclass
class _Ranked:
    """The outline entries of all candidates, by value per character."""

    pool: list[tuple[float, int, int]] = field(default_factory=list)  # (-value per char, file rank, entry)
    rels: dict[int, Relevance] = field(default_factory=dict)  # per file rank
    scores: dict[int, list[float]] = field(default_factory=dict)
    outlines: list[FileOutline | None] = field(default_factory=list)
    considered: int = 0


def assemble(
    candidates: Sequence[Candidate],
    outline_of: Callable[[str], FileOutline | None],
    rel: Relevance,
    budget: int,
    deadline: float,
    here: Here = Here(),
) -> Gathered:
    """The best outline entries of all candidates within `budget`, rendered per file.

    Greedy over value per character (see `CrossFileTuning.spread`) with whole entries only (an entry's
    container header is paid for with it); a file's share is capped. Files come out in candidate
    order (weight, then path) and entries in file order: deterministic for equal inputs.
    """
    if budget <= 0 or not candidates:
        return Gathered([], {})
    # The package's names its similar files need (`sources/package.py`), first on the
    # budget; an outline does not list them again.
    package = next((c.package for c in candidates if c.package is not None), None)
    line_budget = (
        PackageNames.reserve(package, rel.mentioned | rel.used, budget) if package is not None else 0
    )
    budget -= line_budget
    ranked = _rank(candidates, outline_of, rel, deadline, here)
    picks = _pick(ranked, budget)
    snippets, why = _render(picks, candidates)
    if package is not None and line_budget > 0:
        shown = frozenset(n for snip in snippets for n in _WORD.findall(snip.text))
        got = PackageNames.offer(package, rel.mentioned | rel.used | shown, line_budget)
        if got is not None:
            snippets.append(got[0])
            why[got[0].path] = got[1]
    top = candidates[:MAX_FILES]
    return Gathered(snippets, why, ranked.considered, tuple(c.path for c in top), len(ranked.outlines))


def _rank(
    candidates: Sequence[Candidate],
    outline_of: Callable[[str], FileOutline | None],
    rel: Relevance,
    deadline: float,
    here: Here,
) -> _Ranked:
    """Every entry of the candidates' outlines with its value per character: P(file) x
    P(entry | file), over the length of its name. P(entry | file) is its score over the
    file's total score to the power `tuning.spread`; P(file) is the candidate's weight
    times its share of the evidence that the cursor's code uses it, to the power
    `tuning.affinity_share` (a file this one imports names from keeps a share of 1)."""
    out = _Ranked()
    # The types the code at the cursor holds, from the entries of what it uses (its own
    # file's fields, other files' fields and functions): their members rank as used ones.
    ready = [outline_of(c.path) for c in candidates[:MAX_FILES]]
    typed = used_types([here.outline, *ready], rel.used | rel.near)
    top_affinity = max((c.affinity for c in candidates[:MAX_FILES]), default=0.0)
    affinity_share = tuning_for(here.language).affinity_share
    for rank, cand in enumerate(candidates[:MAX_FILES]):
        # The strongest file is ranked even past the deadline: its outline is ready, ranking
        # it is bounded (MAX_ENTRIES), and on a loaded machine it is the one that matters.
        if rank > 0 and time.perf_counter() > deadline:
            break
        outline = ready[rank]
        out.outlines.append(outline)
        if outline is None or not outline.entries:
            continue
        out.considered += 1
        rel_file = _file_relevance(rel, cand, typed)
        out.rels[rank] = rel_file
        scores = out.scores[rank] = rank_entries(outline, rel_file)
        total = _total(outline, scores, rel_file)
        spread = tuning_for(outline.language).spread
        norm = cand.weight / (total**spread) if total > 0 else 0.0
        if top_affinity > 0 and not cand.imported_names:
            norm *= ((cand.affinity + 1.0) / (top_affinity + 1.0)) ** affinity_share
        for i, s in enumerate(scores):
            if s >= SCORES.worth_a_name:
                out.pool.append((-s * norm / (len(outline.entries[i].name) + 2), rank, i))
    out.pool.sort()
    return out


def _file_relevance(rel: Relevance, cand: Candidate, typed: frozenset[str]) -> Relevance:
    """`rel` as one candidate file sees it (what this file imports from it by name)."""
    stem = path_stem(cand.path)
    return Relevance(
        rel.used,
        rel.imported | frozenset(cand.imported_names),
        rel.mentioned,
        rel.near,
        stem in cand.imported_names,
        stem in cand.imported_names and stem in rel.used,
        rel.families,
        typed,
        rel.near_words,
    )


def _total(outline: FileOutline, scores: list[float], rel: Relevance) -> float:
    """The file's total score over the names it could newly show.

    P(entry | file) is over those: names the cursor's code already spells or uses go out
    only as signatures, and counting them made the file the enclosing function leans on
    most the least worth for its other names. Names imported by name still count (the
    import line says what this file takes from there, not what it lacks)."""
    total = sum(
        s
        for i, s in enumerate(scores)
        if s >= SCORES.worth_a_name
        and (outline.entries[i].name in rel.imported or not visible_here(outline, i, rel))
    )
    if total <= 0:
        total = sum(s for s in scores if s >= SCORES.worth_a_name)
    return total


def _pick(ranked: _Ranked, budget: int) -> list[OutlinePick | None]:
    """Entries by value per character while they fit: whole signatures for the names the
    code imports or uses (within `FULL_SHARE`), the others as names; one file at most
    `MAX_FILE_SHARE` of the budget."""
    per_file_cap = max(200, int(budget * MAX_FILE_SHARE))
    picks = [OutlinePick(o) if o is not None else None for o in ranked.outlines]
    used = 0
    full_used = 0
    for _value, rank, i in ranked.pool:
        pick = picks[rank]
        assert pick is not None
        before = pick.cost
        if ranked.scores[rank][i] >= SCORES.worth_a_signature:
            cost = pick.cost_full(i)
            if (
                full_used + cost <= budget * FULL_SHARE
                and used + cost <= budget
                and before + cost <= per_file_cap
            ):
                pick.add_full(i)
                used += cost
                full_used += cost
                continue
        if visible_here(pick.outline, i, ranked.rels[rank]):
            continue  # no room for its signature, and its bare name is already in the file
        cost = pick.cost_short(i)
        if cost <= 0:
            continue
        if used + cost > budget or before + cost > per_file_cap:
            continue
        pick.add_short(i)
        used += cost
    return picks


def _render(
    picks: list[OutlinePick | None], candidates: Sequence[Candidate]
) -> tuple[list[Snippet], dict[str, str]]:
    """One snippet per file with picked entries, in candidate order, and why each was sent."""
    snippets: list[Snippet] = []
    why: dict[str, str] = {}
    for rank, pick in enumerate(picks):
        if pick is None or not len(pick):
            continue
        cand = candidates[rank]
        snippets.append(
            Snippet(path=pick.outline.path, text=pick.text(), score=round(cand.weight, 3), reason="outline")
        )
        why[pick.outline.path] = (
            "; ".join(cand.reasons)
            + f"; {len(pick.full)} signatures and {len(pick.short)} names"
            + f" of its {len(pick.outline.entries)} outline entries"
        )
    return snippets, why
