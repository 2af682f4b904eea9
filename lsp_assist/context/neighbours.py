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

import functools
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from lsp_assist.context.outline import (
    COMMENT,
    FileOutline,
    OutlinePick,
    Relevance,
    rank_entries,
    visible_here,
)
from lsp_assist.context.package_prior import PACKAGE_REASON, PackagePrior, package_line, package_prior
from lsp_assist.context.symbols import SymbolIndex, path_stem
from lsp_assist.domain import Snippet

MAX_CANDIDATES = 5  # fewer files, more of each (measured: 8 spread the budget too thin)
MAX_FILE_SHARE = 0.85  # of the cross-file budget: one big module does not take all of it
MAX_SIBLINGS = 200  # same-directory files weighed per request (a set intersection each)
MAX_LOOKUPS = 150  # names of the enclosing function resolved through the index per request
MAX_DEFINERS = 8  # a name defined in more files than this is no evidence for any of them
MENTIONED_EVIDENCE = 0.25  # a top-level name of a file spelled elsewhere in this file
MIN_SCORE = 0.1
# The package prior (`package_prior.py`, languages in `PRIOR_LANGUAGES`): a file of the
# package whose top-level names all of the current file's similar files spell gets this
# much evidence (a name the enclosing function uses and one file defines gets 1.0).
# Measured on the JDK (index only): 0.25 -> 60.0%, 0.5 -> 61.3%, 0.75 -> 60.3%, 1.0 -> 58.0%.
PRIOR_EVIDENCE = 0.5
# The package names line: the names no outline shows, within this share of the cross-file
# budget (JDK: 0.2 -> 61.3%, 0.3 -> 62.7%), those whose prior is at least PACKAGE_MIN_SCORE.
PACKAGE_SHARE = 0.3
PACKAGE_MIN_SCORE = 0.1
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
# An entry's value is P(file) x P(entry | file) per character: its score over the file's
# total score to this power (0.5: a 100-entry module's names are not worth a tenth of a
# 10-entry module's, but a name of the small one comes first), per character of its name.
SPREAD = 0.5
FULL_MIN_SCORE = 2.5  # imported or used names keep their signature; the rest are names
FULL_SHARE = 0.12  # of the budget, at most, for whole signature lines; the rest is names

# Weights of the ways a file becomes a candidate (an entry's score is multiplied by it).
AFFINITY_WEIGHT = 0.3  # how much a file's affinity scales its weight
W_IMPORTED = 1.0
W_IMPORTED_UNUSED = 0.9
W_PACKAGE = 0.9
W_OPEN = 0.8
W_RECENT = 0.7
W_DEFINES = 0.75
W_SIBLING = 0.55


@dataclass(frozen=True)
class ImportRule:
    """One way a language spells an import: `pattern`'s groups `module` and optional `names`."""

    pattern: re.Pattern[str]
    kind: str  # python | relative_path | go_path | rust_path | java_path | include


def _r(p: str) -> re.Pattern[str]:
    return re.compile(p)


