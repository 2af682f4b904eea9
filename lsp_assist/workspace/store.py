"""The workspace index on disk: one SQLite database per root (stdlib `sqlite3`, WAL mode).

Tables (see docs/workspace-index.md): `files` (path, directory, stem, mtime, size, and
its content), `contents` (one row per distinct content hash and language: outline, the
names the file spells, its import statements) and `defs` (one row per definition of a
content, indexed by name). What is indexed of a file depends only on its bytes and
language, so files with the same bytes (a copied or vendored package, a renamed folder)
share one `contents` row and its definitions; a content no file refers to any more is
deleted in the same transaction. Builds commit every few dozen files, so an interrupted
build keeps what it finished and the next one continues; nothing is ever rewritten whole.

Damage is found on opening (a file that is not a database, a `user_version` other than
`SCHEMA_VERSION`: an older or newer lsp-assist, another root's file) or when a damaged page
is read; either way the file is deleted and rebuilt, with one log line saying why
(`open_store`, `indexer.build`), and until then the server's reads answer nothing.
A second server on the same root opens the same file: WAL lets it read while
the other writes, and the build lock (`build_lock`) lets only one of them scan at a time.

Reads are indexed lookups (µs each); a `Store` keeps one connection per thread that
uses it (sqlite3 connections must not be shared between threads). The write statements
are in `store_writes.py`, the row types in `rows.py`.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar, cast

from lsp_assist.workspace.rows import Copy, DefRow, FileRow
from lsp_assist.workspace.store_writes import (
    copy_rows,
    delete_rows,
    put_rows,
    touch_rows,
    transaction,
)

log = logging.getLogger(__name__)

#: Bumped whenever the tables or what a row means change: an older file is rebuilt.
#: 1: the first on-disk index (replaces the JSON index of `index.py`, format 11).
#: 2: `contents`: files with the same bytes share their indexed content and definitions.
SCHEMA_VERSION = 2
STORE_SUBDIR = "index"
BUSY_TIMEOUT_MS = 5000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS contents(
    id INTEGER PRIMARY KEY,
    sha TEXT NOT NULL,
    language TEXT NOT NULL,
    outline BLOB NOT NULL,
    refs BLOB NOT NULL,
    imports TEXT NOT NULL,
    UNIQUE(sha, language)
);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    dir TEXT NOT NULL,
    dirbase TEXT NOT NULL,
    stem TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    content INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS files_dir ON files(dir);
CREATE INDEX IF NOT EXISTS files_stem ON files(stem);
CREATE INDEX IF NOT EXISTS files_dirbase ON files(dirbase);
CREATE INDEX IF NOT EXISTS files_content ON files(content);
CREATE TABLE IF NOT EXISTS defs(
    content INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    start_row INTEGER NOT NULL,
    end_row INTEGER NOT NULL,
    sig_start_row INTEGER NOT NULL,
    sig_end_row INTEGER NOT NULL,
    signature TEXT NOT NULL,
    container TEXT
);
CREATE INDEX IF NOT EXISTS defs_name ON defs(name, content);
CREATE INDEX IF NOT EXISTS defs_content ON defs(content);
"""

#: A file and its content, in reads.
_FC = "files f JOIN contents c ON c.id=f.content"


def pack_json(value: object) -> bytes:
    return zlib.compress(
        json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"), 1
    )


def unpack_json(blob: bytes) -> object:
    return json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))


def pack_names(names: Iterable[str]) -> bytes:
    return zlib.compress("\n".join(sorted(names)).encode("utf-8", "surrogatepass"), 1)


def pack_ascii_names(names: list[bytes]) -> bytes:
    """`pack_names` of names already encoded (ASCII: bytes sort as their strings do)."""
    return zlib.compress(b"\n".join(sorted(names)), 1)


def unpack_names(blob: bytes) -> frozenset[str]:
    text = zlib.decompress(blob).decode("utf-8", "surrogatepass")
    return frozenset(text.split("\n")) if text else frozenset()


