"""What a worker process does with one file: read, hash, parse, and pack it for the store.

Runs in the indexer's worker processes (`indexer.py`), never on the server's event loop:
a tree-sitter parse holds the GIL for its whole duration. The result is plain picklable
data already in its stored form (`store.FileRow`), so the single writer only inserts it.
The rules are those of the in-memory index (`index.py`): files over `max_bytes` or with a
NUL byte in their first 8 KiB are skipped, at most `MAX_SYMBOLS_PER_FILE` definitions are
kept, and a file written while it was read is stored with mtime 0 (read again next time).

A file whose bytes the store already holds under another path (a renamed folder, a copied or
vendored package) is not parsed again: the worker answers "copy" and the writer copies the
stored row (`set_known`, `store.Store.copy_files`): the row of a file depends only on its
bytes and language, never on its path.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

from lsp_assist.structure.imports import HEAD_ROWS, index_imports
from lsp_assist.structure.outline import entries_to_rows, outline_of
from lsp_assist.structure.symbols import MAX_REFS_PER_FILE, extract_symbols, parse_text
from lsp_assist.workspace.index import MAX_SYMBOLS_PER_FILE
from lsp_assist.workspace.rows import Copy, DefRow, FileRow
from lsp_assist.workspace.store import pack_ascii_names, pack_json, pack_names

WORKER_NICE = 10  # below the server and the editor: indexing takes only idle cycles
#: The cyclic collector's thresholds in a worker (`tune_gc`). A parse allocates thousands of
#: short-lived objects (nodes, entries, tuples) that reference counting frees; with Python's
#: default (700, 10, 10) the collector ran every few hundred of them, ~18% of a worker's CPU
#: on the 19k tree (docs/workspace-index.md). Cycles are still collected, just less often.
WORKER_GC_THRESHOLDS = (20_000, 20, 20)

#: A job: (path, language, mtime_ns at scan, the stored sha or "" when new).
Job = tuple[str, str, int, str]
#: What came of it: ("row", FileRow) | ("same", (path, mtime, size)) | ("copy", Copy)
#: | ("skip" | "excluded" | "error", path)
Outcome = tuple[str, object]


#: What the data boundary needs to be rebuilt in a worker: (root, exclude globs, respect_gitignore),
#: or None for no boundary.
BoundarySpec = tuple[str, tuple[str, ...], bool] | None

_excluded: Callable[[str], str | None] | None = None


def set_boundary(spec: BoundarySpec) -> None:
    """Install the data boundary this process checks each file against before reading it."""
    global _excluded
    if spec is None:
        _excluded = None
        return
    from lsp_assist.governance.boundaries import DataBoundary

    root, exclude, respect_gitignore = spec
    # memo_dirs: this process lives for one build; a folder's answers serve all its files.
    boundary = DataBoundary([root], exclude=exclude, respect_gitignore=respect_gitignore, memo_dirs=True)
    _excluded = boundary.excluded


class _KnownContent:
    """Whether the store already holds a file with this content hash and language: one
    indexed read (`contents(sha, language)`) on this process's own read-only connection. Any error
    (the database replaced, locked past its timeout) answers False: the file is parsed."""

    def __init__(self, db: str) -> None:
        self._uri = Path(db).resolve().as_uri() + "?mode=ro"
        self._con: sqlite3.Connection | None = None
        self._broken = False

    def __call__(self, sha: str, language: str) -> bool:
        if self._broken:
            return False
        try:
            if self._con is None:
                self._con = sqlite3.connect(self._uri, uri=True, timeout=1.0)
            row = self._con.execute(
                "SELECT 1 FROM contents WHERE sha=? AND language=? LIMIT 1", (sha, language)
            ).fetchone()
        except sqlite3.Error:
            self._broken = True
            return False
        return row is not None


_known: Callable[[str, str], bool] | None = None
#: (sha, language) of what this process parsed in this build: its rows reach the store before
#: a later copy of them does (the writer writes rows before copies, batches in the order sent),
#: so a repeat in the same batch, or one not yet committed, is copied too. Bounded.
_parsed_here: set[tuple[str, str]] = set()
PARSED_HERE_MAX = 20_000  # ~5 MB at most per worker


def set_known(db: str | None) -> None:
    """Let this process answer "copy" for content the store at `db` already holds (None: never)."""
    global _known
    _known = None if db is None else _KnownContent(db)
    _parsed_here.clear()


def tune_gc() -> None:
    """Collect cycles less often in this process, and never walk what was imported before
    (`gc.freeze`): a worker's long-lived objects are its modules and grammars."""
    gc.freeze()
    gc.set_threshold(*WORKER_GC_THRESHOLDS)


