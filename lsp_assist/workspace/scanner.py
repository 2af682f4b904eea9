"""Walk a workspace root and list the source files worth indexing.

`scan` uses `os.scandir` with an explicit stack (no recursion), never follows symbolic
links (a directory link cannot loop, a file link cannot smuggle `~/.ssh/id_rsa` in under
an innocent name), and remembers the (device, inode) of every directory it entered so a
bind mount that loops is walked once. It prunes vendored and build directories by name,
always honours `.gitignore` files (pathspec, scoped to their directory), and asks the
caller's `excluded(path)` (the governance boundary: secret globs, `.lsp-assist-ignore`)
about each candidate. Only files with a tree-sitter grammar are listed.

Bad input is survived, not raised: an unreadable directory is skipped with one log line
(up to a cap), a file that vanishes mid-scan is skipped, and the walk stops cleanly at
`max_files` candidates, at `max_entries` directory entries or at the time budget, with a
message that says which limit stopped it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pathspec

from lsp_assist.languages import canonical, language_id_for_path

log = logging.getLogger(__name__)

VENDORED_DIRS = frozenset(
    {
        "node_modules",
        ".venv",
        "venv",
        "vendor",
        "third_party",
        "dist",
        "build",
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "target",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        "site-packages",
    }
)
MAX_ERROR_LOGS = 10


@dataclass(frozen=True)
class FileEntry:
    """One candidate file: absolute path, stat facts at scan time and its LSP language id."""

    path: str
    mtime_ns: int
    size: int
    language: str


@dataclass
class ScanResult:
    files: list[FileEntry] = field(default_factory=list)
    entries_seen: int = 0
    skipped_large: int = 0
    skipped_excluded: int = 0
    errors: int = 0
    stopped: str | None = None  # why the walk ended early; None when it saw everything


_Ignores = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]  # (dir rel, spec) from the root down


@dataclass
class _Dir:
    path: str
    rel: str  # posix, relative to the root ("" for the root)
    ignores: _Ignores


def _gitignore(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(os.path.join(path, ".gitignore"), encoding="utf-8", errors="replace") as f:
            return pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())
    except FileNotFoundError:
        return None
    except OSError:
        return None  # unreadable: the boundary's own check fails closed when configured to


def _ignored(rel: str, is_dir: bool, ignores: _Ignores) -> bool:
    """Gitignore semantics: the deepest file with a verdict wins (a nested `!` re-includes)."""
    for base, spec in reversed(ignores):
        sub = rel[len(base) + 1 :] if base else rel
        res = spec.check_file(sub + "/" if is_dir else sub)
        if res.include is not None:
            return bool(res.include)
    return False


@dataclass(frozen=True)
class ScanLimits:
    """Where a scan stops: candidate files, bytes of one file, seconds, directory entries."""

    max_files: int = 20_000
    max_file_bytes: int = 1_000_000
    time_budget_s: float = 60.0
    max_entries: int | None = None  # None: max(10_000, 20 x max_files)

    @property
    def entry_cap(self) -> int:
        return self.max_entries if self.max_entries is not None else max(10_000, self.max_files * 20)


def scan(
    root: str,
    *,
    excluded: Callable[[str], str | None] | None = None,
    limits: ScanLimits = ScanLimits(),
    progress: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ScanResult:
    """List the indexable files under `root` (see the module docstring for the rules)."""
    walk = _Walk(excluded, limits, progress, should_stop)
    stack = [_Dir(os.path.abspath(root), "", ())]
    while stack:
        listed = walk.open(stack.pop())
        if listed is None:
            continue
        subdirs = walk.entries(*listed)
        if subdirs is None:
            break
        stack.extend(reversed(subdirs))  # depth-first, in name order
    return walk.result


class _Walk:
    """One scan: its result so far, what it asks about each file and what stops it."""

    def __init__(
        self,
        excluded: Callable[[str], str | None] | None,
        limits: ScanLimits,
        progress: Callable[[int], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        self.result = ScanResult()
        self.excluded = excluded
        self.limits = limits
        self.progress = progress
        self.should_stop = should_stop
        self.deadline = time.monotonic() + max(0.0, limits.time_budget_s)
        self.seen_dirs: set[tuple[int, int]] = set()

    def open(self, d: _Dir) -> tuple[_Dir, list[os.DirEntry[str]], _Ignores] | None:
        """`d`'s entries in name order and the ignore files that apply in it; None when it
        cannot be read or was already walked (a loop through a bind mount)."""
        try:
            st = os.stat(d.path)
        except OSError as exc:
            _error(self.result, "cannot stat a directory", exc)
            return None
        ident = (st.st_dev, st.st_ino)
        if ident in self.seen_dirs:
            return None  # a loop through a bind mount (links are never followed)
        self.seen_dirs.add(ident)
        spec = _gitignore(d.path)
        ignores = (*d.ignores, (d.rel, spec)) if spec is not None else d.ignores
        try:
            with os.scandir(d.path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:  # PermissionError, vanished directory, too many open files
            _error(self.result, "cannot list a directory", exc)
            return None
        return d, entries, ignores

    def _interrupted(self) -> str | None:
        """Every 256 entries: past the time budget, or cancelled (why); else report progress."""
        result = self.result
        if time.monotonic() > self.deadline:
            return (
                f"stopped at the scan time budget ({self.limits.time_budget_s:g} s) after "
                f"{len(result.files)} files; raise workspace.scan_time_budget_s or ignore more"
            )
        if self.should_stop is not None and self.should_stop():
            return "cancelled"
        if self.progress is not None:
            self.progress(len(result.files))
        return None

    def entries(self, d: _Dir, entries: list[os.DirEntry[str]], ignores: _Ignores) -> list[_Dir] | None:
        """Add `d`'s candidate files to the result; its subdirectories to walk, or None when a
        limit stopped the scan (`result.stopped` says which)."""
        result, excluded = self.result, self.excluded
        max_files, max_file_bytes = self.limits.max_files, self.limits.max_file_bytes
        entry_cap = self.limits.entry_cap
        subdirs: list[_Dir] = []
        for entry in entries:
            result.entries_seen += 1
            if result.entries_seen > entry_cap:
                result.stopped = (
                    f"stopped after {entry_cap} directory entries (workspace too large; "
                    "add an ignore file or raise workspace.max_files)"
                )
                return None
            if (result.entries_seen & 255) == 0:
                result.stopped = self._interrupted()
                if result.stopped is not None:
                    return None
            name = entry.name
            rel = f"{d.rel}/{name}" if d.rel else name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if name in VENDORED_DIRS or _ignored(rel, True, ignores):
                        continue
                    subdirs.append(_Dir(entry.path, rel, ignores))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue  # sockets, fifos, devices
            except OSError as exc:
                _error(result, "cannot inspect an entry", exc)
                continue
            language = language_id_for_path(name)
            if canonical(language) is None or _ignored(rel, False, ignores):
                continue
            if excluded is not None and excluded(entry.path) is not None:
                result.skipped_excluded += 1
                continue
            try:
                fst = entry.stat(follow_symlinks=False)
            except OSError as exc:  # vanished since the listing, or unreadable metadata
                _error(result, "cannot stat a file", exc, quiet=isinstance(exc, FileNotFoundError))
                continue
            if fst.st_size > max_file_bytes:
                result.skipped_large += 1
                continue
            if len(result.files) >= max_files:
                result.stopped = (
                    f"stopped at workspace.max_files={max_files}; the rest of the workspace "
                    "is not indexed (raise the limit or ignore generated folders)"
                )
                return None
            result.files.append(FileEntry(entry.path, fst.st_mtime_ns, fst.st_size, language))
        return subdirs


def _error(result: ScanResult, what: str, exc: OSError, *, quiet: bool = False) -> None:
    result.errors += 1
    if quiet:
        return
    if result.errors <= MAX_ERROR_LOGS:
        # The exception's strerror and the path's base name only: enough to act on.
        name = os.path.basename(str(exc.filename or ""))
        log.info("workspace scan: %s %r (%s); skipped", what, name, exc.strerror or type(exc).__name__)
    elif result.errors == MAX_ERROR_LOGS + 1:
        log.info("workspace scan: more errors; no longer logging each")