def store_path(cache_dir: Path, root: str) -> Path:
    digest = hashlib.sha256(os.path.abspath(root).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return cache_dir / STORE_SUBDIR / f"{digest}.sqlite3"


class StoreError(Exception):
    """The database cannot be used (and could not be rebuilt)."""


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=True
    )
    con.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    con.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, never corrupt
    con.execute("PRAGMA cache_size=-4000")  # 4 MB of page cache per connection: bounded memory
    return con


def _problem(path: Path, root: str) -> str | None:
    """Why the database at `path` cannot be used as is (None: it can, or it does not exist)."""
    if not path.exists():
        return None
    try:
        con = _connect(path)
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION and version != 0:
                return f"schema version {version}, expected {SCHEMA_VERSION}"
            # Not `quick_check`: it reads every page (seconds on a large index, at every
            # start). A damaged page is found when read: the build rebuilds (`indexer.build`),
            # the server's reads return nothing (`_reads`).
            con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            if version == 0:
                return None  # created but never initialised: the schema is added below
            row = con.execute("SELECT value FROM meta WHERE key='root'").fetchone()
            if row is None or row[0] != root:
                return "written for another root"
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return f"not a usable database ({exc})"
    return None


def remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def open_store(path: Path, root: str) -> tuple[Store, str]:
    """The store at `path` for `root`, and how it was found: "ok", "new" or "rebuilt: why"."""
    root = os.path.abspath(root)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with build_lock(path, blocking=True, name="open") as _:
        problem = _problem(path, root)
        existed = path.exists()
        if problem is not None:
            log.warning("workspace index %s: %s; rebuilding it", path, problem)
            remove_database(path)
        con = _connect(path)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(_SCHEMA)
            con.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('root', ?)", (root,))
            con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot initialise {path}: {exc}") from exc
        finally:
            con.close()
    how = f"rebuilt: {problem}" if problem is not None else ("ok" if existed else "new")
    return Store(path, root), how


@contextlib.contextmanager
def build_lock(db: Path, *, blocking: bool, name: str = "build") -> Iterator[IO[bytes] | None]:
    """An exclusive lock beside the database (`<db>.<name>.lock`); yields None when another
    process holds it and `blocking` is False. Released when the holder exits, even killed."""
    f = open(f"{db}.{name}.lock", "ab")  # held for the with block
    try:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield None
            return
        yield f
    finally:
        f.close()


F = TypeVar("F", bound=Callable[..., Any])


