"""The statements that write the index: files, their shared contents and definitions.

Each function runs on one connection inside a transaction the caller holds (`transaction`),
so a build batch (`Store.write`) is one commit. A content no file refers to any more is
deleted in the same transaction (`drop_unused`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator

from lsp_assist.structure.symbols import path_stem
from lsp_assist.workspace.rows import Copy, FileRow


@contextlib.contextmanager
def transaction(con: sqlite3.Connection) -> Iterator[None]:
    con.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def put_rows(con: sqlite3.Connection, rows: Iterable[FileRow]) -> int:
    """Insert or replace each file, its content and the content's definitions."""
    # A handful of statements per batch, not several per file: the writer shares the
    # cores with the parse workers, and per-statement overhead was most of its CPU.
    batch = list({r.path: r for r in rows}.values())  # a path twice: the last row wins
    if not batch:
        return 0
    # The last parse of a content wins (the same bytes give the same row, unless the
    # code that builds rows changed): its row and definitions are replaced.
    contents = list({(r.sha, r.language): r for r in batch}.values())
    con.executemany(
        "INSERT INTO contents(sha, language, outline, refs, imports) VALUES (?,?,?,?,?)"
        " ON CONFLICT(sha, language) DO UPDATE SET outline=excluded.outline,"
        " refs=excluded.refs, imports=excluded.imports",
        [(r.sha, r.language, r.outline, r.refs, r.imports) for r in contents],
    )
    ids = content_ids(con, [r.sha for r in contents])
    new = [ids[(r.sha, r.language)] for r in contents]
    con.executemany("DELETE FROM defs WHERE content=?", [(i,) for i in new])
    con.executemany(
        "INSERT INTO defs VALUES (?,?,?,?,?,?,?,?,?)",
        [(ids[(r.sha, r.language)], *d) for r in contents for d in r.defs],
    )
    set_files(con, [(r.path, r.mtime_ns, r.size, ids[(r.sha, r.language)]) for r in batch])
    return len(batch)


def set_files(con: sqlite3.Connection, files: list[tuple[str, int, int, int]]) -> None:
    """Insert or update each (path, mtime, size, content id); then delete the contents
    these files held before that no file holds any more."""
    before = contents_of(con, [f[0] for f in files])
    con.executemany(
        "INSERT INTO files(path, dir, dirbase, stem, mtime_ns, size, content) VALUES (?,?,?,?,?,?,?)"
        " ON CONFLICT(path) DO UPDATE SET mtime_ns=excluded.mtime_ns, size=excluded.size,"
        " content=excluded.content",
        [
            (path, d, os.path.basename(d), path_stem(path), mtime, size, content)
            for path, mtime, size, content in files
            for d in (os.path.dirname(path),)
        ],
    )
    now = {f[0]: f[3] for f in files}
    drop_unused(con, {c for p, c in before.items() if now.get(p) != c})


def drop_unused(con: sqlite3.Connection, contents: Iterable[int]) -> None:
    for c in contents:
        if con.execute("SELECT 1 FROM files WHERE content=? LIMIT 1", (c,)).fetchone() is None:
            con.execute("DELETE FROM defs WHERE content=?", (c,))
            con.execute("DELETE FROM contents WHERE id=?", (c,))


def content_ids(con: sqlite3.Connection, shas: list[str]) -> dict[tuple[str, str], int]:
    """(sha, language) -> content id of the stored contents with these hashes."""
    out: dict[tuple[str, str], int] = {}
    unique = sorted(set(shas))
    for i in range(0, len(unique), 500):  # under SQLite's 999 variables
        chunk = unique[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for sha, language, cid in con.execute(
            f"SELECT sha, language, id FROM contents WHERE sha IN ({marks})", chunk
        ):
            out[(sha, language)] = cid
    return out


def contents_of(con: sqlite3.Connection, paths: list[str]) -> dict[str, int]:
    """path -> content id of those of `paths` that have a row."""
    out: dict[str, int] = {}
    for i in range(0, len(paths), 500):
        chunk = paths[i : i + 500]
        marks = ",".join("?" * len(chunk))
        rows = con.execute(f"SELECT path, content FROM files WHERE path IN ({marks})", chunk)
        out.update(rows.fetchall())
    return out


def copy_rows(con: sqlite3.Connection, items: Iterable[Copy]) -> list[Copy]:
    """Store each copy as one more file of its stored content; those whose content is gone."""
    batch = list({c[0]: c for c in items}.values())  # a path twice: the last one wins
    if not batch:
        return []
    ids = content_ids(con, [c[3] for c in batch])
    missed = [c for c in batch if (c[3], c[4]) not in ids]
    files = [(p, m, n, ids[(sha, lang)]) for p, m, n, sha, lang in batch if (sha, lang) in ids]
    if files:
        set_files(con, files)
    return missed


def touch_rows(con: sqlite3.Connection, items: Iterable[tuple[str, int, int]]) -> None:
    con.executemany("UPDATE files SET mtime_ns=?, size=? WHERE path=?", [(m, s, p) for p, m, s in items])


def delete_rows(con: sqlite3.Connection, paths: Iterable[str]) -> int:
    before = contents_of(con, list(paths))
    con.executemany("DELETE FROM files WHERE path=?", [(p,) for p in before])
    drop_unused(con, set(before.values()))
    return len(before)
