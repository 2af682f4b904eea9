"""Which other files the cursor needs, and the outline lines of theirs that fit the budget.

Candidates, strongest first: the modules this file imports (resolved per language, rules
below as data), the files of its own package where the language makes them visible
without an import (Go, Java; a C file's header), the open tabs, the files edited
recently, then files of the workspace index that define names the enclosing function
uses or that sit in the same directory. Each candidate's outline (ready since the file
was opened or indexed) is scored by `outline.rank_entries`; the best entries of all
candidates are taken together until the budget is spent (one file never takes more
than `MAX_FILE_SHARE` of it) and rendered per file, files in a stable order, entries
in file order, so consecutive requests send the same bytes first.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from lsp_assist.context.outline_rank import OutlinePick, Relevance, rank_entries, visible_here
from lsp_assist.context.package_prior import PackagePrior, package_prior
from lsp_assist.context.scores import SCORES
from lsp_assist.context.sources.package import PackageNames
from lsp_assist.domain import Snippet
from lsp_assist.languages import HEADER_EXTENSIONS, PROFILES, profile, tuning_for
from lsp_assist.languages.imports import ImportRef
from lsp_assist.languages.tuning import DEFAULT as DEFAULT_TUNING
from lsp_assist.structure.imports import TRANSITIVE_IMPORTS, cached_imports
from lsp_assist.structure.outline import FileOutline, used_types
from lsp_assist.structure.symbols import SymbolIndex, path_stem

# Per-language values of the cross-file step: `languages/tuning.py`, measured in docs/tuning.md.
MAX_CANDIDATES = DEFAULT_TUNING.max_candidates  # fewer files, more of each
PACKAGE_SHARE = DEFAULT_TUNING.package_share
SPREAD = DEFAULT_TUNING.spread
AFFINITY_SHARE = DEFAULT_TUNING.affinity_share
AFFINITY_WEIGHT = DEFAULT_TUNING.affinity_weight
MAX_FILES = max(MAX_CANDIDATES, *(p.tuning.max_candidates for p in PROFILES))  # what `assemble` takes
MAX_FILE_SHARE = 0.85  # of the cross-file budget: one big module does not take all of it
MAX_SIBLINGS = 200  # same-directory files weighed per request (a set intersection each)
MAX_LOOKUPS = 150  # names of the enclosing function resolved through the index per request
MAX_DEFINERS = 8  # a name defined in more files than this is no evidence for any of them
MENTIONED_EVIDENCE = 0.25  # a top-level name of a file spelled elsewhere in this file
DEFINED_TOP_EVIDENCE = 1.0  # a name the enclosing function uses, defined at a file's top level
DEFINED_MEMBER_EVIDENCE = 0.5  # ... defined as a member (each over the number of files defining it)
FEW_DEFINERS = 3  # files defining a used name for it to name them as a reason
MIN_SCORE = SCORES.worth_a_name  # the score table's thresholds (`context/scores.py`)
MAX_REEXPORT_DEFINERS = 2  # files defining an imported name that a module re-exports
# The package prior (`package_prior.py`, languages in `PRIOR_LANGUAGES`): a file of the
# package whose top-level names all of the current file's similar files spell gets this
# much evidence (a name the enclosing function uses and one file defines gets 1.0).
# Measured on the JDK (index only): 0.25 -> 60.0%, 0.5 -> 61.3%, 0.75 -> 60.3%, 1.0 -> 58.0%.
PRIOR_EVIDENCE = 0.5
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
# An entry's value is P(file) x P(entry | file) per character: its score over the file's
# total score to the power `tuning.spread`, per character of its name.
# ... times the file's share of the evidence that the cursor's code uses it, to the power
# `tuning.affinity_share` (a file this one imports names from keeps a share of 1).
FULL_MIN_SCORE = SCORES.worth_a_signature  # imported or used names keep their signature
FULL_SHARE = 0.12  # of the budget, at most, for whole signature lines; the rest is names

# Weights of the ways a file becomes a candidate (an entry's score is multiplied by it).
# (`tuning.affinity_weight`: how much a file's affinity scales its weight.)
W_IMPORTED = 1.0
W_IMPORTED_UNUSED = 0.9
W_REEXPORTS = 0.6  # the module an import names when it only re-exports those names
W_PACKAGE = 0.9
W_OPEN = 0.8
W_RECENT = 0.7
W_DEFINES = 0.75
W_SIBLING = 0.55


TRANSITIVE_DECAY = 0.85  # per level of includes past the file's own (`TRANSITIVE_IMPORTS`)
MAX_IMPORT_DEPTH = 3  # levels of includes followed past the file's own
MAX_TRANSITIVE = 48  # files reached that way, at most


class PathResolver:
    """Finds the files an import names, among the paths the index and the open tabs know."""

    def __init__(self, index: SymbolIndex, open_paths: Iterable[str]) -> None:
        self.index = index
        self.open = set(open_paths)

    def exists(self, path: str) -> bool:
        return path in self.open or self.index.has_path(path)

    def by_stem(self, stem: str) -> list[str]:
        got = set(self.index.paths_with_stem(stem))
        got.update(p for p in self.open if path_stem(p) == stem)
        return sorted(got)

    def suffix(self, tail: str) -> list[str]:
        """Known paths that end with `/tail` (tail uses '/')."""
        stem = path_stem(tail)
        want = "/" + tail.lstrip("/")
        return [p for p in self.by_stem(stem) if p.replace(os.sep, "/").endswith(want)]

    def with_exts(self, base: str, exts: Sequence[str]) -> list[str]:
        out = []
        for ext in exts:
            p = os.path.normpath(base + ext)
            if self.exists(p):
                out.append(p)
                break
        return out

    def in_dir_named(self, tail: str) -> list[str]:
        return self.index.paths_in_dir_named(tail)

    def reexported(self, ref: ImportRef, targets: Sequence[str], current: str) -> dict[str, list[str]]:
        """The names an import takes from `targets` that none of them defines, mapped to the
        files that do, under the targets' directories: the name's module re-exports it
        (Rust's `pub use kind::ErrorKind` in error/mod.rs, a TypeScript index.ts,
        `from .kind import ErrorKind` in an __init__.py). A name more than
        `MAX_REEXPORT_DEFINERS` files define is left where it was imported from."""
        if not ref.names or not targets:
            return {}
        scopes = tuple({os.path.dirname(t) + os.sep for t in targets})
        out: dict[str, list[str]] = {}
        for name in ref.names:
            syms = self.index.lookup(name)
            if not syms or any(s.path in targets for s in syms):
                continue
            top = [s for s in syms if s.container is None and s.path != current and s.path.startswith(scopes)]
            # A definition over an `impl X for Name` block of another file.
            defs = sorted({s.path for s in top if not s.signature.startswith("impl")}) or sorted(
                {s.path for s in top}
            )
            if 0 < len(defs) <= MAX_REEXPORT_DEFINERS:
                out[name] = defs
        return out

    def resolve(self, ref: ImportRef, current: str, language: str) -> list[str]:
        """The files `ref` reaches from `current`: its import style's to say (`languages/`)."""
        spelled = profile(language)
        exts = (spelled.import_extensions if spelled is not None else ()) or ("",)
        return ref.style.resolve(ref, current, self, exts)


