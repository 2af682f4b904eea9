"""Related lines: windows elsewhere in the file (within reach) that share the cursor's names.

Windows are scored by Jaccard with the names near the cursor; a window's names are kept by
the names of its rows, so an edit rebuilds only the windows holding it (the other ~130 of a
request reuse their union from the last keystroke, and across versions).
"""

from __future__ import annotations

import sys
from collections import Counter

from lsp_assist.context.lexicon import Lexicon
from lsp_assist.context.parts import Placer
from lsp_assist.documents.store import Document
from lsp_assist.memory import ENTRY_OVERHEAD, ByteLRU, set_bytes

RELATED_SHARE = 0.2
RELATED_REACH = 200  # rows each side searched for related lines (bounded work per keystroke)
RELATED_WINDOW = 6
RELATED_STEP = 3
RELATED_BEST = 8  # windows tried, best first
WINDOWS_BYTES = 3 << 20  # ~3,000 related windows' names (~130 per request)
VERSION_BYTES = 1 << 20  # one version's windows by row (the sets' tables; ~1,000 windows)
WARM_BYTES_PER_ROW = 900  # a window's set (10-20 names) and its slot: what a row's costs


def _window_bytes(rows: tuple[frozenset[str], ...], names: frozenset[str]) -> int:
    # The rows' sets are the lexicon's values, counted here too: they outlive their entries there.
    return sys.getsizeof(rows) + sum(map(sys.getsizeof, rows)) + set_bytes(names)


class RelatedLines:
    """The related-lines source."""

    name = "related"

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self.windows: ByteLRU[tuple[frozenset[str], ...], frozenset[str]] = ByteLRU(
            WINDOWS_BYTES, _window_bytes
        )
        # One document version's windows by start row (each the rows `start` to `start +
        # RELATED_WINDOW`, cut at the file's end): a request at a fresh position of an
        # unchanged document finds its ~130 windows here without building their rows' key.
        # The sets are the `windows` memo's; one version only (the last asked), started over
        # past `VERSION_BYTES` (their tables: the names are the lexicon's).
        self._version: tuple[str, str] | None = None  # its uri and text (the object: as the lexicon)
        self._at: list[frozenset[str] | None] = []
        self._at_bytes = 0

    def forget_version(self) -> None:
        """Drop the last version's windows (they are read again from the rows' memo)."""
        self._version, self._at, self._at_bytes = None, [], 0

    def warm(self, doc: Document) -> None:
        """Every window of this version, read now (after didOpen: `ContextEngine.warm`), for
        a file whose windows fit `VERSION_BYTES`; a longer one's are read by its requests."""
        if doc.line_count * WARM_BYTES_PER_ROW > VERSION_BYTES:
            return
        self._version_of(doc)
        for first in range(RELATED_STEP):  # every start: a cursor's reach starts at any row
            self._windows_at(doc, first, doc.line_count, RELATED_STEP, doc.line_count)

    def place(self, place: Placer, doc: Document, near: Counter[str], limit: int) -> int:
        """Best windows (by Jaccard with the names near the cursor) outside the local window."""
        if limit <= 0:
            return 0
        row = place.cursor_row
        lo, hi = max(0, row - RELATED_REACH), min(doc.line_count, row + RELATED_REACH)
        used = 0
        skip = place.skipper
        for start in self._ranked(place, doc, set(near), (lo, hi))[:RELATED_BEST]:
            rows = range(start, min(hi, start + RELATED_WINDOW))
            if skip is not None:  # never half a docstring: no dangling quotes in the prompt
                rows_kept = [r for r in rows if skip(r) is None]
            else:
                rows_kept = list(rows)
            used += place.rows("related", rows_kept, limit - used)
            if used >= limit:
                break
        return used

    def _ranked(self, place: Placer, doc: Document, query: set[str], reach: tuple[int, int]) -> list[int]:
        """Window starts sharing a name with `query`, best first (ties: nearest the cursor)."""
        lo, hi = reach
        row = place.cursor_row
        self._version_of(doc)
        # The windows of `lo`..`hi` by `RELATED_STEP`, each cut at `hi` (the reach's end).
        wins = self._windows_at(doc, lo, hi, RELATED_STEP, hi)
        inters = [len(ids & query) for ids in wins]
        scored: list[tuple[float, int]] = []
        kept = place.kept
        n_query = len(query)
        for i, inter in enumerate(inters):
            if not inter:
                continue
            start = lo + i * RELATED_STEP
            if start <= row < start + RELATED_WINDOW or start in kept or start + 4 in kept:
                continue
            scored.append((inter / (len(wins[i]) + n_query - inter), start))
        scored.sort(key=lambda t: (-t[0], abs(t[1] - row)))
        return [start for _, start in scored]

    def _version_of(self, doc: Document) -> None:
        version = self._version
        if version is None or version[0] != doc.uri or version[1] is not doc.text:
            self.forget_version()
            self._version = (doc.uri, doc.text)
            self._at = [None] * doc.line_count
            self._at_bytes = 8 * doc.line_count

    def _windows_at(self, doc: Document, lo: int, hi: int, step: int, end: int) -> list[frozenset[str]]:
        """The names of the windows starting at `lo`..`hi` by `step`, each cut at `end` (the
        version's table where a window is not cut short of the file's end)."""
        at = self._at
        wins = at[lo:hi:step]
        whole = hi if end >= doc.line_count else max(lo, end - RELATED_WINDOW + 1)
        if None not in wins and whole >= hi:
            return wins  # type: ignore[return-value]  # every window was read
        per = self.lexicon.rows(doc, lo, end)
        out: list[frozenset[str]] = []
        for i, start in enumerate(range(lo, hi, step)):
            ids = wins[i] if start < whole else None
            if ids is None:
                rows_ids = tuple(per[start - lo : min(end, start + RELATED_WINDOW) - lo])
                got = self.windows.get(rows_ids)
                if got is None:
                    got = frozenset().union(*rows_ids)
                    self.windows.put(rows_ids, got)
                ids = got
                if start < whole:
                    self._keep(start, ids)
            out.append(ids)
        return out

    def _keep(self, start: int, ids: frozenset[str]) -> None:
        self._at_bytes += sys.getsizeof(ids) + ENTRY_OVERHEAD
        if self._at_bytes > VERSION_BYTES:
            self._at = [None] * len(self._at)
            self._at_bytes = 8 * len(self._at)
        self._at[start] = ids
