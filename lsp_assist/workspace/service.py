"""The workspace index inside a running server: background build, updates, cross-file feed.

`WorkspaceService` owns one `WorkspaceIndex` per workspace root. `refresh()` scans and
re-reads changed files in a worker thread (`asyncio.to_thread`: the event loop keeps
answering completions), builds a fresh `SymbolIndex` there too, and swaps it into the
context engine in one assignment on the loop, then re-adds the open documents (their
buffer, not the disk, is the truth while they are open). Refreshes are serialized by a
lock, so the background build and a `warmCache` command never race.

Edits are cheap: `note_change` only marks the file dirty (the context engine's own hook
already re-indexes open documents). A save or a close re-reads that one file from disk,
debounced, and the index file is persisted a little later.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from lsp_assist.config.schema import Config
from lsp_assist.context.builder import ContextEngine
from lsp_assist.documents.store import DocumentStore
from lsp_assist.languages import canonical, language_id_for_path
from lsp_assist.workspace.index import RefreshResult, WorkspaceIndex, build_symbol_index

log = logging.getLogger(__name__)

SAVE_DEBOUNCE_S = 0.5
PERSIST_DELAY_S = 5.0


class Boundary(Protocol):
    def excluded(self, path: str | None) -> str | None: ...


class WorkspaceHost(Protocol):
    """What the workspace index needs of the running server (`lsp_assist.server.Runtime`)."""

    config: Config
    store: DocumentStore
    context: ContextEngine

    @property
    def workspace_roots(self) -> Sequence[Path]: ...

    @property
    def cache_dir(self) -> Path: ...

    @property
    def governance(self) -> Boundary | None: ...


class WorkspaceService:
    """Workspace indexes of one server (`WorkspaceHost`)."""

    def __init__(self, runtime: WorkspaceHost) -> None:
        self.rt = runtime
        self.indexes: dict[str, WorkspaceIndex] = {}
        self.last: dict[str, Any] = {}
        self.dirty: set[str] = set()
        self._stop = threading.Event()
        self._lock: asyncio.Lock | None = None
        self._task: asyncio.Task[dict[str, Any]] | None = None
        self._pending: set[str] = set()
        self._flush: asyncio.TimerHandle | None = None
        self._persist: asyncio.TimerHandle | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self.ready = False  # True once a refresh has fed the context engine
        self._built_roots: tuple[str, ...] = ()

    def _roots(self) -> tuple[str, ...]:
        return tuple(sorted(os.path.abspath(str(r)) for r in self.rt.workspace_roots))

    # ------------------------------------------------------------------ configuration

    def _excluded(self, path: str) -> str | None:
        gov = self.rt.governance
        return None if gov is None else gov.excluded(path)

    def _current_indexes(self) -> list[WorkspaceIndex]:
        """One index per root, rebuilt when the roots or the limits changed."""
        cfg = self.rt.config.workspace
        cache_dir = self.rt.cache_dir if self.rt.config.cache.enabled else None
        wanted: dict[str, WorkspaceIndex] = {}
        for root in self.rt.workspace_roots:
            key = os.path.abspath(str(root))
            idx = self.indexes.get(key)
            if (
                idx is None
                or idx.max_files != cfg.max_files
                or idx.max_file_bytes != cfg.max_file_bytes
                or idx.file != (WorkspaceIndex(key, cache_dir).file)
            ):
                idx = WorkspaceIndex(
                    key,
                    cache_dir,
                    excluded=self._excluded,
                    max_files=max(1, cfg.max_files),
                    max_file_bytes=max(1, cfg.max_file_bytes),
                    time_budget_s=cfg.scan_time_budget_s,
                )
            idx.time_budget_s = cfg.scan_time_budget_s
            wanted[key] = idx
        self.indexes = wanted
        return list(wanted.values())

    def index_for(self, path: str) -> WorkspaceIndex | None:
        ap = os.path.abspath(path)
        best: WorkspaceIndex | None = None
        for root, idx in self.indexes.items():
            if (ap == root or ap.startswith(root.rstrip(os.sep) + os.sep)) and (
                best is None or len(root) > len(best.root)
            ):
                best = idx
        return best

    # ------------------------------------------------------------------ building

    def start_background(self) -> asyncio.Task[dict[str, Any]] | None:
        """Build the index in the background (idempotent while one build runs)."""
        if not self.rt.config.workspace.index or not self.rt.workspace_roots:
            return None
        if self._task is not None and not self._task.done():
            return self._task
        if self.ready and self._built_roots == self._roots():
            return None  # built already; saves and closes keep it current
        self._task = asyncio.get_running_loop().create_task(self.refresh())
        self._task.add_done_callback(_log_failure)
        return self._task

    async def refresh(self, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Scan every root, re-read changed files, feed the context engine, persist."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            return await self._refresh(progress)

    async def _refresh(self, progress: Callable[[str], None] | None) -> dict[str, Any]:
        t0 = time.perf_counter()
        indexes = self._current_indexes()
        if not indexes:
            self.last = {"files": 0, "symbols": 0, "seconds": 0.0, "message": "no workspace folder"}
            return self.last
        loop = asyncio.get_running_loop()
        report = _threadsafe(loop, progress)
        self.dirty.clear()
        results: list[RefreshResult] = []
        for idx in indexes:
            name = os.path.basename(idx.root) or idx.root

            def on_progress(stage: str, n: int, total: int, name: str = name) -> None:
                report(f"{stage} {name}: {n}/{total} files" if total else f"{stage} {name}: {n} files")

            results.append(await asyncio.to_thread(idx.refresh, on_progress, self._stop.is_set))
        symbols = await asyncio.to_thread(build_symbol_index, indexes, self.rt.context.boundary)
        self._swap(symbols)
        settle_long_lived_heap()
        sizes = [await asyncio.to_thread(idx.save) for idx in indexes]
        self.ready = True
        self._built_roots = tuple(sorted(self.indexes))
        stopped = [r.stopped for r in results if r.stopped]
        corrupt = [r.loaded for r in results if r.loaded.startswith("corrupt")]
        self.last = {
            "files": sum(r.files for r in results),
            "symbols": sum(r.symbols for r in results),
            "reread": sum(r.reread for r in results),
            "reparsed": sum(r.reparsed for r in results),
            "removed": sum(r.removed for r in results),
            "errors": sum(r.errors for r in results),
            "index_bytes": sum(sizes),
            "seconds": round(time.perf_counter() - t0, 3),
            "stopped": "; ".join(stopped) or None,
            "rebuilt_corrupt": "; ".join(corrupt) or None,
        }
        log.info(
            "workspace index: %d files, %d symbols, %d re-read, %.2f s%s",
            self.last["files"],
            self.last["symbols"],
            self.last["reread"],
            self.last["seconds"],
            f" ({self.last['stopped']})" if stopped else "",
        )
        return self.last

    def _swap(self, symbols: Any) -> None:
        """Install a freshly built SymbolIndex, then re-add the open documents' own symbols."""
        context = self.rt.context
        context.symbols = symbols
        for doc in self.rt.store.documents():
            try:
                context.index_document(doc)
            except Exception:
                log.exception("re-indexing an open document failed")

    # ------------------------------------------------------------------ updates

    def note_change(self, doc: Any) -> None:
        """A store `on_change` hook: mark the file dirty, nothing more (it runs per keystroke)."""
        if doc.path:
            self.dirty.add(doc.path)

    def note_closed(self, doc: Any) -> None:
        """A store `on_close` hook: the disk copy is the truth again; re-read it."""
        if doc.path:
            self.note_saved(doc.path)

    def note_saved(self, path: str) -> None:
        """Re-read `path` from disk soon (debounced: a save-all touches many files at once)."""
        if not self.rt.config.workspace.index or self.index_for(path) is None:
            return
        self._pending.add(os.path.abspath(path))
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a synchronous caller); the next refresh picks it up
        if self._flush is None:
            self._flush = loop.call_later(SAVE_DEBOUNCE_S, self._start_flush)

    def _start_flush(self) -> None:
        self._flush = None
        task = asyncio.get_running_loop().create_task(self.flush_saved())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_failure)

    async def flush_saved(self) -> int:
        """Re-index the files saved since the last flush; returns how many changed."""
        paths, self._pending = sorted(self._pending), set()
        changed = 0
        for path in paths:
            idx = self.index_for(path)
            language = language_id_for_path(path)
            if idx is None or canonical(language) is None:
                continue
            if await asyncio.to_thread(idx.refresh_path, path, language):
                changed += 1
            if self._is_open(path):
                continue  # the buffer's symbols stay until it closes
            rec = idx.records.get(path)
            if rec is None:
                self.rt.context.symbols.remove_file(path)
            else:
                self.rt.context.symbols.set_symbols(
                    path, rec.symbols, ("disk", rec.sha), rec.file_outline(path), rec.refs, rec.imports
                )
        if changed:
            self._schedule_persist()
        return changed

    def _is_open(self, path: str) -> bool:
        return any(d.path == path for d in self.rt.store.documents())

    def _schedule_persist(self) -> None:
        if self._persist is not None:
            return
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._persist = None
            for idx in list(self.indexes.values()):
                task = loop.create_task(asyncio.to_thread(idx.save))
                self._background.add(task)
                task.add_done_callback(self._background.discard)

        self._persist = loop.call_later(PERSIST_DELAY_S, fire)

    def close(self) -> None:
        """Stop a running scan at its next check and drop the timers."""
        self._stop.set()
        for handle in (self._flush, self._persist):
            if handle is not None:
                handle.cancel()
        self._flush = self._persist = None


def settle_long_lived_heap() -> None:
    """Take what lives as long as the index (or, at `initialized`, the process) out of the
    cyclic collector's way.

    A workspace index is hundreds of thousands of objects that live until the next refresh.
    Left in the oldest generation, every full collection walks them all: ~150 ms on a
    1,800-file index, a stall of whichever keystroke allocates the object that triggers it
    (`context_build.py`: build max 162 ms, 16 ms with the collector off). Frozen, collections
    walk only what was allocated since. The previous freeze is undone and collected first,
    so the index this one replaced (and its cycles) is freed, not kept frozen: one full
    collection per refresh, off the typing path (the index is built in the background)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _threadsafe(
    loop: asyncio.AbstractEventLoop, progress: Callable[[str], None] | None
) -> Callable[[str], None]:
    """Progress from the worker thread, delivered on the loop, at most ten times a second."""
    last = [0.0]

    def report(message: str) -> None:
        if progress is None:
            return
        now = time.monotonic()
        if now - last[0] < 0.1 and not message.startswith("indexed"):
            return
        last[0] = now
        try:
            loop.call_soon_threadsafe(progress, message)
        except RuntimeError:
            pass  # the loop is closing

    return report


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("workspace index update failed: %s", task.exception())