@dataclass
class Candidate:
    path: str
    weight: float
    reasons: list[str] = field(default_factory=list)
    imported_names: set[str] = field(default_factory=set)
    affinity: float = 0.0  # evidence that the cursor's code uses this file (see gather_candidates)
    prior: float = 0.0  # the package prior of its top-level names (`package_prior.py`)
    package: PackagePrior | None = None  # that prior, for its entries (same package only)

    def add(self, weight: float, reason: str) -> None:
        self.weight = max(self.weight, weight)
        if reason not in self.reasons:
            self.reasons.append(reason)


@dataclass
class Gathered:
    """What the cross-file step chose: snippets in prompt order and, per file, why."""

    snippets: list[Snippet]
    why: dict[str, str]  # snippet path -> reasons and what was kept
    considered: int = 0
    candidates: tuple[str, ...] = ()  # the candidate files, strongest first (diagnostics)
    ranked: int = 0  # how many of them were ranked before the deadline


@dataclass(frozen=True)
class CandidateQuery:
    """What `gather_candidates` reads: the current file, what it imports and uses, and
    what the editor and the index know."""

    path: str
    language: str
    head_lines: tuple[str, ...]  # the rows where imports live
    open_paths: Sequence[str]
    recent: Sequence[str]
    index: SymbolIndex
    used: Iterable[str]  # names the enclosing function uses
    defined_here: frozenset[str]
    deadline: float
    mentioned: frozenset[str] = frozenset()  # every name the current file spells