#: Import spellings per language (canonical name). Matched per line of the file's head.
IMPORT_RULES: dict[str, tuple[ImportRule, ...]] = {
    "python": (
        ImportRule(_r(r"^\s*from\s+(?P<module>\.*[\w.]*)\s+import\s+\(?(?P<names>[^#)]*)"), "python"),
        ImportRule(
            _r(r"^\s*import\s+(?P<module>[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)"), "python"
        ),
    ),
    "javascript": (
        ImportRule(
            _r(
                r"""^\s*(?:import|export)\s+(?:type\s+)?(?:(?P<names>[\w$*{}\s,]+?)\s+from\s+)?['"](?P<module>[^'"]+)['"]"""
            ),
            "relative_path",
        ),
        ImportRule(_r(r"""require\(\s*['"](?P<module>[^'"]+)['"]\s*\)"""), "relative_path"),
    ),
    "go": (ImportRule(_r(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"(?P<module>[^"]+)"\s*$'), "go_path"),),
    "rust": (
        ImportRule(_r(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(?P<module>\w+)\s*;"), "rust_path"),
        ImportRule(
            _r(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(?P<module>[\w:]+)(?:::\{(?P<names>[^}]*)\})?"),
            "rust_path",
        ),
    ),
    "java": (ImportRule(_r(r"^\s*import\s+(?:static\s+)?(?P<module>[\w.]+?)(?:\.\*)?\s*;"), "java_path"),),
    "c": (ImportRule(_r(r'^\s*#\s*include\s+"(?P<module>[^"]+)"'), "include"),),
}
IMPORT_RULES["typescript"] = IMPORT_RULES["tsx"] = IMPORT_RULES["javascript"]
IMPORT_RULES["cpp"] = IMPORT_RULES["c"]

#: Extensions tried for an import written without one, per language.
IMPORT_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", "/__init__.py", ".pyi"),
    "javascript": (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", "/index.js", "/index.ts"),
    "typescript": (".ts", ".tsx", ".d.ts", ".js", "/index.ts", "/index.tsx", "/index.js"),
    "tsx": (".tsx", ".ts", ".js", "/index.tsx", "/index.ts"),
    "rust": (".rs", "/mod.rs"),
    "java": (".java",),
    "c": ("",),
    "cpp": ("",),
}
#: Languages whose files see their directory's other files without an import.
PACKAGE_BY_DIRECTORY = frozenset({"go", "java"})
#: Languages whose files also get the package prior (`package_prior.py`): candidates
#: weighed by it and a line of the package's names. Those where a package's names are
#: visible without an import (in Python the imports say it; measured: no gain there).
PRIOR_LANGUAGES = PACKAGE_BY_DIRECTORY
#: A C/C++ file's companion header or source (same stem, another of these extensions).
COMPANIONS = {"c": (".h", ".c"), "cpp": (".h", ".hpp", ".hh", ".cc", ".cpp", ".cxx")}
HEAD_ROWS = 400  # imports are looked for in the first rows only


@dataclass(frozen=True)
class ImportRef:
    module: str
    names: tuple[str, ...]
    line: str
    kind: str


def parse_imports(lines: Iterable[str], language: str) -> list[ImportRef]:
    """The imports spelled on these lines (Python's `import a, b` gives one per module)."""
    rules = IMPORT_RULES.get(language, ())
    out: list[ImportRef] = []
    in_go_block = False
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if language == "go":  # a quoted path alone on a line counts only inside `import (...)`
            if s.startswith("import ("):
                in_go_block = True
                continue
            if in_go_block and s.startswith(")"):
                in_go_block = False
                continue
            if not in_go_block and not s.startswith("import "):
                continue
        for rule in rules:
            for m in rule.pattern.finditer(line):
                module = m.group("module")
                raw_names = m.groupdict().get("names") or ""
                names = tuple(
                    n for n in re.findall(r"[A-Za-z_$][\w$]*", raw_names) if n not in ("as", "type")
                )
                if language == "python" and not s.startswith("from"):
                    for part in module.split(","):
                        mod = part.strip().split()[0] if part.strip() else ""
                        if mod:
                            out.append(ImportRef(mod, (), s, rule.kind))
                    continue
                out.append(ImportRef(module, names, s, rule.kind))
            if out and out[-1].line == s:
                break
    return out


@functools.lru_cache(maxsize=64)
def cached_imports(head: tuple[str, ...], language: str) -> tuple[ImportRef, ...]:
    """`parse_imports` of a file's head, reused while its import rows stay the same."""
    return tuple(parse_imports(head, language))


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

    def _suffix(self, tail: str) -> list[str]:
        """Known paths that end with `/tail` (tail uses '/')."""
        stem = path_stem(tail)
        want = "/" + tail.lstrip("/")
        return [p for p in self.by_stem(stem) if p.replace(os.sep, "/").endswith(want)]

    def _with_exts(self, base: str, exts: Sequence[str]) -> list[str]:
        out = []
        for ext in exts:
            p = os.path.normpath(base + ext)
            if self.exists(p):
                out.append(p)
                break
        return out

    def resolve(self, ref: ImportRef, current: str, language: str) -> list[str]:
        here = os.path.dirname(current)
        exts = IMPORT_EXTENSIONS.get(language, ("",))
        if ref.kind == "python":
            mod = ref.module
            dots = len(mod) - len(mod.lstrip("."))
            parts = [p for p in mod.lstrip(".").split(".") if p]
            found: list[str] = []
            if dots:
                base = here
                for _ in range(dots - 1):
                    base = os.path.dirname(base)
                target = os.path.join(base, *parts) if parts else base
                found = self._with_exts(target, exts) if parts else []
                for name in ref.names:  # `from . import events`: a submodule
                    found += self._with_exts(os.path.join(target, name), exts)
                return found
            if parts:
                tail = "/".join(parts)
                found = self._suffix(tail + ".py") or self._suffix(tail + "/__init__.py")
                for name in ref.names:
                    found += self._suffix(f"{tail}/{name}.py")
                if self.exists(os.path.join(here, "__init__.py")):
                    # Inside a package an absolute import never means a sibling module
                    # (`import subprocess` in asyncio/ is the top-level one).
                    found = [p for p in found if os.path.dirname(p) != here or len(parts) > 1]
            return found
        if ref.kind == "relative_path":
            if not ref.module.startswith("."):
                return []  # a package from node_modules: not workspace code
            base = os.path.join(here, ref.module)
            if self.exists(os.path.normpath(base)):
                return [os.path.normpath(base)]
            return self._with_exts(base, exts)
        if ref.kind == "go_path":
            segs = ref.module.strip("/").split("/")
            return [
                p
                for p in self.index.paths_in_dir_named("/".join(segs[-2:]))
                or self.index.paths_in_dir_named(segs[-1])
                if p.endswith(".go") and not p.endswith("_test.go")
            ][:MAX_CANDIDATES]
        if ref.kind == "rust_path":
            segs = [s for s in ref.module.split("::") if s and s not in ("crate", "self", "super")]
            if ref.module.startswith(("self::", "super::")) or len(segs) == 1:
                base = here if not ref.module.startswith("super::") else os.path.dirname(here)
                for n in range(len(segs), 0, -1):
                    got = self._with_exts(os.path.join(base, *segs[:n]), exts)
                    if got:
                        return got
            for n in range(len(segs), 0, -1):
                tail = "/".join(segs[:n])
                got = self._suffix(tail + ".rs") or self._suffix(tail + "/mod.rs")
                if got:
                    return got
            return []
        if ref.kind == "java_path":
            segs = ref.module.split(".")
            for n in range(len(segs), 1, -1):
                got = self._suffix("/".join(segs[:n]) + ".java")
                if got:
                    return got
            return []
        if ref.kind == "include":
            local = os.path.normpath(os.path.join(here, ref.module))
            if self.exists(local):
                return [local]
            return self._suffix(ref.module)
        return []


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


def gather_candidates(
    *,
    path: str,
    language: str,
    head_lines: tuple[str, ...],
    open_paths: Sequence[str],
    recent: Sequence[str],
    index: SymbolIndex,
    used: Iterable[str],
    defined_here: frozenset[str],
    deadline: float,
    mentioned: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Candidate files for the cursor, strongest first (ties by path: deterministic)."""
    cands: dict[str, Candidate] = {}

    def add(p: str, w: float, why: str) -> Candidate | None:
        if p == path:
            return None
        c = cands.get(p)
        if c is None:
            c = cands[p] = Candidate(p, w)
        c.add(w, why)
        return c

    resolver = PathResolver(index, open_paths)
    for ref in cached_imports(head_lines, language):
        for target in resolver.resolve(ref, path, language):
            c = add(target, W_IMPORTED, f"imported by this file (`{_short(ref.line)}`)")
            if c is not None:
                c.imported_names.update(ref.names)
    here = os.path.dirname(path)
    if language in PACKAGE_BY_DIRECTORY:
        ext = os.path.splitext(path)[1]
        for p in sorted(
            set(index.paths_in_dir(here)) | {o for o in open_paths if os.path.dirname(o) == here}
        ):
            if p.endswith(ext) and not p.endswith("_test.go"):
                add(p, W_PACKAGE, "same package (visible without an import)")
    for ext in COMPANIONS.get(language, ()):
        base = os.path.splitext(path)[0]
        if resolver.exists(base + ext):
            add(base + ext, W_PACKAGE, "this file's header/source pair")
    for p in open_paths:
        add(p, W_OPEN, "open in the editor")
    for p in recent:
        add(p, W_RECENT, "edited recently")
    # Names the enclosing function uses that this file does not define: where are they?
    # Each is evidence for the files defining it, worth 1/(files defining it): a name one
    # file defines points at that file, `get` defined in twenty says little; a top-level
    # definition (how a module or a class is reached) counts double a member.
    lookups = 0
    defining: dict[str, list[str]] = {}
    evidence: dict[str, float] = {}
    for name in sorted(used):
        if lookups >= MAX_LOOKUPS or time.perf_counter() > deadline:
            break
        if name in defined_here:
            continue
        lookups += 1
        syms = index.lookup(name)
        hits = {s.path for s in syms if s.path != path}
        if not hits or len(hits) > MAX_DEFINERS:
            continue
        top_level = {s.path for s in syms if s.container is None}
        for p in hits:
            evidence[p] = evidence.get(p, 0.0) + (1.0 if p in top_level else 0.5) / len(hits)
            if len(hits) <= 3:  # a name defined everywhere says nothing about where
                defining.setdefault(p, []).append(name)
    for p, names in defining.items():
        add(p, W_DEFINES, "defines " + ", ".join(f"`{n}`" for n in names[:4]) + " used near the cursor")
    for p in index.paths_in_dir(here)[:MAX_SIBLINGS]:
        if os.path.splitext(p)[1] == os.path.splitext(path)[1]:
            add(p, W_SIBLING, "in the same directory (workspace index)")
    used_set = used if isinstance(used, (set, frozenset)) else set(used)
    prior = package_prior(index, path, language, mentioned) if language in PRIOR_LANGUAGES else None
    for c in cands.values():
        outline = index.outline(c.path)
        if outline is None:
            continue
        # Then the top-level names of the file this file spells elsewhere (its classes,
        # a module's functions): the file is in use here, beyond the enclosing function.
        spelled = outline.top_names() & mentioned
        ev = evidence.get(c.path, 0.0)
        ev += MENTIONED_EVIDENCE * sum(1.0 / max(1, index.definers(n)) for n in spelled)
        c.affinity = ev
        if prior is not None and os.path.dirname(c.path) == here:
            c.prior = prior.best(outline.top_names() - mentioned, c.path)
            c.package = prior
            c.affinity += PRIOR_EVIDENCE * c.prior
        if c.weight == W_IMPORTED and not (c.imported_names & used_set) and not (outline.names() & used_set):
            c.weight = W_IMPORTED_UNUSED  # imported, but nothing of it near the cursor
    top = max((c.affinity for c in cands.values()), default=0.0)
    if top > 0:  # among files with the same standing, the ones the cursor's code leans on get more
        for c in cands.values():
            c.weight = round(c.weight * (1.0 - AFFINITY_WEIGHT + AFFINITY_WEIGHT * c.affinity / top), 4)
    ranked = sorted(cands.values(), key=lambda c: (-c.weight, -c.affinity, -c.prior, c.path))
    return ranked[:MAX_CANDIDATES]


def _short(line: str, n: int = 60) -> str:
    line = " ".join(line.split())
    return line if len(line) <= n else line[: n - 3] + "..."


def assemble(
    candidates: Sequence[Candidate],
    outline_of: Callable[[str], FileOutline | None],
    rel: Relevance,
    budget: int,
    deadline: float,
) -> Gathered:
    """The best outline entries of all candidates within `budget`, rendered per file.

    Greedy over value per character (see `SPREAD`) with whole entries only (an entry's
    container header is paid for with it); a file's share is capped. Files come out in candidate
    order (weight, then path) and entries in file order: deterministic for equal inputs.
    """
    if budget <= 0 or not candidates:
        return Gathered([], {})
    # The package's names its similar files need (`package_prior.py`), first on the
    # budget; an outline does not list them again.
    package = next((c.package for c in candidates if c.package is not None), None)
    line_budget = 0
    if package is not None:  # reserved: what the line would take before the outlines
        first, _names = package_line(
            package,
            rel.mentioned | rel.used,
            int(budget * PACKAGE_SHARE),
            COMMENT.get(package.language, "//"),
            PACKAGE_MIN_SCORE,
        )
        line_budget = len(first)
    budget -= line_budget
    pool: list[tuple[float, int, int]] = []  # (-value per char, file rank, entry index)
    rels: dict[int, Relevance] = {}  # per file rank
    rank_scores: dict[int, list[float]] = {}
    outlines: list[FileOutline | None] = []
    considered = 0
    for rank, cand in enumerate(candidates[:MAX_CANDIDATES]):
        # The strongest file is ranked even past the deadline: its outline is ready, ranking
        # it is bounded (MAX_ENTRIES), and on a loaded machine it is the one that matters.
        if rank > 0 and time.perf_counter() > deadline:
            break
        outline = outline_of(cand.path)
        outlines.append(outline)
        if outline is None or not outline.entries:
            continue
        considered += 1
        rel_file = Relevance(
            rel.used,
            rel.imported | frozenset(cand.imported_names),
            rel.mentioned,
            rel.near,
            path_stem(cand.path) in cand.imported_names,
            path_stem(cand.path) in cand.imported_names and path_stem(cand.path) in rel.used,
            rel.families,
        )
        rels[rank] = rel_file
        scores = rank_scores[rank] = rank_entries(outline, rel_file)
        total = sum(s for s in scores if s >= MIN_SCORE)
        norm = cand.weight / (total**SPREAD) if total > 0 else 0.0
        for i, s in enumerate(scores):
            if s >= MIN_SCORE:
                pool.append((-s * norm / (len(outline.entries[i].name) + 2), rank, i))
    pool.sort()
    per_file_cap = max(200, int(budget * MAX_FILE_SHARE))
    picks = [OutlinePick(o) if o is not None else None for o in outlines]
    used = 0
    full_used = 0
    for _value, rank, i in pool:
        pick = picks[rank]
        assert pick is not None
        before = pick.cost
        if rank_scores[rank][i] >= FULL_MIN_SCORE:
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
        if visible_here(pick.outline, i, rels[rank]):
            continue  # no room for its signature, and its bare name is already in the file
        cost = pick.cost_short(i)
        if cost <= 0:
            continue
        if used + cost > budget or before + cost > per_file_cap:
            continue
        pick.add_short(i)
        used += cost
    snippets: list[Snippet] = []
    why: dict[str, str] = {}
    for rank, pick in enumerate(picks):
        if pick is None or not len(pick):
            continue
        text = pick.text()
        cand = candidates[rank]
        snippets.append(
            Snippet(path=pick.outline.path, text=text, score=round(cand.weight, 3), reason="outline")
        )
        why[pick.outline.path] = (
            "; ".join(cand.reasons)
            + f"; {len(pick.full)} signatures and {len(pick.short)} names"
            + f" of its {len(pick.outline.entries)} outline entries"
        )
    line, line_names = "", list[str]()
    if package is not None and line_budget > 0:
        shown = frozenset(n for snip in snippets for n in _WORD.findall(snip.text))
        line, line_names = package_line(
            package,
            rel.mentioned | rel.used | shown,
            line_budget,
            COMMENT.get(package.language, "//"),
            PACKAGE_MIN_SCORE,
        )
    if package is not None and line_names:
        key = package.directory + os.sep
        snippets.append(Snippet(path=key, text=line, score=0.0, reason=PACKAGE_REASON))
        near = ", ".join(os.path.basename(p) for p, _sim, _names in package.neighbours[:3])
        why[key] = (
            f"names of this package (visible without an import) that the files most like this one"
            f" spell ({near}...), this file not: {len(line_names)} names"
        )
    return Gathered(
        snippets, why, considered, tuple(c.path for c in candidates[:MAX_CANDIDATES]), len(outlines)
    )