def init_worker(spec: BoundarySpec = None, db: str | None = None) -> None:
    """Pool initializer: the boundary, the store whose content is copied instead of parsed
    again, fewer collections, and a lower priority (best effort; Unix only)."""
    set_boundary(spec)
    set_known(db)
    tune_gc()
    try:
        os.nice(WORKER_NICE)
    except (AttributeError, OSError):
        pass


def index_one(job: Job, max_bytes: int) -> Outcome:
    path, language, mtime_ns, old_sha = job
    # The boundary is asked here, in the worker, for new and changed files only: a secret
    # file is never read, and the check (a realpath and an ignore-file stat per folder
    # level) runs on every core instead of in the scan.
    if _excluded is not None and _excluded(path) is not None:
        return ("excluded", path)
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
        after = os.stat(path)
    except OSError:  # permission denied, vanished since the scan
        return ("error", path)
    if len(data) > max_bytes or b"\x00" in data[:8192]:
        return ("skip", path)
    stable = after.st_mtime_ns == mtime_ns and after.st_size == len(data)
    mtime = mtime_ns if stable else 0
    sha = hashlib.blake2b(data, digest_size=16).hexdigest()
    if sha == old_sha:
        return ("same", (path, mtime, len(data)))
    if _known is not None:
        if (sha, language) in _parsed_here or _known(sha, language):
            copy: Copy = (path, mtime, len(data), sha, language)
            return ("copy", copy)
        if len(_parsed_here) < PARSED_HERE_MAX:
            _parsed_here.add((sha, language))
    return ("row", row_of(path, language, mtime, data, sha))


def reindex(job: Job, max_bytes: int) -> Outcome:
    """`index_one` that always parses: for a "copy" whose stored source vanished before the
    writer copied it (deleted or replaced meanwhile)."""
    global _known
    saved, _known = _known, None
    try:
        return index_one(job, max_bytes)
    finally:
        _known = saved


def row_of(path: str, language: str, mtime_ns: int, data: bytes, sha: str) -> FileRow:
    """Parse `data` (the bytes of `path`) into its stored row."""
    text = data.decode("utf-8", "replace")
    parsed = parse_text(text, language)
    symbols = extract_symbols(parsed[0], parsed[1], language, path) if parsed else []
    outline = outline_of(parsed[0], parsed[1], language, path, None).entries if parsed else ()
    defs: tuple[DefRow, ...] = tuple(
        (s.name, s.kind, s.start_row, s.end_row, s.sig_start_row, s.sig_end_row, s.signature, s.container)
        for s in symbols[:MAX_SYMBOLS_PER_FILE]
    )
    imports = index_imports(text.split("\n", HEAD_ROWS)[:HEAD_ROWS], language)
    return FileRow(
        path=path,
        mtime_ns=mtime_ns,
        size=len(data),
        sha=sha,
        language=language,
        outline=pack_json(entries_to_rows(outline)),
        refs=packed_names(data, text),
        imports=json.dumps(list(imports), ensure_ascii=False),
        defs=defs,
    )


_NAME = re.compile(r"[A-Za-z_$][\w$]{2,}")


def names_spelled(text: str) -> list[str]:
    """`symbols.reference_names(text)` (the same names), at C speed: no per-match Python
    and no interning (the names are packed into a string for the store)."""
    return list(dict.fromkeys(_NAME.findall(text)))[:MAX_REFS_PER_FILE]


#: Bytes that can be part of a name (`_NAME` on ASCII text): every other byte becomes a space.
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$")
_TO_SPACE = bytes(c if c in _NAME_BYTES else 0x20 for c in range(256))
_DIGITS = b"0123456789"


def packed_names(data: bytes, text: str) -> bytes:
    """`pack_names(names_spelled(text))` (the same blob), and for ASCII files (nearly all)
    without the regex: each run of name bytes holds one name, the run without its leading
    digits, when that is longer than two. Both steps run in C; ~15% of this function's time
    was the regex engine stepping through every byte."""
    if not data.isascii():
        return pack_names(names_spelled(text))
    runs = dict.fromkeys(data.translate(_TO_SPACE).split())  # first-occurrence order
    names = dict.fromkeys(
        name for run in runs if len(name := run.lstrip(_DIGITS) if run[0] < 0x3A else run) > 2
    )
    return pack_ascii_names(list(names)[:MAX_REFS_PER_FILE])


def index_batch(jobs: list[Job], max_bytes: int) -> list[Outcome]:
    """A batch per task: one pickle round trip for many small files."""
    return [index_one(j, max_bytes) for j in jobs]
