"""Build or refresh one root's on-disk index: scan, parse in worker processes, write once.

`build` runs in the indexer process (`python -m lsp_assist.workspace.indexer`, started by
`WorkspaceService`; the options come as JSON on stdin, progress and the result go out as
JSON lines on stdout), never in the server: the server's event loop and its GIL stay free
for keystrokes. It

1. takes the root's build lock (a second server on the same root finds it held and only
   reads what this one writes: WAL readers never wait for the writer);
2. scans (`scanner.scan`: vendored and generated trees, `.gitignore`, the ignore file and
   secret globs skipped; symbolic links never followed, so a link loop cannot hang it);
3. compares each file's (mtime, size) with the store, and sends the changed ones, in
   batches, to a pool of worker processes at lower priority (`parse_worker`); a file whose
   bytes the store already holds under another path is copied, not parsed again;
4. writes each batch's rows as it comes back, one transaction per batch (this process is
   the single writer; batches in the order they were sent), so an interrupted build keeps
   what it finished;
5. deletes the rows of files that are gone, when the scan saw everything.

Limits are budgets, not a file count: the bytes of source indexed (`max_total_bytes`) and
the time (`time_budget_s`); past either the build stops cleanly, keeps what it wrote, and
says which budget stopped it (the next build continues from there).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsp_assist.workspace.parse_worker import (
    BoundarySpec,
    Job,
    Outcome,
    index_batch,
    init_worker,
    reindex,
    set_boundary,
    set_known,
)
from lsp_assist.workspace.rows import Copy, FileRow
from lsp_assist.workspace.scanner import FileEntry, ScanLimits, scan
from lsp_assist.workspace.store import Store, build_lock, open_store, remove_database

log = logging.getLogger(__name__)

BATCH = 32  # files per worker task and per transaction
INLINE_BELOW = 48  # fewer changed files than this are parsed here: no pool to start
MAX_INFLIGHT_PER_WORKER = 4  # batches queued per worker: bounded memory in this process


@dataclass
class BuildOptions:
    """What one build needs (JSON-able: it crosses into the indexer process)."""

    root: str
    db: str
    max_file_bytes: int = 1_000_000
    max_total_bytes: int = 4 << 30
    scan_time_budget_s: float = 120.0
    time_budget_s: float = 1800.0
    workers: int = 0  # 0: every core (the workers run niced: `default_workers`)
    exclude: list[str] = field(default_factory=list)  # the boundary's extra secret globs
    respect_gitignore: bool = False
    boundary: bool = True  # apply the data boundary (secret globs, `.lsp-assist-ignore`)
    paths: list[str] | None = None  # only these files (file events); None: the whole root
    reuse_content: bool = True  # copy the stored row of a file with the same bytes (False: parse)


@dataclass
class BuildResult:
    files: int = 0
    symbols: int = 0
    scanned: int = 0
    reread: int = 0
    reparsed: int = 0
    reused: int = 0  # stored as a copy of a file with the same content (not parsed again)
    removed: int = 0
    skipped_binary: int = 0
    skipped_excluded: int = 0
    errors: int = 0
    seconds: float = 0.0
    loaded: str = "none"  # how the store was found: new | ok | rebuilt: why
    stopped: str | None = None
    shared: bool = False  # another server holds the build lock; this one only reads
    workers: int = 0

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        return out


Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class _Run:
    """One build attempt: what each step reads, writes and reports to."""

    opts: BuildOptions
    store: Store
    res: BuildResult
    report: Progress
    stop: Callable[[], bool]
    t0: float  # time.monotonic() when the build started (the time budget counts from it)


def default_workers() -> int:
    """Every core: the workers run at a lower priority (`parse_worker.WORKER_NICE`), so the
    server and the editor take a core whenever they need one; idle cycles go to parsing."""
    return max(1, os.cpu_count() or 1)


def build(
    opts: BuildOptions, progress: Progress | None = None, should_stop: Callable[[], bool] | None = None
) -> BuildResult:
    """Bring the store of `opts.root` up to date (see the module docstring)."""
    t0 = time.monotonic()
    res = BuildResult()
    store, res.loaded = open_store(Path(opts.db), opts.root)
    report = progress or (lambda _s, _n, _t: None)
    report("opened", 0, 0)
    stop = should_stop or (lambda: False)
    with build_lock(Path(opts.db), blocking=False) as lock:
        if lock is None:
            res.shared = True
            res.stopped = "another lsp-assist server is indexing this folder; sharing its index"
        else:
            try:
                with store.bulk():
                    _build_locked(_Run(opts, store, res, report, stop, t0))
            except sqlite3.DatabaseError as exc:  # a damaged page, found while reading it
                log.warning("workspace index %s is damaged (%s); rebuilding it", opts.db, exc)
                store.close()
                remove_database(Path(opts.db))
                store, _how = open_store(Path(opts.db), opts.root)
                report("opened", 0, 0)  # the server reconnects to the new file
                res = BuildResult(loaded=f"rebuilt: damaged ({exc})")
                with store.bulk():
                    _build_locked(_Run(opts, store, res, report, stop, t0))
    res.files = store.file_count()
    res.symbols = store.def_count()
    res.seconds = time.monotonic() - t0
    store.close()
    return res


def _build_locked(run: _Run) -> None:
    opts, store, res = run.opts, run.store, run.res
    entries, complete = _candidates(run)
    known = store.stats()
    key = json.dumps(_boundary_spec(opts))
    if store.meta("boundary") != key:
        # The boundary changed (or this is the first build): every file is asked again.
        known = {p: (0, -1, sha) for p, (_m, _s, sha) in known.items()}
        store.set_meta("boundary", key)
    jobs: list[Job] = []
    budget = opts.max_total_bytes
    for e in entries:
        old = known.get(e.path)
        if old is not None and old[0] == e.mtime_ns and old[1] == e.size and e.mtime_ns != 0:
            continue
        budget -= e.size
        if budget < 0:
            res.stopped = (
                f"stopped at workspace.max_total_bytes={opts.max_total_bytes} bytes of source; "
                "the rest is indexed by the next build once more is ignored or the budget raised"
            )
            complete = False
            break
        jobs.append((e.path, e.language, e.mtime_ns, old[2] if old is not None else ""))
    seen = {e.path for e in entries}
    del entries
    res.reread = len(jobs)
    _parse_and_write(run, jobs)
    if complete and res.stopped is None:
        if opts.paths is not None:
            gone = [p for p in opts.paths if p not in seen and p in known]
        else:
            gone = [p for p in known if p not in seen]
        res.removed = store.delete_paths(gone)
    run.report("indexed", res.reread, res.reread)


def _candidates(run: _Run) -> tuple[list[FileEntry], bool]:
    """The files to consider, and whether the list is complete (deletions are safe). The data
    boundary is asked later, by the workers, of the files that need reading."""
    opts, res, report = run.opts, run.res, run.report
    if opts.paths is not None:
        from lsp_assist.languages import canonical, language_id_for_path

        out: list[FileEntry] = []
        for p in opts.paths:
            language = language_id_for_path(p)
            if canonical(language) is None:
                continue
            try:
                st = os.stat(p, follow_symlinks=False)
            except OSError:
                continue
            if st.st_size <= opts.max_file_bytes and not os.path.islink(p):
                out.append(FileEntry(p, st.st_mtime_ns, st.st_size, language))
        res.scanned = len(out)
        return out, True
    found = scan(
        opts.root,
        limits=ScanLimits(
            max_files=10_000_000,
            max_file_bytes=opts.max_file_bytes,
            time_budget_s=opts.scan_time_budget_s,
            max_entries=100_000_000,
        ),
        progress=lambda n: report("scanning", n, 0),
        should_stop=run.stop,
    )
    res.scanned, res.errors = len(found.files), found.errors
    res.stopped = found.stopped
    return found.files, found.stopped is None


def _boundary_spec(opts: BuildOptions) -> BoundarySpec:
    if not opts.boundary:
        return None
    return (opts.root, tuple(opts.exclude), opts.respect_gitignore)


def _parse_and_write(run: _Run, jobs: list[Job]) -> None:
    opts, store, res, report, stop, t0 = run.opts, run.store, run.res, run.report, run.stop, run.t0
    total = len(jobs)
    batches = [jobs[i : i + BATCH] for i in range(0, total, BATCH)]
    done = 0
    report("indexing", 0, total)
    spec = _boundary_spec(opts)
    db = opts.db if opts.reuse_content else None
    if total < INLINE_BELOW:
        set_boundary(spec)
        set_known(db)
        try:
            for b in batches:
                done += _write(store, index_batch(b, opts.max_file_bytes), res, opts.max_file_bytes)
        finally:
            set_known(None)
        return
    res.workers = opts.workers or default_workers()
    pool = ProcessPoolExecutor(max_workers=res.workers, initializer=init_worker, initargs=(spec, db))
    pending: set[Future[list[Outcome]]] = set()
    sent: dict[Future[list[Outcome]], int] = {}  # future -> its place in the order sent
    order = itertools.count()
    try:
        queue = iter(batches)
        limit = res.workers * MAX_INFLIGHT_PER_WORKER
        while True:
            while len(pending) < limit and res.stopped is None:
                nxt = next(queue, None)
                if nxt is None:
                    break
                fut = pool.submit(index_batch, nxt, opts.max_file_bytes)
                sent[fut] = next(order)
                pending.add(fut)
            if not pending:
                break
            finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            # In the order sent: a copy's source, parsed in an earlier batch, is written first.
            for fut in sorted(finished, key=sent.__getitem__):
                del sent[fut]
                done += _write(store, fut.result(), res, opts.max_file_bytes)
            report("indexing", done, total)
            if res.stopped is None:
                if stop():
                    res.stopped = "cancelled"
                elif time.monotonic() - t0 > opts.time_budget_s:
                    res.stopped = (
                        f"stopped at the index time budget ({opts.time_budget_s:g} s) after {done} files; "
                        "the next build continues"
                    )
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _write(store: Store, outcomes: list[Outcome], res: BuildResult, max_bytes: int) -> int:
    """One transaction for one batch (two when a copy's source vanished); returns how many
    files it accounted for."""
    rows: list[FileRow] = []
    same: list[tuple[str, int, int]] = []
    copies: list[Copy] = []
    drop: list[str] = []
    for kind, value in outcomes:
        if kind == "row":
            assert isinstance(value, FileRow)
            rows.append(value)
        elif kind == "same":
            same.append(value)  # type: ignore[arg-type]
        elif kind == "copy":
            copies.append(value)  # type: ignore[arg-type]
        else:
            drop.append(str(value))
            if kind == "skip":
                res.skipped_binary += 1
            elif kind == "excluded":
                res.skipped_excluded += 1
            else:
                res.errors += 1
    missed, removed = store.write(rows, copies, same, drop)
    res.reused += len(copies) - len(missed)
    res.removed += removed
    if missed:  # the source went away since the worker looked: parse these after all
        _write(store, [reindex((p, lang, mtime, ""), max_bytes) for p, mtime, _n, _sha, lang in missed],
               res, max_bytes)  # fmt: skip
    res.reparsed += len(rows)
    return len(outcomes)


def refresh_paths(store: Store, paths: list[str], excluded: Callable[[str], str | None] | None,
                  max_bytes: int) -> int:  # fmt: skip
    """Re-read a few files (a save, a file event) into `store`, in the calling thread; how
    many changed (re-parsed, removed). Excluded, vanished or unsupported files are removed."""
    from lsp_assist.languages import canonical, language_id_for_path

    res = BuildResult()
    jobs: list[Job] = []
    gone: list[str] = []
    for p in paths:
        language = language_id_for_path(p)
        try:
            st = os.stat(p, follow_symlinks=False)
        except OSError:
            gone.append(p)
            continue
        if canonical(language) is None or (excluded is not None and excluded(p) is not None):
            gone.append(p)
            continue
        if st.st_size > max_bytes or os.path.islink(p):
            gone.append(p)
            continue
        info = store.file_info(p)
        jobs.append((p, language, st.st_mtime_ns, info[1] if info is not None else ""))
    removed = store.delete_paths(gone) if gone else 0
    _write(store, index_batch(jobs, max_bytes), res, max_bytes)
    return res.reparsed + res.reused + res.removed + removed


# ---------------------------------------------------------------------- the indexer process


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class _JsonLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        _emit({"log": record.levelname, "message": record.getMessage()})


def main() -> int:
    """The indexer process: options on stdin, JSON lines out; stops when its parent dies."""
    logging.basicConfig(level=logging.INFO, handlers=[_JsonLog()])
    try:
        os.nice(5)
    except OSError:
        pass
    opts = BuildOptions(**json.loads(sys.stdin.readline()))
    parent = os.getppid()
    last = [0.0]

    def progress(stage: str, n: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.2 or stage == "indexed":
            last[0] = now
            _emit({"stage": stage, "n": n, "total": total})

    res = build(opts, progress, should_stop=lambda: os.getppid() != parent)
    _emit({"result": res.summary()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
