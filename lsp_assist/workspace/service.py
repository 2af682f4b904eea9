"""The workspace index inside a running server: background build, updates, cross-file feed.

`WorkspaceService` keeps one on-disk store per workspace root (`store.py`) and installs a
`StoredSymbolIndex` in the context engine once: open documents live in its memory layer,
everything else is read from the stores on demand. `refresh()` runs the build in the
indexer process (`runner.py` -> `indexer.py`: scan and tree-sitter parsing in worker
processes, one writer), so the server's event loop and its GIL stay free for keystrokes;
it only reads the progress lines. Refreshes are serialized by a lock, so the background
build and a `warmCache` command never race. While a build writes, and whenever another
process (a second server on the same root) does, the index notices the database's
`data_version` change (polled once a second) and drops its caches.

Edits are cheap: `note_change` only marks the file dirty (the context engine's own hook
already re-indexes open documents). A save, a close or a file event
(`workspace/didChangeWatchedFiles`) re-reads those files from disk, debounced: a few in a
worker thread, many (a branch switch) in the indexer process.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from lsp_assist.config.schema import Config
from lsp_assist.context.builder import ContextEngine
from lsp_assist.documents.store import DocumentStore
from lsp_assist.workspace.indexer import BuildOptions, refresh_paths
from lsp_assist.workspace.runner import run_build
from lsp_assist.workspace.store import Store, store_path
from lsp_assist.workspace.stored_symbols import StoredSymbolIndex

log = logging.getLogger(__name__)

SAVE_DEBOUNCE_S = 0.5
POLL_S = 1.0  # how often the stores' data_version is checked (another writer's commits)
# While this server's own build writes: each change drops the name caches, and the next
# request pays for SQLite lookups (20-30 ms cold, 2 ms warm), so less often.
POLL_BUILDING_S = 5.0
INLINE_PATHS = 16  # more changed files than this are re-read by the indexer process


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
        self.stores: dict[str, Store] = {}
        self.last: dict[str, Any] = {}
        self.dirty: set[str] = set()
        self._lock: asyncio.Lock | None = None
        self._task: asyncio.Task[dict[str, Any]] | None = None
        self._closed = False  # after `close` (shutdown): no new build starts
        self._pending: set[str] = set()
        self._flush: asyncio.TimerHandle | None = None
        self._poll: asyncio.TimerHandle | None = None
        self._versions: dict[str, int] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.ready = False  # True once a refresh has fed the context engine
        self._built_roots: tuple[str, ...] = ()
        # The background build's progress lines, then None when it ends (`$/progress`).
        self.on_progress: Callable[[str | None], None] | None = None

    def _roots(self) -> tuple[str, ...]:
        return tuple(sorted(os.path.abspath(str(r)) for r in self.rt.workspace_roots))

    # ------------------------------------------------------------------ configuration

    def _excluded(self, path: str) -> str | None:
        gov = self.rt.governance
        return None if gov is None else gov.excluded(path)

    def db_path(self, root: str) -> Path:
        """Where `root`'s store lives: the cache directory, or a private temporary one."""
        if self.rt.config.cache.enabled:
            return store_path(self.rt.cache_dir, root)
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="lsp-assist-index-")
        return store_path(Path(self._tmp.name), root)

    def options(self, root: str, paths: list[str] | None = None) -> BuildOptions:
        cfg = self.rt.config.workspace
        # The indexer judges the folder's files by its own rules (governance/folders.py).
        boundary = getattr(self.rt.governance, "boundary", None)
        settings = boundary.rules_for(root) if boundary is not None else None
        return BuildOptions(
            root=root,
            db=str(self.db_path(root)),
            max_file_bytes=max(1, cfg.max_file_bytes),
            max_total_bytes=cfg.max_total_bytes,
            scan_time_budget_s=cfg.scan_time_budget_s,
            time_budget_s=cfg.index_time_budget_s,
            workers=cfg.index_workers,
            exclude=list(getattr(settings, "exclude", ()) or ()),
            respect_gitignore=bool(getattr(settings, "respect_gitignore", False)),
            boundary=self.rt.governance is not None,
            paths=paths,
        )

    def root_for(self, path: str) -> str | None:
        ap = os.path.abspath(path)
        best: str | None = None
        for root in self._roots():
            if (ap == root or ap.startswith(root.rstrip(os.sep) + os.sep)) and (
                best is None or len(root) > len(best)
            ):
                best = root
        return best

    def index(self) -> StoredSymbolIndex:
        """The context engine's index, made a `StoredSymbolIndex` over the stores once."""
        current = self.rt.context.symbols
        if isinstance(current, StoredSymbolIndex):
            return current
        fresh = StoredSymbolIndex(list(self.stores.values()))
        self.rt.context.symbols = fresh  # keeps the boundary (`OpenFiles.symbols`)
        for doc in self.rt.store.documents():
            try:
                self.rt.context.index_document(doc)
            except Exception:
                log.exception("re-indexing an open document failed")
        settle_long_lived_heap()
        return fresh

    def _attach(self, root: str) -> None:
        """Open (or reopen: the indexer may have rebuilt the file) `root`'s store."""
        db = self.db_path(root)
        old = self.stores.get(root)
        if old is not None:
            old.reopen()
        elif db.exists():
            self.stores[root] = Store(db, root)
        self.index().set_stores([self.stores[r] for r in sorted(self.stores)])

    # ------------------------------------------------------------------ building

    def roots_changed(self) -> None:
        """Folders came or went: a removed one's index leaves now, new ones build in the background."""
        roots = self._roots()
        for root in [r for r in self.stores if r not in roots]:
            self.stores.pop(root).close()
        if isinstance(self.rt.context.symbols, StoredSymbolIndex):
            self.index().set_stores([self.stores[r] for r in sorted(self.stores)])
        running = self._task  # a build of the old folders: the new ones come after it
        if running is not None and not running.done():
            running.add_done_callback(lambda _t: self.start_background())
        else:
            self.start_background()

    def start_background(self) -> asyncio.Task[dict[str, Any]] | None:
        """Build the index in the background (idempotent while one build runs)."""
        if self._closed or not self.rt.config.workspace.index or not self.rt.workspace_roots:
            return None
        if self._task is not None and not self._task.done():
            return self._task
        if self.ready and self._built_roots == self._roots():
            return None  # built already; saves, closes and file events keep it current
        self._task = asyncio.get_running_loop().create_task(self.refresh(self._background_progress))
        self._task.add_done_callback(_log_failure)
        self._task.add_done_callback(lambda _t: self._background_progress(None))
        return self._task

    def _background_progress(self, message: str | None) -> None:
        listener = self.on_progress
        if listener is not None:
            listener(message)

    async def refresh(self, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Bring every root's store up to date and feed the context engine from it."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            return await self._refresh(progress)

    async def _refresh(self, progress: Callable[[str], None] | None) -> dict[str, Any]:
        t0 = time.perf_counter()
        roots = self._roots()
        if not roots:
            self.last = {"files": 0, "symbols": 0, "seconds": 0.0, "message": "no workspace folder"}
            return self.last
        self.stores = {r: s for r, s in self.stores.items() if r in roots}
        for root in roots:
            if root not in self.stores and self.db_path(root).exists():
                self.stores[root] = Store(self.db_path(root), root)
        self.index().set_stores([self.stores[r] for r in sorted(self.stores)])
        self._start_polling()
        self.dirty.clear()
        report = _throttled(progress)
        results: list[dict[str, Any]] = []
        for root in roots:
            name = os.path.basename(root) or root

            def on_progress(stage: str, n: int, total: int, root: str = root, name: str = name) -> None:
                if stage == "opened":
                    self._attach(root)
                    return
                report(f"{stage} {name}: {n}/{total} files" if total else f"{stage} {name}: {n} files")

            results.append(await run_build(self.options(root), on_progress))
            self._attach(root)
        self.index().store_updated(())
        self.ready = True
        self._built_roots = roots
        self.last = _summary(
            results, [s.size_bytes() for s in self.stores.values()], time.perf_counter() - t0
        )
        log.info(
            "workspace index: %d files, %d symbols, %d re-read, %.2f s%s",
            self.last["files"],
            self.last["symbols"],
            self.last["reread"],
            self.last["seconds"],
            f" ({self.last['stopped']})" if self.last["stopped"] else "",
        )
        return self.last

    # ------------------------------------------------------------------ other writers

    def _start_polling(self) -> None:
        if self._poll is None:
            building = self._lock is not None and self._lock.locked()
            delay = POLL_BUILDING_S if building else POLL_S
            self._poll = asyncio.get_running_loop().call_later(delay, self._check_versions)

    def _check_versions(self) -> None:
        """Another connection committed (the indexer, a second server): drop the caches."""
        self._poll = None
        changed = False
        for root, store in list(self.stores.items()):
            try:
                v = store.data_version()
            except Exception as exc:  # a database removed under us: the next build rebuilds it
                log.debug("workspace store unreadable: %s", exc)
                continue
            if self._versions.get(root) != v:
                changed = changed or root in self._versions
                self._versions[root] = v
        if changed:
            self.index().store_updated(())
        self._start_polling()

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
        if not self.rt.config.workspace.index or self.root_for(path) is None:
            return
        self._pending.add(os.path.abspath(path))
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a synchronous caller); the next refresh picks it up
        if self._flush is None:
            self._flush = loop.call_later(SAVE_DEBOUNCE_S, self._start_flush)

    def note_file_events(self, paths: Sequence[str]) -> None:
        """`workspace/didChangeWatchedFiles`: created, changed or deleted files, re-read soon."""
        for p in paths:
            self.note_saved(p)

    def _start_flush(self) -> None:
        self._flush = None
        task = asyncio.get_running_loop().create_task(self.flush_saved())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_failure)

    async def flush_saved(self) -> int:
        """Re-index the files saved or changed since the last flush; how many changed."""
        paths, self._pending = sorted(self._pending), set()
        by_root: dict[str, list[str]] = {}
        for p in paths:
            root = self.root_for(p)
            if root is not None and root in self.stores:
                by_root.setdefault(root, []).append(p)
        changed = 0
        max_bytes = max(1, self.rt.config.workspace.max_file_bytes)
        for root, group in by_root.items():
            if len(group) > INLINE_PATHS:
                res = await run_build(self.options(root, group), lambda _s, _n, _t: None)
                changed += (
                    int(res.get("reparsed", 0)) + int(res.get("reused", 0)) + int(res.get("removed", 0))
                )
            else:
                changed += await asyncio.to_thread(
                    refresh_paths, self.stores[root], group, self._excluded, max_bytes
                )
        if paths:
            index = self.index()
            open_paths = {d.path for d in self.rt.store.documents()}
            for p in paths:
                if p not in open_paths:
                    # A closed buffer's symbols stood in for the file until now: the disk wins.
                    index.forget_memory(p)
            index.store_updated(paths)
        return changed

    # ------------------------------------------------------------------ reading

    def recent_paths(self, limit: int) -> list[str]:
        """Indexed paths by modification time, newest first (all roots)."""
        out: list[str] = []
        for store in self.stores.values():
            out.extend(store.recent_paths(limit))
        return out[:limit]

    def has_path(self, path: str) -> bool:
        return any(s.has_path(path) for s in self.stores.values())

    def language_of(self, path: str) -> str | None:
        for store in self.stores.values():
            info = store.file_info(path)
            if info is not None:
                return info[0]
        return None

    def close(self) -> None:
        """Stop polling and drop the timers (a running build is cancelled with its task);
        no build starts after it (a `shutdown` can come before the warm-up starts one)."""
        self._closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
        for handle in (self._flush, self._poll):
            if handle is not None:
                handle.cancel()
        self._flush = self._poll = None
        for store in self.stores.values():
            store.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _summary(results: list[dict[str, Any]], sizes: list[int], seconds: float) -> dict[str, Any]:
    def total(key: str) -> int:
        return sum(int(r.get(key, 0) or 0) for r in results)

    stopped = [str(r["stopped"]) for r in results if r.get("stopped")]
    stopped += [f"indexer failed: {r['error']}" for r in results if r.get("error")]
    rebuilt = [str(r["loaded"]) for r in results if str(r.get("loaded", "")).startswith("rebuilt")]
    return {
        "files": total("files"),
        "symbols": total("symbols"),
        "reread": total("reread"),
        "reparsed": total("reparsed"),
        "reused": total("reused"),
        "removed": total("removed"),
        "errors": total("errors"),
        "index_bytes": sum(sizes),
        "seconds": round(seconds, 3),
        "stopped": "; ".join(stopped) or None,
        "rebuilt_corrupt": "; ".join(rebuilt) or None,
        "shared": any(bool(r.get("shared")) for r in results),
    }


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


def _throttled(progress: Callable[[str], None] | None) -> Callable[[str], None]:
    """Progress at most ten times a second (the last "indexed" line always)."""
    last = [0.0]

    def report(message: str) -> None:
        if progress is None:
            return
        now = time.monotonic()
        if now - last[0] < 0.1 and not message.startswith("indexed"):
            return
        last[0] = now
        progress(message)

    return report


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("workspace index update failed: %s", task.exception())
