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


@dataclass
class _Dir:
    path: str
    rel: str  # posix, relative to the root ("" for the root)
    ignores: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]  # (dir rel, spec) from the root down


def _gitignore(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(os.path.join(path, ".gitignore"), encoding="utf-8", errors="replace") as f:
            return pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())
    except FileNotFoundError:
        return None
    except OSError:
        return None  # unreadable: the boundary's own check fails closed when configured to


def _ignored(rel: str, is_dir: bool, ignores: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]) -> bool:
    """Gitignore semantics: the deepest file with a verdict wins (a nested `!` re-includes)."""
    for base, spec in reversed(ignores):
        sub = rel[len(base) + 1 :] if base else rel
        res = spec.check_file(sub + "/" if is_dir else sub)
        if res.include is not None:
            return bool(res.include)
    return False


def scan(
    root: str,
    *,
    excluded: Callable[[str], str | None] | None = None,
    max_files: int = 20_000,
    max_file_bytes: int = 1_000_000,
    time_budget_s: float = 60.0,
    max_entries: int | None = None,
    progress: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ScanResult:
    """List the indexable files under `root` (see the module docstring for the rules)."""
    result = ScanResult()
    root = os.path.abspath(root)
    deadline = time.monotonic() + max(0.0, time_budget_s)
    entry_cap = max_entries if max_entries is not None else max(10_000, max_files * 20)
    seen_dirs: set[tuple[int, int]] = set()
    stack = [_Dir(root, "", ())]
    while stack:
        d = stack.pop()
        try:
            st = os.stat(d.path)
        except OSError as exc:
            _error(result, "cannot stat a directory", exc)
            continue
        ident = (st.st_dev, st.st_ino)
        if ident in seen_dirs:
            continue  # a loop through a bind mount (links are never followed)
        seen_dirs.add(ident)
        spec = _gitignore(d.path)
        ignores = (*d.ignores, (d.rel, spec)) if spec is not None else d.ignores
        try:
            with os.scandir(d.path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:  # PermissionError, vanished directory, too many open files
            _error(result, "cannot list a directory", exc)
            continue
        subdirs: list[_Dir] = []
        for entry in entries:
            result.entries_seen += 1
            if result.entries_seen > entry_cap:
                result.stopped = (
                    f"stopped after {entry_cap} directory entries (workspace too large; "
                    "add an ignore file or raise workspace.max_files)"
                )
                return result
            if (result.entries_seen & 255) == 0:
                if time.monotonic() > deadline:
                    result.stopped = (
                        f"stopped at the scan time budget ({time_budget_s:g} s) after "
                        f"{len(result.files)} files; raise workspace.scan_time_budget_s or ignore more"
                    )
                    return result
                if should_stop is not None and should_stop():
                    result.stopped = "cancelled"
                    return result
                if progress is not None:
                    progress(len(result.files))
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
                return result
            result.files.append(FileEntry(entry.path, fst.st_mtime_ns, fst.st_size, language))
        stack.extend(reversed(subdirs))  # depth-first, in name order
    return result


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
