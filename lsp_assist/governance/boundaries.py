"""Data boundaries: which files may inform a model, and which endpoints may be called.

`DataBoundary.excluded(path)` returns a reason (for status and audit, never file content)
or None. Sources, first match wins:

1. built-in secret globs (`.env*`, `*.pem`, `id_rsa*`, `.aws/credentials`, `.git/`...),
   matched case-insensitively like Copilot's content exclusion;
2. `governance.exclude` globs (also case-insensitive, gitignore syntax);
3. `.lsp-assist-ignore` files, gitignore syntax via `pathspec`, in the workspace root and
   any directory below it, scoped to their directory; the deepest file with a verdict wins
   (so a nested `!pattern` can re-include);
4. `.gitignore` files the same way when `respect_gitignore` is on.

Rules 2 and 4 are per workspace folder (`set_folders`, `FolderRules`): a file in a folder
(the innermost one when folders nest) is judged by that folder's exclusions, built from its
own `.lsp-assist.toml` over the user layer with the editor's settings and the admin policy
on top (`governance/folders.py`); a file outside every folder by the user, editor and
admin exclusions only. Ignore files (rule 3) are read from the file's own folder down.

Symlinks: a path is judged twice, as named and as `realpath` resolves it (against the
workspace roots resolved the same way), and excluded when either verdict excludes it. So
`config.txt -> .env.production`, a link into an ignored directory, and a link named
`.env` all stay out, whether asked about as the file being edited or as a sibling tab
offered for cross-file context (both go through `excluded`).

Fail closed: a path we cannot place (None, non-file URI) is excluded, and an ignore file
that exists but cannot be read excludes everything under its directory. Paths outside
every workspace root still get rules 1 and 2 (a stray `~/.ssh/id_rsa` opened in the editor
stays private). Ignore files are re-read when their mtime changes (one `stat` per
directory level per call, cached).

`check_endpoint(base_url, has_key)` raises `EndpointRefused` for a host outside
`allowed_hosts` (loopback is always allowed) and for a key over plain HTTP to a
non-loopback host. `allowed_hosts` None (the key absent) allows any host; an empty list
allows loopback only. The caller passes the URL requests will really go to, a provider's
default included (server.py `effective_url`): an empty URL means in-process. Messages
name the host only, never the URL's user-info.
"""

from __future__ import annotations

import ipaddress
import os
import re
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit

import pathspec

from lsp_assist.errors import EndpointRefused

DEFAULT_SECRET_GLOBS: tuple[str, ...] = (
    ".env", ".env.*", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx",
    "*.gpg", "*.asc", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "credentials", "credentials.*",
    "**/.aws/credentials", "**/.aws/config", "**/.ssh/*", "**/.gnupg/**", "**/.docker/config.json",
    "**/.kube/config", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials",
    "secrets.*", "secret.*", "*.tfstate", "*.tfstate.*", "*.tfvars", ".git/",
)  # fmt: skip

IGNORE_FILE = ".lsp-assist-ignore"
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def _any_match(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str]:
    """One regex that a path matches exactly when some pattern of `spec` matches it: the
    patterns' own regexes as alternatives (their named groups made plain). Only for specs of
    include patterns (no `!negation`: then "some pattern matches" is the verdict). Checking
    36 patterns one by one in Python was ~60% of a file's boundary check in an index build."""
    patterns = [p for p in spec.patterns if p.include is not None]
    if any(p.include is not True or p.regex is None for p in patterns):
        return re.compile("")  # matches everything: every path takes the full check
    parts = [re.sub(r"\(\?P<\w+>", "(?:", p.regex.pattern) for p in patterns if p.regex is not None]
    return re.compile("|".join(f"(?:{x})" for x in parts) or r"(?!)")


def is_loopback(host: str) -> bool:
    h = host.strip("[]").lower()
    if h in LOOPBACK_NAMES or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def host_allowed(host: str, allowed: Sequence[str] | None) -> bool:
    """`allowed` None means any host; entries are exact hosts or `*.suffix` wildcards."""
    if is_loopback(host) or allowed is None:
        return True
    h = host.lower().rstrip(".")
    for pat in allowed:
        if pat == h or (pat.startswith("*.") and h.endswith(pat[1:])):
            return True
    return False


