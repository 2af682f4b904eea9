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
        # One document version's windows by (start, end) row: a request at a fresh position
        # of an unchanged document finds most of its ~130 windows here without building
        # their rows' key. The sets are the `windows` memo's; one version only (the last
        # asked), started over past `VERSION_BYTES` (their tables: the names are the lexicon's).
        self._version: tuple[str, str] | None = None  # its uri and text (the object: as the lexicon)
        self._at: dict[tuple[int, int], frozenset[str]] = {}
        self._at_bytes = 0

    def forget_version(self) -> None:
        """Drop the last version's windows (they are read again from the rows' memo)."""
        self._version, self._at, self._at_bytes = None, {}, 0

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
        version = self._version
        if version is None or version[0] != doc.uri or version[1] is not doc.text:
            self.forget_version()
            self._version = (doc.uri, doc.text)
        at = self._at
        per: list[frozenset[str]] | None = None
        scored: list[tuple[float, int]] = []
        windows = self.windows
        kept = place.kept
        for start in range(lo, hi, RELATED_STEP):
            if start <= row < start + RELATED_WINDOW or start in kept or start + 4 in kept:
                continue
            span = (start, min(hi, start + RELATED_WINDOW))
            ids = at.get(span)
            if ids is None:
                if per is None:
                    per = self.lexicon.rows(doc, lo, hi)
                rows_ids = tuple(per[start - lo : start - lo + RELATED_WINDOW])
                ids = windows.get(rows_ids)
                if ids is None:
                    ids = frozenset().union(*rows_ids)
                    windows.put(rows_ids, ids)
                self._at_bytes += sys.getsizeof(ids) + ENTRY_OVERHEAD
                if self._at_bytes > VERSION_BYTES:
                    at.clear()
                    self._at_bytes = 0
                at[span] = ids
            inter = len(ids & query)
            if inter:
                scored.append((inter / (len(ids) + len(query) - inter), start))
        scored.sort(key=lambda t: (-t[0], abs(t[1] - row)))
        return [start for _, start in scored]
