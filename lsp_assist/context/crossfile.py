"""Snippets from other documents, ranked by identifier overlap with the code at the cursor.

The known baseline (Jaccard similarity over identifier sets on sliding windows of
lines) with two properties the prompt cache needs: the result is deterministic (ties
broken by path and row) and snippets come out in a stable order (by path, then row), so
consecutive requests share a prompt prefix. Window identifier sets are cached per
document version, and the work stops at the deadline with what is ready.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass

from lsp_assist.domain import Snippet
from lsp_assist.memory import ByteLRU, set_bytes, strings_bytes

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Other documents' lines and windows, per version (a whole text each): ~8 files of 100 KB.
RANKER_BYTES = 6 << 20


def names_that_fit(names: Iterable[str], room: int, sep: str) -> list[str]:
    """The leading `names` whose `sep`-joined text fits in `room` characters (a names line:
    the first name that does not fit ends it, so the line keeps the ranking's order)."""
    out: list[str] = []
    used = 0
    for name in names:
        add = len(name) + (len(sep) if out else 0)
        if used + add > room:
            break
        out.append(name)
        used += add
    return out


#: Words too common to say anything about similarity (keywords of the supported languages).
STOPWORDS = frozenset(
    """
    and as assert async await break class continue def del elif else except finally for from
    global if import in is lambda nonlocal not or pass raise return try while with yield None
    True False self cls function var let const new this typeof instanceof void delete switch
    case default throw catch do export extends super static public private protected interface
    type enum implements package func go chan map struct range defer select fallthrough goto
    fn mut pub impl trait use mod crate where match loop ref move dyn unsafe extern int char
    long short float double unsigned signed bool string str sizeof typedef union null nil true
    false undefined of get set print len args kwargs
    """.split()
)


def identifiers(text: str) -> set[str]:
    """Identifiers worth comparing: no keywords, no one-letter names."""
    return {t for t in IDENT.findall(text) if len(t) > 1 and t not in STOPWORDS}


def jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter) if inter else 0.0


def clip_lines(text: str, limit: int) -> str:
    """At most `limit` characters, cut after a whole line (never mid-token)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit + 1)
    return text[:cut] if cut > 0 else ""


@dataclass(frozen=True)
class SourceDoc:
    """One candidate document: `key`+`version` identify its text for the cache."""

    path: str
    key: str
    version: object
    text: str


@dataclass(frozen=True)
class _Window:
    start: int
    end: int  # exclusive
    idents: frozenset[str]


def _windows_bytes(key: tuple[str, object], entry: tuple[list[str], list[_Window]]) -> int:
    lines, wins = entry
    return (
        sys.getsizeof(lines)
        + strings_bytes(lines)
        + sys.getsizeof(wins)
        + sum(sys.getsizeof(w) + set_bytes(w.idents) for w in wins)
    )


@dataclass(frozen=True)
class SimilarLimits:
    """How many similar windows `CrossFileRanker.rank` may send, and how good they must be."""

    max_snippets: int = 4
    max_per_doc: int = 2
    min_score: float = 0.05  # Jaccard with the names near the cursor
    max_snippet_chars: int = 1200


SIMILAR_LIMITS = SimilarLimits()


class CrossFileRanker:
    """Ranks windows of other documents against the identifiers around the cursor."""

    def __init__(
        self, window_lines: int = 16, step: int = 8, cache_size: int = 64, max_bytes: int = RANKER_BYTES
    ) -> None:
        self.window_lines = window_lines
        self.step = step
        # Per document version: its lines (a copy of its text) and windows.
        self._cache: ByteLRU[tuple[str, object], tuple[list[str], list[_Window]]] = ByteLRU(
            max_bytes, _windows_bytes, cache_size
        )

    @property
    def nbytes(self) -> int:
        return self._cache.nbytes

    def _windows(self, doc: SourceDoc) -> tuple[list[str], list[_Window]]:
        key = (doc.key, doc.version)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        lines = doc.text.split("\n")
        per_line = [identifiers(line) for line in lines]
        wins: list[_Window] = []
        n = len(lines)
        for start in range(0, max(1, n - self.window_lines + self.step), self.step):
            end = min(n, start + self.window_lines)
            ids: set[str] = set()
            for s in per_line[start:end]:
                ids |= s
            if ids:
                wins.append(_Window(start, end, frozenset(ids)))
            if end >= n:
                break
        self._cache.put(key, (lines, wins))
        return lines, wins

    def rank(
        self,
        query: set[str],
        docs: Iterable[SourceDoc],
        budget_chars: int,
        *,
        deadline: float | None = None,
        limits: SimilarLimits = SIMILAR_LIMITS,
    ) -> list[Snippet]:
        """The best windows that fit in `budget_chars`, in stable (path, row) order.

        `deadline` is a `time.perf_counter()` value; past it, ranking uses what was scored.
        """
        if not query or budget_chars <= 0:
            return []
        scored: list[tuple[float, str, int, int, list[str]]] = []
        for doc in sorted(docs, key=lambda d: (d.path, d.key)):
            if deadline is not None and time.perf_counter() > deadline:
                break
            lines, wins = self._windows(doc)
            for w in wins:
                score = jaccard(query, w.idents)
                if score >= limits.min_score:
                    scored.append((score, doc.path, w.start, w.end, lines))
        scored.sort(key=lambda t: (-t[0], t[1], t[2]))
        picked: list[tuple[str, int, int, float, str]] = []
        used = 0
        per_doc: dict[str, list[tuple[int, int]]] = {}
        for score, path, start, end, lines in scored:
            if len(picked) >= limits.max_snippets:
                break
            spans = per_doc.setdefault(path, [])
            if len(spans) >= limits.max_per_doc or any(start < e and s < end for s, e in spans):
                continue
            text = clip_lines("\n".join(lines[start:end]).strip("\n"), limits.max_snippet_chars)
            if not text.strip() or used + len(text) > budget_chars:
                continue
            spans.append((start, end))
            used += len(text)
            picked.append((path, start, end, score, text))
        picked.sort(key=lambda t: (t[0], t[1]))
        return [Snippet(path=p, text=t, score=round(sc, 4), reason="similar") for p, _, _, sc, t in picked]
