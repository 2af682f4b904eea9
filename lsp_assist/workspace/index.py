"""The persisted workspace index: tree-sitter definitions of every source file of one root.

Per file: (mtime_ns, size, content hash, language, symbols, outline, the names it
spells). A refresh re-reads only the files whose mtime or size changed, and re-parses
only those whose content hash changed; the outline (`structure/outline.py`, what
cross-file context sends of a file that is not open) is computed from the same parse, so
a request never parses a closed file. The names a file spells feed the package reference
counts (`SymbolIndex.package_uses`): which of a package's names its files need.

On disk: `<cache>/index/<hash of root>.json`, written to a temporary file and moved into
place with `os.replace` (a reader sees the old or the new file, never half of one). The
file carries a format version, the root, and a SHA-256 of its payload: a file that fails
any of these (truncated, edited, written by another version, written in place by a
concurrent writer) is reported and rebuilt from the workspace, never served.

Thread model: `refresh` runs in a worker thread and touches only this object; the caller
moves the result into the live `SymbolIndex` (see `build_symbol_index`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_assist.structure.imports import HEAD_ROWS, index_imports
from lsp_assist.structure.outline import (
    FileOutline,
    OutlineEntry,
    entries_from_rows,
    entries_to_rows,
    outline_of,
)
from lsp_assist.structure.symbols import (
    Symbol,
    SymbolIndex,
    admit_all,
    extract_symbols,
    parse_text,
    reference_names,
)
from lsp_assist.workspace.scanner import FileEntry, ScanLimits, scan

log = logging.getLogger(__name__)

# 2: outlines per file; 3: no attribute a member of its class shadows; 4: TypeScript's
# constructor parameter properties, JavaScript's members assigned at top level; 5: `.h` files
# read as C++, C/C++ anonymous namespaces and enums looked through, forward declarations skipped;
# 6: C/C++ extern "C" blocks and #elif branches outlined
# 7: the names each file spells (the package reference counts)
# 8: C/C++ files' includes (the headers an included header includes)
# 9: outline entries' declaration groups (Go's `const ( ... )` blocks)
# 10: C/C++ function-pointer members and typedefs named, include guards left out
# 11: C++-read declarations of a macro's type (`typedef Array(T) Name;`) named
FORMAT_VERSION = 11
MAX_SYMBOLS_PER_FILE = 2000  # bounded memory: a generated file does not flood the index
INDEX_SUBDIR = "index"


@dataclass
class FileRecord:
    mtime_ns: int
    size: int
    sha: str
    language: str
    symbols: list[Symbol]
    outline: tuple[OutlineEntry, ...] = ()
    refs: frozenset[str] = frozenset()  # the names the file spells (`reference_names`)
    imports: tuple[str, ...] = ()  # its import statements (`structure.imports.index_imports`)

    def file_outline(self, path: str) -> FileOutline:
        return FileOutline(path, self.language, self.outline, ("disk", self.sha))


@dataclass
class RefreshResult:
    files: int = 0
    reread: int = 0  # files whose bytes were read (new or mtime/size changed)
    reparsed: int = 0  # files whose content hash changed (tree-sitter ran)
    removed: int = 0
    skipped_binary: int = 0
    symbols: int = 0
    seconds: float = 0.0
    loaded: str = "none"  # how the persisted index was found: none | ok | corrupt: reason
    stopped: str | None = None  # why the scan stopped early, for the user
    errors: int = 0
    changed_paths: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "changed_paths"}
        out["seconds"] = round(self.seconds, 3)
        return out


def index_path(cache_dir: Path, root: str) -> Path:
    digest = hashlib.sha256(os.path.abspath(root).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return cache_dir / INDEX_SUBDIR / f"{digest}.json"


def _sym_row(s: Symbol) -> list[Any]:
    return [s.name, s.kind, s.start_row, s.end_row, s.sig_start_row, s.sig_end_row, s.signature, s.container]


def _sym_from_row(path: str, row: list[Any]) -> Symbol:
    name, kind, a, b, c, d, sig, container = row
    return Symbol(
        name=str(name),
        kind=str(kind),
        path=path,
        start_row=int(a),
        end_row=int(b),
        sig_start_row=int(c),
        sig_end_row=int(d),
        signature=str(sig),
        container=None if container is None else str(container),
    )


def _checksum(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class WorkspaceIndex:
    """The index of one workspace root, persisted under the cache directory."""

    def __init__(
        self,
        root: str,
        cache_dir: Path | None,
        *,
        excluded: Callable[[str], str | None] | None = None,
        max_files: int = 20_000,
        max_file_bytes: int = 1_000_000,
        time_budget_s: float = 60.0,
    ) -> None:
        self.root = os.path.abspath(root)
        self.file = index_path(cache_dir, self.root) if cache_dir is not None else None
        self.excluded = excluded
        self.max_files = max_files
        self.max_file_bytes = max_file_bytes
        self.time_budget_s = time_budget_s
        self.records: dict[str, FileRecord] = {}
        self.loaded = False

    # ------------------------------------------------------------------ persistence

    def load(self) -> str:
        """Read the persisted index; "ok", "none" or "corrupt: reason" (then starts empty)."""
        self.loaded = True
        if self.file is None:
            return "none"
        try:
            raw = self.file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return "none"
        except (OSError, UnicodeDecodeError) as exc:
            return self._corrupt(f"unreadable ({type(exc).__name__})")
        try:
            doc = json.loads(raw)
            if not isinstance(doc, dict):
                return self._corrupt("not an object")
            old = doc.get("version")
            if isinstance(old, int) and 0 < old < FORMAT_VERSION:
                # Written by an older lsp-assist (older outlines): rebuilt, and not a fault.
                log.info(
                    "workspace index %s has format %d; rebuilding it as %d", self.file, old, FORMAT_VERSION
                )
                self.records = {}
                return "none"
            if old != FORMAT_VERSION:
                return self._corrupt(f"format version {doc.get('version')!r}, expected {FORMAT_VERSION}")
            payload = doc.get("payload")
            if not isinstance(payload, str) or _checksum(payload) != doc.get("checksum"):
                return self._corrupt("checksum mismatch")
            data = json.loads(payload)
            if data.get("root") != self.root:
                return self._corrupt("written for another root")
            records: dict[str, FileRecord] = {}
            for path, (mtime, size, sha, language, rows, outline, refs, imports) in data["files"].items():
                records[str(path)] = FileRecord(
                    int(mtime),
                    int(size),
                    str(sha),
                    str(language),
                    [_sym_from_row(path, r) for r in rows],
                    entries_from_rows(outline),
                    frozenset(sys.intern(str(n)) for n in refs),
                    tuple(str(x) for x in imports),
                )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return self._corrupt(f"malformed ({type(exc).__name__})")
        self.records = records
        return "ok"

    def _corrupt(self, reason: str) -> str:
        log.warning("workspace index %s is corrupt (%s); rebuilding it", self.file, reason)
        self.records = {}
        return f"corrupt: {reason}"

    def save(self) -> int:
        """Write the index atomically; returns its size in bytes (0 when not persisted)."""
        if self.file is None:
            return 0
        files = {
            path: [
                r.mtime_ns,
                r.size,
                r.sha,
                r.language,
                [_sym_row(s) for s in r.symbols],
                entries_to_rows(r.outline),
                sorted(r.refs),
                list(r.imports),
            ]
            for path, r in sorted(self.records.items())
        }
        payload = json.dumps({"root": self.root, "files": files}, separators=(",", ":"), ensure_ascii=False)
        doc = json.dumps(
            {"version": FORMAT_VERSION, "checksum": _checksum(payload), "payload": payload},
            ensure_ascii=False,
        )
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=self.file.name + ".", suffix=".tmp", dir=self.file.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
                    f.write(doc)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            log.warning("workspace index: cannot write %s (%s)", self.file, exc.strerror or exc)
            return 0
        return len(doc.encode("utf-8", "surrogatepass"))

    # ------------------------------------------------------------------ refresh

    def refresh(
        self,
        progress: Callable[[str, int, int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> RefreshResult:
        """Scan the root and bring every record up to date. Blocking: run it in a thread."""
        t0 = time.perf_counter()
        res = RefreshResult()
        if not self.loaded:
            res.loaded = self.load()
        found = scan(
            self.root,
            excluded=self.excluded,
            limits=ScanLimits(
                max_files=self.max_files, max_file_bytes=self.max_file_bytes, time_budget_s=self.time_budget_s
            ),
            progress=(lambda n: progress("scanning", n, 0)) if progress is not None else None,
            should_stop=should_stop,
        )
        res.stopped, res.errors = found.stopped, found.errors
        total = len(found.files)
        seen: set[str] = set()
        for i, entry in enumerate(found.files):
            if should_stop is not None and should_stop():
                res.stopped = "cancelled"
                break
            if progress is not None and (i & 63) == 0:
                progress("indexing", i, total)
            seen.add(entry.path)
            self._refresh_file(entry, res)
            # Hand the GIL to the event loop between files: a parse holds it for its whole
            # duration, and completions must not wait behind a 2,000-file build.
            time.sleep(0)
        if found.stopped is None and res.stopped is None:
            # Only a complete scan may drop files: a partial one did not look everywhere.
            for path in [p for p in self.records if p not in seen]:
                del self.records[path]
                res.removed += 1
                res.changed_paths.append(path)
        res.files = len(self.records)
        res.symbols = sum(len(r.symbols) for r in self.records.values())
        res.seconds = time.perf_counter() - t0
        if progress is not None:
            progress("indexed", total, total)
        return res

    def refresh_path(self, path: str, language: str) -> bool:
        """Re-index one file (after a save); True when its symbols changed."""
        path = os.path.abspath(path)
        if self.excluded is not None and self.excluded(path) is not None:
            return self.records.pop(path, None) is not None
        try:
            st = os.stat(path)
        except OSError:
            return self.records.pop(path, None) is not None
        res = RefreshResult()
        self._refresh_file(FileEntry(path, st.st_mtime_ns, st.st_size, language), res)
        return bool(res.changed_paths)

    def _refresh_file(self, entry: FileEntry, res: RefreshResult) -> None:
        old = self.records.get(entry.path)
        if old is not None and old.mtime_ns == entry.mtime_ns and old.size == entry.size:
            return
        res.reread += 1
        try:
            with open(entry.path, "rb") as f:
                data = f.read(self.max_file_bytes + 1)
            after = os.stat(entry.path)
        except OSError as exc:  # permission denied, vanished since the scan
            res.errors += 1
            log.debug("workspace index: cannot read a file (%s)", type(exc).__name__)
            if self.records.pop(entry.path, None) is not None:
                res.changed_paths.append(entry.path)
            return
        if len(data) > self.max_file_bytes or b"\x00" in data[:8192]:
            res.skipped_binary += 1
            if self.records.pop(entry.path, None) is not None:
                res.changed_paths.append(entry.path)
            return
        # A file written while we read it: index what we read, but record mtime 0 so the
        # next refresh reads it again instead of trusting a stat that does not match.
        stable = after.st_mtime_ns == entry.mtime_ns and after.st_size == len(data)
        sha = hashlib.blake2b(data, digest_size=16).hexdigest()
        mtime = entry.mtime_ns if stable else 0
        if old is not None and old.sha == sha:
            self.records[entry.path] = FileRecord(
                mtime, len(data), sha, old.language, old.symbols, old.outline, old.refs, old.imports
            )
            return
        res.reparsed += 1
        text = data.decode("utf-8", "replace")
        parsed = parse_text(text, entry.language)
        symbols = extract_symbols(parsed[0], parsed[1], entry.language, entry.path) if parsed else []
        outline = outline_of(parsed[0], parsed[1], entry.language, entry.path, None).entries if parsed else ()
        self.records[entry.path] = FileRecord(
            mtime,
            len(data),
            sha,
            entry.language,
            symbols[:MAX_SYMBOLS_PER_FILE],
            outline,
            reference_names(text),
            index_imports(text.split("\n", HEAD_ROWS)[:HEAD_ROWS], entry.language),
        )
        res.changed_paths.append(entry.path)

    # ------------------------------------------------------------------ reading

    def symbol_count(self) -> int:
        return sum(len(r.symbols) for r in self.records.values())

    def recent_paths(self, limit: int) -> list[str]:
        """Paths by modification time, newest first."""
        return [p for p, _ in sorted(self.records.items(), key=lambda kv: -kv[1].mtime_ns)[:limit]]


def build_symbol_index(
    indexes: Iterable[WorkspaceIndex], admits: Callable[[str], bool] = admit_all
) -> SymbolIndex:
    """A fresh SymbolIndex holding every record the data boundary `admits` (built off the
    event loop, then swapped in)."""
    out = SymbolIndex()
    out.admits = admits
    for idx in indexes:
        for path, rec in idx.records.items():
            out.set_symbols(
                path, rec.symbols, ("disk", rec.sha), rec.file_outline(path), rec.refs, rec.imports
            )
    return out
