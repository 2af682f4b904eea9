"""Related lines: windows elsewhere in the file (within reach) that share the cursor's names.

Windows are scored by Jaccard with the names near the cursor; a window's names are kept by
the names of its rows, so an edit rebuilds only the windows holding it (the other ~130 of a
request reuse their union from the last keystroke, and across versions), and each recent
document version's windows by start row in a table that follows edits (`row_tables`).
"""

from __future__ import annotations

import heapq
import sys
from collections import Counter

from lsp_assist.context.lexicon import Lexicon
from lsp_assist.context.parts import Placer
from lsp_assist.context.row_tables import RowTable, RowTables
from lsp_assist.documents.store import Document
from lsp_assist.memory import ByteLRU, set_bytes

RELATED_SHARE = 0.2
RELATED_REACH = 200  # rows each side searched for related lines (bounded work per keystroke)
RELATED_WINDOW = 6
RELATED_STEP = 3
RELATED_BEST = 8  # windows tried, best first
WINDOWS_BYTES = 3 << 20  # ~3,000 related windows' names (~130 per request)
# The open documents' current versions' windows by start row (the sets, also the `windows`
# memo's, and a slot per row: ~750 bytes a row), least recent document out first.
VERSIONS_BYTES = 2 << 20
VERSION_DOCS = 8
WARM_BYTES = 1 << 20  # a file whose windows are more is not read whole after didOpen
WARM_BYTES_PER_ROW = 800
_Version = RowTable[frozenset[str]]  # one document version's windows by start row (None: not read yet)


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
        # Each recent document's current version's windows by start row (each the rows
        # `start` to `start + RELATED_WINDOW`, cut at the file's end): a request at a fresh
        # position of an unchanged document finds its ~130 windows here without building
        # their rows' key, also when requests alternate between documents. Bounded by
        # `VERSIONS_BYTES` and `VERSION_DOCS`, least recent document out first.
        # A window reads the `RELATED_WINDOW - 1` rows after its start: an edit empties the
        # windows starting that far before it.
        self._versions: RowTables[frozenset[str]] = RowTables(reach=RELATED_WINDOW - 1)

    @property
    def versions_bytes(self) -> int:
        """What the windows by row keep alive (`VERSIONS_BYTES` at most)."""
        return self._versions.nbytes

    def forget(self, uri: str) -> None:
        """Drop a document's windows by row (didClose; they are read again from the memo)."""
        self._versions.forget(uri)

    def follow_edit(self, doc: Document) -> None:
        """After a didChange: the document's windows by row, if they were of the text the
        change started from, now of the new text (the windows holding a replaced row to be
        read again, the others moved with their rows)."""
        self._versions.follow_edit(doc)

    def warm(self, doc: Document) -> None:
        """Every window of this version, read now (after didOpen: `ContextEngine.warm`), for
        a file whose windows fit `WARM_BYTES`; a longer one's are read by its requests."""
        if doc.line_count * WARM_BYTES_PER_ROW > WARM_BYTES:
            return
        v = self._version_of(doc)
        for first in range(RELATED_STEP):  # every start: a cursor's reach starts at any row
            self._windows_at(v, doc, (first, doc.line_count, RELATED_STEP), doc.line_count)

    def place(self, place: Placer, doc: Document, near: Counter[str], limit: int) -> int:
        """Best windows (by Jaccard with the names near the cursor) outside the local window."""
        if limit <= 0:
            return 0
        row = place.cursor_row
        lo, hi = max(0, row - RELATED_REACH), min(doc.line_count, row + RELATED_REACH)
        used = 0
        skip = place.skipper
        for start in self._ranked(place, doc, set(near), (lo, hi)):
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
        """The `RELATED_BEST` window starts sharing most names with `query` (Jaccard), best
        first (ties: nearest the cursor, then the first in the file)."""
        lo, hi = reach
        row = place.cursor_row
        v = self._version_of(doc)
        # The windows of `lo`..`hi` by `RELATED_STEP`, each cut at `hi` (the reach's end).
        wins = self._windows_at(v, doc, (lo, hi, RELATED_STEP), hi)
        inters = [len(ids & query) for ids in wins]
        scored: list[tuple[float, int, int]] = []
        kept = place.kept
        n_query = len(query)
        for i, inter in enumerate(inters):
            if not inter:
                continue
            start = lo + i * RELATED_STEP
            if start <= row < start + RELATED_WINDOW or start in kept or start + 4 in kept:
                continue
            scored.append((-inter / (len(wins[i]) + n_query - inter), abs(start - row), start))
        # The order a stable sort by (score, distance) gives: the start breaks the last ties.
        return [start for _, _, start in heapq.nsmallest(RELATED_BEST, scored)]

    def _version_of(self, doc: Document) -> _Version:
        return self._versions.of(doc)

    def _windows_at(
        self, v: _Version, doc: Document, starts: tuple[int, int, int], end: int
    ) -> list[frozenset[str]]:
        """The names of the windows at `starts` (`lo`, `hi`, `step`), each cut at `end` (the
        version's table where a window is not cut short of the file's end)."""
        lo, hi, step = starts
        wins = v.at[lo:hi:step]
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
                    self._keep(v, start, ids)
            out.append(ids)
        return out

    def _keep(self, v: _Version, start: int, ids: frozenset[str]) -> None:
        v.at[start] = ids
        versions = self._versions
        versions.add(v, sys.getsizeof(ids))
        while versions.nbytes > VERSIONS_BYTES or len(versions) > VERSION_DOCS:
            oldest = versions.oldest()
            if versions[oldest] is v:  # the current one alone is over: started over
                versions.empty(v)
                break
            versions.forget(oldest)