def _reads(default: Callable[[], Any]) -> Callable[[F], F]:
    """A read that answers `default()` (and logs once) when the database is damaged or gone:
    a request must never fail because of the index. The build notices and rebuilds it."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(self: Store, *args: Any) -> Any:
            try:
                return fn(self, *args)
            except sqlite3.Error as exc:
                if not self.failed:
                    log.warning("workspace index %s unreadable (%s); answering without it", self.path, exc)
                self.failed = True
                self.reopen()
                return default()

        return cast(F, inner)

    return wrap


class Store:
    """Reads and per-file writes of one root's database (connections per thread)."""

    def __init__(self, path: Path, root: str) -> None:
        self.path = path
        self.root = root
        self._local = threading.local()
        self._epoch = 0  # bumped by `reopen`: every thread's connection is then replaced
        self.failed = False  # a read failed (logged once)

    def con(self) -> sqlite3.Connection:
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is not None and getattr(self._local, "epoch", -1) != self._epoch:
            con.close()
            con = None
        if con is None:
            con = _connect(self.path)
            self._local.con = con
            self._local.epoch = self._epoch
        return con

    def reopen(self) -> None:
        """The file may have been replaced (rebuilt): connect again on next use, everywhere."""
        self._epoch += 1

    def close(self) -> None:
        """Close this thread's connection (other threads' close with their thread)."""
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    def data_version(self) -> int:
        """Changes when another connection commits (SQLite's `PRAGMA data_version`)."""
        return int(self.con().execute("PRAGMA data_version").fetchone()[0])

    # ------------------------------------------------------------------ writing

    def put_files(self, rows: Iterable[FileRow]) -> int:
        """Insert or replace each file and its definitions, in one transaction."""
        con = self.con()
        with transaction(con):
            return put_rows(con, rows)

    def write(
        self, rows: Iterable[FileRow], copies: Iterable[Copy], same: Iterable[tuple[str, int, int]],
        drop: Iterable[str],
    ) -> tuple[list[Copy], int]:  # fmt: skip
        """One build batch in one transaction: new rows, copies (`copy_files`), new mtimes
        (`touch`) and removals (`delete_paths`); returns the copies whose source was gone
        and how many files were removed."""
        con = self.con()
        with transaction(con):
            put_rows(con, rows)
            missed = copy_rows(con, copies)
            touch_rows(con, same)
            removed = delete_rows(con, drop)
        return missed, removed

    @contextlib.contextmanager
    def bulk(self) -> Iterator[None]:
        """A build: this thread's commits skip fsync (`synchronous=OFF`), then one
        checkpoint at NORMAL writes and syncs it all. The index is derived data: an OS
        crash mid-build can at worst damage it, and a damaged index is rebuilt. Saves
        ~0.7 s of CPU and ~2 s of waiting on the 19k tree (docs/workspace-index.md)."""
        con = self.con()
        con.execute("PRAGMA synchronous=OFF")
        try:
            yield
        finally:
            con = self.con()  # (a rebuild may have replaced it)
            con.execute("PRAGMA synchronous=NORMAL")
            with contextlib.suppress(sqlite3.Error):
                con.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def copy_files(self, items: Iterable[Copy]) -> list[Copy]:
        """Store each (path, mtime, size, sha, language) as one more file of a stored content
        with that hash and language (a row in `files`, nothing else), in one transaction;
        returns those whose content is no longer stored (every file that held it was deleted
        or changed since the worker looked): the caller parses them."""
        con = self.con()
        with transaction(con):
            return copy_rows(con, items)

    def touch(self, items: Iterable[tuple[str, int, int]]) -> None:
        """Record new (mtime, size) for files whose content hash did not change."""
        con = self.con()
        with transaction(con):
            touch_rows(con, items)

    def delete_paths(self, paths: Iterable[str]) -> int:
        """Remove these files; a content no other file holds goes with them."""
        con = self.con()
        with transaction(con):
            return delete_rows(con, paths)

    @_reads(lambda: None)
    def meta(self, key: str) -> str | None:
        row = self.con().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        con = self.con()
        with transaction(con):
            con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # ------------------------------------------------------------------ reading

    def stats(self) -> dict[str, tuple[int, int, str]]:
        """path -> (mtime_ns, size, sha) of every file (the build's diff; one pass)."""
        return {
            p: (m, s, h)
            for p, m, s, h in self.con().execute(
                "SELECT f.path, f.mtime_ns, f.size, c.sha FROM files f JOIN contents c ON c.id=f.content"
            )
        }

    @_reads(int)
    def file_count(self) -> int:
        return int(self.con().execute("SELECT COUNT(*) FROM files").fetchone()[0])

    @_reads(int)
    def def_count(self) -> int:
        """Definitions as files see them: a content's count for each file that holds it."""
        row = (
            self.con()
            .execute(
                "SELECT COALESCE(SUM(n), 0) FROM files f JOIN"
                " (SELECT content, COUNT(*) AS n FROM defs GROUP BY content) d ON d.content=f.content"
            )
            .fetchone()
        )
        return int(row[0])

    @_reads(bool)
    def has_path(self, path: str) -> bool:
        return self.con().execute("SELECT 1 FROM files WHERE path=?", (path,)).fetchone() is not None

    @_reads(lambda: None)
    def file_info(self, path: str) -> tuple[str, str, int] | None:
        """(language, sha, mtime_ns) of `path`, or None."""
        row = (
            self.con()
            .execute(
                f"SELECT c.language, c.sha, f.mtime_ns FROM {_FC} WHERE f.path=?",
                (path,),
            )
            .fetchone()
        )
        return None if row is None else (str(row[0]), str(row[1]), int(row[2]))

    @_reads(list)
    def paths_with_stem(self, stem: str) -> list[str]:
        return [
            r[0] for r in self.con().execute("SELECT path FROM files WHERE stem=? ORDER BY path", (stem,))
        ]

    @_reads(list)
    def paths_in_dir(self, directory: str) -> list[str]:
        return [
            r[0] for r in self.con().execute("SELECT path FROM files WHERE dir=? ORDER BY path", (directory,))
        ]

    @_reads(list)
    def dirs_ending(self, base: str) -> list[str]:
        """Directories whose last component is `base` (Go import paths), by name."""
        rows = self.con().execute("SELECT DISTINCT dir FROM files WHERE dirbase=? ORDER BY dir", (base,))
        return [r[0] for r in rows]

    @_reads(list)
    def defs_named(self, name: str) -> list[tuple[str, DefRow]]:
        """(path, definition) of every definition of `name`, by (path, start row)."""
        rows = self.con().execute(
            "SELECT f.path, d.name, d.kind, d.start_row, d.end_row, d.sig_start_row, d.sig_end_row,"
            " d.signature, d.container FROM defs d JOIN files f ON f.content=d.content WHERE d.name=?"
            " ORDER BY f.path, d.start_row, d.rowid",
            (name,),
        )
        return [(r[0], tuple(r[1:])) for r in rows]

    def definer_paths(self, name: str) -> list[str]:
        rows = self.con().execute(
            "SELECT DISTINCT f.path FROM defs d JOIN files f ON f.content=d.content WHERE d.name=?", (name,)
        )
        return [r[0] for r in rows]

    @_reads(int)
    def definer_count(self, name: str) -> int:
        """How many files define `name`: the contents that define it (the covering index on
        (name, content)), then the files that hold each (the index on `files(content)`)."""
        row = (
            self.con()
            .execute(
                "SELECT COUNT(*) FROM files WHERE content IN (SELECT content FROM defs WHERE name=?)", (name,)
            )
            .fetchone()
        )
        return int(row[0])

    @_reads(list)
    def defs_of(self, path: str) -> list[DefRow]:
        rows = self.con().execute(
            "SELECT d.name, d.kind, d.start_row, d.end_row, d.sig_start_row, d.sig_end_row, d.signature,"
            " d.container FROM files f JOIN defs d ON d.content=f.content WHERE f.path=?"
            " ORDER BY d.start_row, d.rowid",
            (path,),
        )
        return [tuple(r) for r in rows]

    @_reads(lambda: None)
    def outline_blob(self, path: str) -> tuple[str, str, bytes] | None:
        """(language, sha, packed outline rows) of `path`."""
        row = (
            self.con()
            .execute(
                f"SELECT c.language, c.sha, c.outline FROM {_FC} WHERE f.path=?",
                (path,),
            )
            .fetchone()
        )
        return None if row is None else (str(row[0]), str(row[1]), bytes(row[2]))

    @_reads(lambda: None)
    def refs_blob(self, path: str) -> bytes | None:
        row = self.con().execute(f"SELECT c.refs FROM {_FC} WHERE f.path=?", (path,)).fetchone()
        return None if row is None else bytes(row[0])

    @_reads(list)
    def refs_in_dir(self, directory: str) -> list[tuple[str, bytes]]:
        rows = self.con().execute(
            f"SELECT f.path, c.refs FROM {_FC} WHERE f.dir=? ORDER BY f.path",
            (directory,),
        )
        return [(r[0], bytes(r[1])) for r in rows]

    @_reads(tuple)
    def imports(self, path: str) -> tuple[str, ...]:
        row = self.con().execute(f"SELECT c.imports FROM {_FC} WHERE f.path=?", (path,)).fetchone()
        if row is None:
            return ()
        return tuple(str(x) for x in json.loads(row[0]))

    @_reads(list)
    def paths(self) -> list[str]:
        return [r[0] for r in self.con().execute("SELECT path FROM files ORDER BY path")]

    @_reads(list)
    def recent_paths(self, limit: int) -> list[str]:
        rows = self.con().execute("SELECT path FROM files ORDER BY mtime_ns DESC, path LIMIT ?", (limit,))
        return [r[0] for r in rows]

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(f"{self.path}{suffix}")
        return total