def check_endpoint(base_url: str, has_key: bool, allowed_hosts: Sequence[str] | None) -> None:
    """Raise EndpointRefused when this endpoint may not be called. Empty URL: in-process."""
    if not base_url:
        return
    try:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
    except ValueError as e:
        raise EndpointRefused(f"endpoint refused: malformed URL ({e.__class__.__name__})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not host:
        raise EndpointRefused(f"endpoint refused: unsupported URL scheme {scheme!r} or missing host")
    if not host_allowed(host, allowed_hosts):
        raise EndpointRefused(
            f"endpoint refused: host {host!r} is not in governance.allowed_hosts "
            f"({', '.join(allowed_hosts or ()) or 'loopback only'})"
        )
    if scheme == "http" and has_key and not is_loopback(host):
        raise EndpointRefused(
            f"endpoint refused: an API key would be sent over plain HTTP to {host!r}; use https "
            "(plain HTTP is allowed only to loopback)"
        )


def _real_roots(roots: Sequence[str]) -> list[str]:
    """The roots with symlinks resolved (a workspace opened through a link), longest first."""
    real: list[str] = []
    for r in roots:
        try:
            real.append(os.path.realpath(r))
        except (OSError, ValueError):
            real.append(r)
    return sorted(dict.fromkeys(real), key=len, reverse=True)


def _root_of(abspath: str, roots: Sequence[str]) -> str | None:
    for r in roots:
        if abspath == r or abspath.startswith(r.rstrip(os.sep) + os.sep):
            return r
    return None


def _placed(abspath: str, roots: Sequence[str]) -> tuple[str | None, str]:
    """The root `abspath` is under (None: none) and its path there, `/`-separated."""
    root = _root_of(abspath, roots)
    rel = os.path.relpath(abspath, root) if root else abspath.lstrip("/\\")
    rel_posix = PurePosixPath(*PurePosixPath(rel.replace(os.sep, "/")).parts).as_posix()
    if rel_posix.startswith("../"):
        root, rel_posix = None, abspath.lstrip("/\\").replace(os.sep, "/")
    return root, rel_posix


class _DirMemo:
    """Per folder, what a `DataBoundary(memo_dirs=True)` found once (see there)."""

    __slots__ = ("ignore", "placed_dirs", "real_dirs")

    def __init__(self) -> None:
        self.real_dirs: dict[str, str] = {}
        self.placed_dirs: dict[tuple[str, int], tuple[str | None, str]] = {}
        self.ignore: dict[tuple[str, str], list[tuple[int, str, str, _Spec]]] = {}

    def realpath(self, abspath: str) -> str:
        """`os.path.realpath(abspath)`: its folder's, resolved once, and its name, unless the
        file itself is a link (then resolved whole)."""
        folder, name = os.path.split(abspath)
        if not name:
            return os.path.realpath(abspath)
        try:
            if stat.S_ISLNK(os.lstat(abspath).st_mode):
                return os.path.realpath(abspath)
        except OSError:
            pass  # as `realpath` does: a name that is not there is kept as it is
        real = self.real_dirs.get(folder)
        if real is None:
            real = self.real_dirs[folder] = os.path.realpath(folder)
        return os.path.join(real, name)

    def placed(self, abspath: str, roots: Sequence[str]) -> tuple[str | None, str] | None:
        """`_placed(abspath, roots)` from its folder's, or None where that is not the same:
        a path outside every root (or a root itself) is placed by `_placed`."""
        folder, name = os.path.split(abspath)
        key = (folder, id(roots))
        got = self.placed_dirs.get(key)
        if got is None:
            got = self.placed_dirs[key] = _placed(folder, roots)
        root, rel = got
        if root is None or not name or abspath in roots:
            return None
        return root, (name if rel == "." else f"{rel}/{name}")

    def ignore_files(
        self, root: str, parts: list[str], find: Callable[[str, list[str]], list[tuple[int, str, str, _Spec]]]
    ) -> list[tuple[int, str, str, _Spec]]:
        """`find(root, parts)` for the first file of each folder, kept for the others."""
        key = (root, "/".join(parts[:-1]))
        got = self.ignore.get(key)
        if got is None:
            got = self.ignore[key] = find(root, parts)
        return got


class _Spec:
    """One compiled ignore file, re-read when its mtime changes."""

    __slots__ = ("mtime", "spec", "unreadable")

    def __init__(self, mtime: int, spec: pathspec.GitIgnoreSpec | None, unreadable: bool) -> None:
        self.mtime = mtime
        self.spec = spec
        self.unreadable = unreadable


@dataclass(frozen=True)
class FolderRules:
    """What one workspace folder's policy says about its files (rules 2 and 4)."""

    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = False
    source: str = ""  # the folder's own settings file; "" when it has none


def _compile(exclude: Sequence[str]) -> pathspec.GitIgnoreSpec | None:
    return pathspec.GitIgnoreSpec.from_lines([g.lower() for g in exclude]) if exclude else None


class DataBoundary:
    """The file-exclusion and endpoint rules for one set of workspace roots."""

    def __init__(
        self,
        workspace_roots: Sequence[str] = (),
        *,
        exclude: Sequence[str] = (),
        respect_gitignore: bool = False,
        allowed_hosts: Sequence[str] | None = None,
        verdict_ttl_s: float = 0.0,
        memo_dirs: bool = False,
    ) -> None:
        self.roots = [os.path.abspath(r) for r in workspace_roots]
        self.real_roots = _real_roots(self.roots)
        # A verdict costs a stat() per ignore file per directory level; the request path asks
        # for every open document on every request. With a TTL the answer is reused that long
        # (an edited ignore file then takes effect within the TTL). 0: always re-check.
        self.verdict_ttl_s = verdict_ttl_s
        self._verdicts: dict[str, tuple[float, str | None]] = {}
        # Longest first, so a nested workspace root wins over its parent.
        self.roots.sort(key=len, reverse=True)
        self.allowed_hosts = None if allowed_hosts is None else tuple(allowed_hosts)
        self.respect_gitignore = respect_gitignore
        self._exclude = tuple(exclude)
        self._defaults = pathspec.GitIgnoreSpec.from_lines(DEFAULT_SECRET_GLOBS)
        self._defaults_any = _any_match(self._defaults)
        self._extra = _compile(exclude)
        # Per workspace folder (as named and as resolved): its rules and compiled globs.
        self._folders: dict[str, FolderRules] = {}
        self._folder_specs: dict[str, tuple[pathspec.GitIgnoreSpec | None, FolderRules]] = {}
        self._specs: dict[str, _Spec] = {}
        # `memo_dirs`: the boundary of one index build (a worker process's life). What a
        # file's folder decides is found once per folder and kept: its resolved path, its
        # path under its root, and the ignore files above it (a `stat` per folder level). The
        # files of one folder then cost a `lstat` and the glob checks of their own name.
        # An ignore file edited during the build counts from the next build on.
        self._memo: _DirMemo | None = _DirMemo() if memo_dirs else None

    def set_roots(self, workspace_roots: Sequence[str]) -> None:
        self.roots = sorted((os.path.abspath(r) for r in workspace_roots), key=len, reverse=True)
        self.real_roots = _real_roots(self.roots)
        self._verdicts.clear()
        if self._memo is not None:
            self._memo = _DirMemo()

    def set_folders(self, rules: Mapping[str, FolderRules]) -> None:
        """Each workspace folder's own rules (by its path); a root without an entry, and a
        file outside every root, get the boundary's own (`exclude`, `respect_gitignore`)."""
        self._folders = {os.path.abspath(r): v for r, v in rules.items()}
        self._folder_specs = {}
        for root, folder in self._folders.items():
            compiled = (_compile(folder.exclude), folder)
            self._folder_specs[root] = compiled
            try:
                self._folder_specs.setdefault(os.path.realpath(root), compiled)
            except (OSError, ValueError):
                pass
        self.refresh()

    def rules_for(self, root: str | None) -> FolderRules:
        """The rules that govern files of workspace folder `root` (None: outside every one)."""
        found = self._folder_specs.get(root) if root is not None else None
        return found[1] if found is not None else FolderRules(self._exclude, self.respect_gitignore)

    def governing_root(self, path: str) -> str | None:
        """The workspace folder whose rules judge `path` as named (the innermost), or None."""
        return _root_of(os.path.abspath(path), self.roots)

    def fingerprint(self) -> tuple[object, ...]:
        """Everything a verdict depends on besides the ignore files on disk: two boundaries
        with equal fingerprints judge every path alike (the runtime compares them across a
        rebuild to know whether the policy changed)."""
        folders = tuple(sorted(self._folders.items()))
        return (tuple(self.roots), self._exclude, self.respect_gitignore, folders)

    @property
    def ignore_names(self) -> tuple[str, ...]:
        """The ignore files this boundary reads in some folder."""
        gitignore = self.respect_gitignore or any(r.respect_gitignore for r in self._folders.values())
        return (IGNORE_FILE, ".gitignore") if gitignore else (IGNORE_FILE,)

    def _extra_for(self, root: str | None) -> tuple[pathspec.GitIgnoreSpec | None, str]:
        """Rule 2's compiled globs for files of `root`, and how a verdict names them."""
        found = self._folder_specs.get(root) if root is not None else None
        if found is None:
            return self._extra, "governance.exclude"
        return found[0], f"governance.exclude of {found[1].source or root}"

    def refresh(self) -> None:
        """An ignore file changed on disk: forget every verdict and compiled file now,
        instead of within the verdict TTL."""
        self._verdicts.clear()
        self._specs.clear()
        if self._memo is not None:
            self._memo = _DirMemo()

    def excluded(self, path: str | None) -> str | None:
        """A reason when `path` must never reach a model, else None."""
        if not path:
            return "no file path (fail closed)"
        if self.verdict_ttl_s <= 0:
            return self._verdict(path)
        now = time.monotonic()
        cached = self._verdicts.get(path)
        if cached is not None and now - cached[0] < self.verdict_ttl_s:
            return cached[1]
        verdict = self._verdict(path)
        if len(self._verdicts) > 4096:
            self._verdicts.clear()
        self._verdicts[path] = (now, verdict)
        return verdict

    def _verdict(self, path: str) -> str | None:
        abspath = os.path.abspath(path)
        try:
            real = os.path.realpath(abspath) if self._memo is None else self._memo.realpath(abspath)
        except (OSError, ValueError):
            return "path cannot be resolved (fail closed)"
        reason = self._verdict_of(abspath, self.roots)
        # Also as resolved, unless resolving changed neither the path nor the roots.
        if reason is None and (real != abspath or self.real_roots != self.roots):
            reason = self._verdict_of(real, self.real_roots)
            if reason is not None:
                reason = f"symlink target: {reason}"
        return reason

    def _verdict_of(self, abspath: str, roots: Sequence[str]) -> str | None:
        placed = self._memo.placed(abspath, roots) if self._memo is not None else None
        root, rel_posix = placed if placed is not None else _placed(abspath, roots)
        low = rel_posix.lower()
        # `_defaults_any` first: one regex search says "no default glob matches" for nearly
        # every file; only a path it matches is checked pattern by pattern (for the reason).
        if self._defaults_any.search(low):
            r = self._defaults.check_file(low)
            if r.include:
                return f"default secret pattern {DEFAULT_SECRET_GLOBS[r.index or 0]!r}"
        # Also test the absolute path so ".aws/credentials" outside a root is caught.
        if root:
            whole = abspath.lstrip("/\\").replace(os.sep, "/").lower()
            if self._defaults_any.search(whole) and self._defaults.match_file(whole):
                return "default secret pattern"
        extra, named = self._extra_for(root)
        if extra is not None and extra.match_file(low):
            return named
        if root is None:
            return None
        return self._ignore_files(root, rel_posix)

    def _ignore_files(self, root: str, rel: str) -> str | None:
        parts = rel.split("/")
        # Directories from the file's own up to the root: deepest verdict wins.
        if self._memo is not None:
            found = self._memo.ignore_files(root, parts, self._ignore_files_above)
        else:
            found = self._ignore_files_above(root, parts)
        for depth, d, name, spec in found:
            if spec.unreadable:
                return f"{name} unreadable in {d} (fail closed)"
            assert spec.spec is not None
            res = spec.spec.check_file("/".join(parts[depth:]))
            if res.include is True:
                return f"{name} in {d}"
            if res.include is False:
                return None  # explicitly re-included by a negation
        return None

    def _ignore_files_above(self, root: str, parts: list[str]) -> list[tuple[int, str, str, _Spec]]:
        """The ignore files that can judge a file at `parts` under `root`, deepest first:
        (depth, their folder, their name, the compiled file)."""
        names = [IGNORE_FILE] + ([".gitignore"] if self.rules_for(root).respect_gitignore else [])
        out: list[tuple[int, str, str, _Spec]] = []
        for depth in range(len(parts) - 1, -1, -1):
            d = os.path.join(root, *parts[:depth])
            for name in names:
                spec = self._load(os.path.join(d, name))
                if spec is not None:
                    out.append((depth, d, name, spec))
        return out

    def _load(self, path: str) -> _Spec | None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._specs.pop(path, None)
            return None
        except OSError:
            return _Spec(0, None, True)
        cached = self._specs.get(path)
        if cached is not None and cached.mtime == st.st_mtime_ns:
            return cached
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                spec = pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())
            entry = _Spec(st.st_mtime_ns, spec, False)
        except OSError:
            entry = _Spec(st.st_mtime_ns, None, True)
        self._specs[path] = entry
        return entry

    def check_endpoint(self, base_url: str, has_key: bool) -> None:
        check_endpoint(base_url, has_key, self.allowed_hosts)