class _Pool:
    """Candidates by path, each with its strongest standing and every reason."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.cands: dict[str, Candidate] = {}

    def add(self, p: str, w: float, why: str) -> Candidate | None:
        if p == self.path:
            return None
        c = self.cands.get(p)
        if c is None:
            c = self.cands[p] = Candidate(p, w)
        c.add(w, why)
        return c


def gather_candidates(q: CandidateQuery) -> list[Candidate]:
    """Candidate files for the cursor, strongest first (ties by path: deterministic)."""
    tuned = tuning_for(q.language)
    pool = _Pool(q.path)
    resolver = PathResolver(q.index, q.open_paths)
    _add_imported(pool, resolver, q)
    lang_profile = profile(q.language)
    by_directory = lang_profile is not None and lang_profile.package_by_directory
    _add_visible(pool, resolver, q, by_directory)
    evidence = _add_defining(pool, q)
    here = os.path.dirname(q.path)
    for p in q.index.paths_in_dir(here)[:MAX_SIBLINGS]:
        if os.path.splitext(p)[1] == os.path.splitext(q.path)[1]:
            pool.add(p, W_SIBLING, "in the same directory (workspace index)")
    prior = package_prior(q.index, q.path, q.language, q.mentioned) if by_directory else None
    _weigh(pool.cands.values(), q, evidence, prior)
    top = max((c.affinity for c in pool.cands.values()), default=0.0)
    if top > 0:  # among files with the same standing, the ones the cursor's code leans on get more
        aw = tuned.affinity_weight
        for c in pool.cands.values():
            c.weight = round(c.weight * (1.0 - aw + aw * c.affinity / top), 4)
    ranked = sorted(pool.cands.values(), key=lambda c: (-c.weight, -c.affinity, -c.prior, c.path))
    return ranked[: tuned.max_candidates]


def _add_imported(pool: _Pool, resolver: PathResolver, q: CandidateQuery) -> None:
    """The modules this file imports (and, in C and C++, what those include)."""
    direct: list[str] = []
    resolved = _resolved_imports(resolver, cached_imports(q.head_lines, q.language), q.path, q.language)
    for ref, targets, moved in resolved:
        direct += targets
        for target in targets:
            # A module that only re-exports what this file imports (a Rust mod.rs, an
            # index.ts) is no longer where those names are: it drops back.
            kept = [n for n in ref.names if n not in moved]
            w = W_IMPORTED if kept or not ref.names else W_REEXPORTS
            c = pool.add(target, w, f"imported by this file (`{_short(ref.line)}`)")
            if c is not None:
                c.imported_names.update(kept)
        for name, paths in moved.items():
            for p in paths:
                c = pool.add(p, W_IMPORTED, f"defines `{name}`, imported by this file (`{_short(ref.line)}`)")
                if c is not None:
                    c.imported_names.add(name)
    if q.language in TRANSITIVE_IMPORTS:
        for p, depth, via in transitive_imports(resolver, tuple(direct), q.language):
            pool.add(p, W_IMPORTED * TRANSITIVE_DECAY**depth, f"included through {os.path.basename(via)}")


def _add_visible(pool: _Pool, resolver: PathResolver, q: CandidateQuery, by_directory: bool) -> None:
    """Files visible without an import (the package, a header/source pair), open, or edited."""
    here = os.path.dirname(q.path)
    lang_profile = profile(q.language)
    if by_directory:
        ext = os.path.splitext(q.path)[1]
        skips = lang_profile.package_skips if lang_profile is not None else ()
        for p in sorted(
            set(q.index.paths_in_dir(here)) | {o for o in q.open_paths if os.path.dirname(o) == here}
        ):
            if p.endswith(ext) and not p.endswith(skips):
                pool.add(p, W_PACKAGE, "same package (visible without an import)")
    for ext in lang_profile.companions if lang_profile is not None else ():
        base = os.path.splitext(q.path)[0]
        if resolver.exists(base + ext):
            pool.add(base + ext, W_PACKAGE, "this file's header/source pair")
    for p in q.open_paths:
        pool.add(p, W_OPEN, "open in the editor")
    for p in q.recent:
        pool.add(p, W_RECENT, "edited recently")


def _add_defining(pool: _Pool, q: CandidateQuery) -> dict[str, float]:
    """Names the enclosing function uses that this file does not define: where are they?

    Each is evidence for the files defining it, worth 1/(files defining it): a name one
    file defines points at that file, `get` defined in twenty says little; a top-level
    definition (how a module or a class is reached) counts double a member. The evidence
    per file; the files defining a few of those names become candidates."""
    tuned = tuning_for(q.language)
    lookups = 0
    defining: dict[str, list[str]] = {}
    evidence: dict[str, float] = {}
    for name in sorted(q.used):
        if lookups >= MAX_LOOKUPS or time.perf_counter() > q.deadline:
            break
        if name in q.defined_here:
            continue
        lookups += 1
        syms = q.index.lookup(name)
        hits = {s.path for s in syms if s.path != q.path}
        if tuned.declared_in_headers:
            declared = {p for p in hits if os.path.splitext(p)[1] in HEADER_EXTENSIONS}
            hits = declared or hits
        if not hits or len(hits) > MAX_DEFINERS:
            continue
        top_level = {s.path for s in syms if s.container is None}
        for p in hits:
            weight = DEFINED_TOP_EVIDENCE if p in top_level else DEFINED_MEMBER_EVIDENCE
            evidence[p] = evidence.get(p, 0.0) + weight / len(hits)
            if len(hits) <= FEW_DEFINERS:  # a name defined everywhere says nothing about where
                defining.setdefault(p, []).append(name)
    for p, names in defining.items():
        pool.add(p, W_DEFINES, "defines " + ", ".join(f"`{n}`" for n in names[:4]) + " used near the cursor")
    return evidence


def _weigh(
    cands: Iterable[Candidate], q: CandidateQuery, evidence: dict[str, float], prior: PackagePrior | None
) -> None:
    """Each candidate's affinity (the evidence that the cursor's code uses it) and prior;
    an imported file nothing near the cursor uses drops back."""
    member_evidence = tuning_for(q.language).member_evidence
    here = os.path.dirname(q.path)
    used_set = q.used if isinstance(q.used, (set, frozenset)) else set(q.used)
    index, mentioned = q.index, q.mentioned
    for c in cands:
        outline = index.outline(c.path)
        if outline is None:
            continue
        # Then the top-level names of the file this file spells elsewhere (its classes,
        # a module's functions): the file is in use here, beyond the enclosing function.
        spelled = outline.top_names() & mentioned
        ev = evidence.get(c.path, 0.0)
        ev += MENTIONED_EVIDENCE * sum(1.0 / max(1, index.definers(n)) for n in spelled)
        if member_evidence:
            members = (outline.names() - outline.top_names()) & mentioned
            ev += member_evidence * sum(1.0 / max(1, index.definers(n)) for n in members)
        c.affinity = ev
        if prior is not None and os.path.dirname(c.path) == here:
            c.prior = prior.best(outline.top_names() - mentioned, c.path)
            c.package = prior
            c.affinity += PRIOR_EVIDENCE * c.prior
        if c.weight == W_IMPORTED and not (c.imported_names & used_set) and not (outline.names() & used_set):
            c.weight = W_IMPORTED_UNUSED  # imported, but nothing of it near the cursor


_Resolved = tuple[tuple[ImportRef, list[str], dict[str, list[str]]], ...]
_RESOLVED_CACHE: dict[tuple[object, ...], _Resolved] = {}


def _resolved_imports(
    resolver: PathResolver, refs: tuple[ImportRef, ...], path: str, language: str
) -> _Resolved:
    """Each import's files and the names it takes from modules that only re-export them,
    kept per index state, open files and import lines: the same for every request in a file
    until one of those changes (resolving them took ~0.5 ms of each request that gathered)."""
    index = resolver.index
    key = (index.instance, index.generation, frozenset(resolver.open), refs, path, language)
    got = _RESOLVED_CACHE.get(key)
    if got is None:
        out = []
        for ref in refs:
            targets = resolver.resolve(ref, path, language)
            out.append((ref, targets, resolver.reexported(ref, targets, path)))
        got = tuple(out)
        if len(_RESOLVED_CACHE) >= 64:
            _RESOLVED_CACHE.clear()
        _RESOLVED_CACHE[key] = got
    return got


_TRANSITIVE_CACHE: dict[tuple[int, int, tuple[str, ...], str], list[tuple[str, int, str]]] = {}


def transitive_imports(
    resolver: PathResolver, direct: tuple[str, ...], language: str
) -> list[tuple[str, int, str]]:
    """(file, depth, the file that imports it) for what `direct`'s files import, breadth
    first, from the import statements recorded in the index (never a file read). Kept per
    index state and set of direct imports: typing in a file changes neither."""
    index = resolver.index
    key = (index.instance, index.generation, direct, language)
    got = _TRANSITIVE_CACHE.get(key)
    if got is not None:
        return got
    seen = set(direct)
    out: list[tuple[str, int, str]] = []
    level = list(dict.fromkeys(direct))
    for depth in range(1, MAX_IMPORT_DEPTH + 1):
        nxt: list[str] = []
        for src in level:
            for ref in cached_imports(index.imports(src), language):
                for p in resolver.resolve(ref, src, language):
                    if p not in seen and len(out) < MAX_TRANSITIVE:
                        seen.add(p)
                        out.append((p, depth, src))
                        nxt.append(p)
        level = nxt
    if len(_TRANSITIVE_CACHE) >= 32:
        _TRANSITIVE_CACHE.clear()
    _TRANSITIVE_CACHE[key] = out
    return out


def _short(line: str, n: int = 60) -> str:
    line = " ".join(line.split())
    return line if len(line) <= n else line[: n - 3] + "..."


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
    P(entry | file), over the length of its name."""
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
            if s >= MIN_SCORE:
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
        if s >= MIN_SCORE and (outline.entries[i].name in rel.imported or not visible_here(outline, i, rel))
    )
    if total <= 0:
        total = sum(s for s in scores if s >= MIN_SCORE)
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
        if ranked.scores[rank][i] >= FULL_MIN_SCORE:
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
