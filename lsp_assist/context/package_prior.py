"""Which of its package's names a file is likely to need: a prior from the files like it.

Java and Go files see their package's types and members without an import, so the
current file's imports say nothing about them, and a name a line needs once (`TimeUnit`,
`Helpers.collectionToString`) usually appears nowhere else in the file. What does say
something: the other files of the package that spell the most of this file's names (a
queue's neighbours are the other queues) and which names those spell. The index keeps
the names each file spells (`SymbolIndex.refs`, computed once per file content); per
request only the cached result is read: it is recomputed when the current file's name
set or its package's files change, not while a line is typed.

`score(name, definer)` is the similarity-weighted share of the `NEIGHBOURS` most similar
files of the package (the current file and the file defining `name` left out) that spell
`name`: 0 when none of them does, 1 when all do.
"""

from __future__ import annotations

import itertools
import os
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from lsp_assist.context.crossfile import names_that_fit
from lsp_assist.structure.symbols import SymbolIndex

NEIGHBOURS = 8  # most similar files of the package whose names count
MAX_FILES = 400  # files of one directory compared (a set intersection each)
CACHE_SIZE = 16
PACKAGE_REASON = "package"  # `Snippet.reason` of the package names line


@dataclass(frozen=True)
class PackagePrior:
    """The nearest files of the current file's package and the names they spell."""

    neighbours: tuple[tuple[str, float, frozenset[str]], ...]  # (path, similarity, names)
    weights: dict[str, float]  # name -> summed similarity of the neighbours spelling it
    total: float
    directory: str = ""
    language: str = ""
    #: (name, defining path) of the package's visible top-level definitions
    types: tuple[tuple[str, str], ...] = ()

    def score(self, name: str, definer: str | None = None) -> float:
        w = self.weights.get(name, 0.0)
        if w <= 0.0 or self.total <= 0.0:
            return 0.0
        for path, sim, names in self.neighbours:
            if path == definer and name in names:
                w -= sim  # a file spells its own names: no evidence that others need them
                break
        return max(0.0, w) / self.total

    def best(self, names: Iterable[str], definer: str | None = None) -> float:
        return max((self.score(n, definer) for n in names), default=0.0)

    def ranked_types(self) -> list[tuple[float, str]]:
        """(score, name) of `types`, best first (ties by name); computed once."""
        got: list[tuple[float, str]] | None = self.__dict__.get("_ranked")
        if got is None:
            best: dict[str, float] = {}
            for n, p in self.types:
                best[n] = max(best.get(n, 0.0), self.score(n, p))
            got = sorted(((s, n) for n, s in best.items() if s > 0), key=lambda t: (-t[0], t[1]))
            object.__setattr__(self, "_ranked", got)  # cached: a frozen dataclass
        return got


EMPTY = PackagePrior((), {}, 0.0)


def package_line(
    prior: PackagePrior, skip: frozenset[str], limit: int, comment: str, min_score: float
) -> tuple[str, list[str]]:
    """The package's top-level names its similar files need most (and `skip` lacks), as one
    comment line within `limit` characters: ("", []) when none scores `min_score`."""
    head = f"{comment} package names: "
    ranked = itertools.takewhile(lambda t: t[0] >= min_score, prior.ranked_types())
    names = names_that_fit((n for _, n in ranked if n not in skip), limit - len(head), ", ")
    if not names:
        return "", []
    return head + ", ".join(names), names


_cache: OrderedDict[tuple[object, ...], PackagePrior] = OrderedDict()


def package_prior(index: SymbolIndex, path: str, language: str, mentioned: frozenset[str]) -> PackagePrior:
    """The prior for `path`, whose current text spells `mentioned` (cached; see the module)."""
    directory = os.path.dirname(path)
    key = (index.instance, path, language, index.package_changes(directory), mentioned)
    got = _cache.get(key)
    if got is not None:
        _cache.move_to_end(key)
        return got
    got = _compute(index, path, directory, language, mentioned)
    _cache[key] = got
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return got


def _compute(
    index: SymbolIndex, path: str, directory: str, language: str, mentioned: frozenset[str]
) -> PackagePrior:
    if not mentioned:
        return EMPTY
    ext = os.path.splitext(path)[1]
    sims: list[tuple[float, str, frozenset[str]]] = []
    for other, names in index.refs_in_dir(directory)[:MAX_FILES]:
        if other == path or os.path.splitext(other)[1] != ext or not names:
            continue
        common = len(mentioned & names)
        if common:
            sims.append((common / (len(mentioned) + len(names) - common), other, names))
    sims.sort(key=lambda t: (-t[0], t[1]))
    near = tuple((p, sim, names) for sim, p, names in sims[:NEIGHBOURS])
    weights: dict[str, float] = {}
    for _p, sim, names in near:
        for n in names:
            if n not in mentioned:
                weights[n] = weights.get(n, 0.0) + sim
    types: list[tuple[str, str]] = []
    for other, _names in index.refs_in_dir(directory)[:MAX_FILES]:
        outline = index.outline(other)
        if other == path or outline is None or os.path.splitext(other)[1] != ext:
            continue
        types.extend((name, other) for name in outline.visible_top_names())
    total = sum(sim for _p, sim, _n in near)
    return PackagePrior(near, weights, total, directory, language, tuple(types))
