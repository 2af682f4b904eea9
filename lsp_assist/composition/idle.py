"""What the runtime does while the user pauses: after an edit pause the idle embedded
model reads that line's prompt window (`EditPauses`, `pipeline/prefill.py`), and after an
idle spell the fast tier's connection is re-opened while the user types (`Rewarm`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.pipeline.prefill import Prefiller
from lsp_assist.providers.base import Provider

PREFILL_AFTER_S = 0.15  # an edit pause this long warms the embedded model's KV cache
REWARM_AFTER_S = 45.0  # below the connection pools' keep-alive expiry


class EditPauses:
    """Prefill at the line of the last edit once the user pauses, or where the cursor rests."""

    def __init__(self, store: DocumentStore, prefiller: Prefiller) -> None:
        self.store = store
        self.prefiller = prefiller
        self._timer: asyncio.TimerHandle | None = None

    def note_edit(self, uri: str, row: int) -> None:
        """An edit at `row` (from didChange): once the user pauses 150 ms, the embedded model
        reads that line's prompt window in the background if it is idle (`LocalProvider.prefill`)."""
        if self._timer is not None:
            self._timer.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(PREFILL_AFTER_S, self._prefill, uri, row)

    def _prefill(self, uri: str, row: int) -> None:
        self._timer = None
        doc = self.store.get(uri)
        if doc is not None:
            line = doc.line(row)
            self.prefiller.at(uri, Cursor(row, len(line) - len(line.lstrip(" \t"))))

    def cursor_rest(self, uri: str, version: int | None, cursor: Cursor) -> str:
        """`lspAssist/cursorRest`: the cursor rests at `cursor`; the idle embedded model reads
        that position's prompt. Returns a log line (no code)."""
        if self._timer is not None:  # the rest's own position is the better guess
            self._timer.cancel()
            self._timer = None
        return self.prefiller.cursor_rest(uri, version, cursor)


class Rewarm:
    """Re-open the fast tier's connection after an idle spell, while the user types, not on
    the next completion (keep-alive pools drop idle connections after about a minute; a
    cold TLS connection costs two round trips)."""

    def __init__(self, fast: Callable[[], Provider | None]) -> None:
        self.fast = fast
        self._last_activity = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    def touch(self) -> None:
        """Called on every edit."""
        now = time.monotonic()
        idle = now - self._last_activity
        self._last_activity = now
        if idle < REWARM_AFTER_S or self._task is not None:
            return
        provider = self.fast()
        if provider is None:
            return

        async def rewarm() -> None:
            try:
                await provider.warm()
            finally:
                self._task = None

        try:
            self._task = asyncio.get_running_loop().create_task(rewarm())
        except RuntimeError:
            self._task = None
