"""Which other files the cursor needs: the candidates, strongest first, and why each.

Candidates, strongest first: the modules this file imports (resolved per language:
`import_paths.py`), the files of its own package where the language makes them visible
without an import (Go, Java; a C file's header), the open tabs, the files edited
recently, then files of the workspace index that define names the enclosing function
uses or that sit in the same directory. Each gets a weight by how it became one, and an
affinity: the evidence that the cursor's code uses it. What of their outlines fits the
budget is `cross_ranking.py`'s to choose.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lsp_assist.context.import_paths import PathResolver, resolved_imports, transitive_imports
from lsp_assist.context.package_prior import PackagePrior, package_prior
from lsp_assist.context.scores import WEIGHTS
from lsp_assist.languages import HEADER_EXTENSIONS, profile, tuning_for
from lsp_assist.languages.imports import ImportRef
from lsp_assist.structure.imports import TRANSITIVE_IMPORTS, cached_imports
from lsp_assist.structure.symbols import SymbolIndex

MAX_SIBLINGS = 200  # same-directory files weighed per request (a set intersection each)
MAX_LOOKUPS = 150  # names of the enclosing function resolved through the index per request
MAX_DEFINERS = 8  # a name defined in more files than this is no evidence for any of them
FEW_DEFINERS = 3  # files defining a used name for it to name them as a reason


@dataclass
class Candidate:
    path: str
    weight: float
    reasons: list[str] = field(default_factory=list)
    imported_names: set[str] = field(default_factory=set)
    affinity: float = 0.0  # evidence that the cursor's code uses this file (`scores.WEIGHTS`)
    prior: float = 0.0  # the package prior of its top-level names (`package_prior.py`)
    package: PackagePrior | None = None  # that prior, for its entries (same package only)

    def add(self, weight: float, reason: str) -> None:
        self.weight = max(self.weight, weight)
        if reason not in self.reasons:
            self.reasons.append(reason)


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
    imports: tuple[ImportRef, ...] | None = None  # those of `head_lines`, when known already


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
            pool.add(p, WEIGHTS.sibling, "in the same directory (workspace index)")
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
    refs = q.imports if q.imports is not None else cached_imports(q.head_lines, q.language)
    resolved = resolved_imports(resolver, refs, q.path, q.language)
    for ref, targets, moved in resolved:
        direct += targets
        for target in targets:
            # A module that only re-exports what this file imports (a Rust mod.rs, an
            # index.ts) is no longer where those names are: it drops back.
            kept = [n for n in ref.names if n not in moved]
            w = WEIGHTS.imported if kept or not ref.names else WEIGHTS.reexports
            c = pool.add(target, w, f"imported by this file (`{_short(ref.line)}`)")
            if c is not None:
                c.imported_names.update(kept)
        for name, paths in moved.items():
            for p in paths:
                c = pool.add(
                    p, WEIGHTS.imported, f"defines `{name}`, imported by this file (`{_short(ref.line)}`)"
                )
                if c is not None:
                    c.imported_names.add(name)
    if q.language in TRANSITIVE_IMPORTS:
        for p, depth, via in transitive_imports(resolver, tuple(direct), q.language):
            pool.add(
                p,
                WEIGHTS.imported * WEIGHTS.transitive_decay**depth,
                f"included through {os.path.basename(via)}",
            )


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
                pool.add(p, WEIGHTS.package, "same package (visible without an import)")
    for ext in lang_profile.companions if lang_profile is not None else ():
        base = os.path.splitext(q.path)[0]
        if resolver.exists(base + ext):
            pool.add(base + ext, WEIGHTS.package, "this file's header/source pair")
    for p in q.open_paths:
        pool.add(p, WEIGHTS.open, "open in the editor")
    for p in q.recent:
        pool.add(p, WEIGHTS.recent, "edited recently")


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
            weight = WEIGHTS.defined_top if p in top_level else WEIGHTS.defined_member
            evidence[p] = evidence.get(p, 0.0) + weight / len(hits)
            if len(hits) <= FEW_DEFINERS:  # a name defined everywhere says nothing about where
                defining.setdefault(p, []).append(name)
    for p, names in defining.items():
        pool.add(
            p, WEIGHTS.defines, "defines " + ", ".join(f"`{n}`" for n in names[:4]) + " used near the cursor"
        )
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
        ev += WEIGHTS.mentioned * sum(1.0 / max(1, index.definers(n)) for n in spelled)
        if member_evidence:
            members = (outline.names() - outline.top_names()) & mentioned
            ev += member_evidence * sum(1.0 / max(1, index.definers(n)) for n in members)
        c.affinity = ev
        if prior is not None and os.path.dirname(c.path) == here:
            c.prior = prior.best(outline.top_names() - mentioned, c.path)
            c.package = prior
            c.affinity += WEIGHTS.prior * c.prior
        if (
            c.weight == WEIGHTS.imported
            and not (c.imported_names & used_set)
            and not (outline.names() & used_set)
        ):
            c.weight = WEIGHTS.imported_unused  # imported, but nothing of it near the cursor


def _short(line: str, n: int = 60) -> str:
    line = " ".join(line.split())
    return line if len(line) <= n else line[: n - 3] + "..."
