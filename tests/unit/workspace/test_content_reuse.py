"""A file whose bytes the store already holds under another path is copied, not parsed again
(a renamed folder, a copied or vendored package), and the copy is exactly what a parse of it
would have stored."""

from __future__ import annotations

import shutil
import sqlite3
import sysconfig
from pathlib import Path

from lsp_assist.workspace.indexer import BuildOptions, BuildResult, _write, build
from lsp_assist.workspace.parse_worker import Outcome
from lsp_assist.workspace.rows import Copy
from lsp_assist.workspace.store import Store

#: Real modules: classes, methods, decorators, imports, docstrings (rich outlines and defs).
STDLIB = Path(sysconfig.get_paths()["stdlib"])
MODULES = sorted(p for p in STDLIB.glob("*.py") if 2_000 < p.stat().st_size < 60_000)[:56]


def _package(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for p in MODULES:
        shutil.copyfile(p, dest / p.name)
    (dest / "app.ts").write_text("export class Router {\n  route(path: string): void {}\n}\n")
    return dest


def _opts(root: Path, db: Path, **kw: object) -> BuildOptions:
    return BuildOptions(root=str(root), db=str(db), workers=2, **kw)  # type: ignore[arg-type]


def _rows(db: Path) -> dict[str, tuple[object, ...]]:
    """Every stored field of every file, its content and its definitions in stored order, by path."""
    con = sqlite3.connect(db)
    try:
        out: dict[str, tuple[object, ...]] = {}
        query = (
            "SELECT f.content, f.path, f.dir, f.dirbase, f.stem, f.mtime_ns, f.size, c.sha, c.language,"
            " c.outline, c.refs, c.imports FROM files f JOIN contents c ON c.id=f.content"
        )
        for cid, path, *fields in con.execute(query):
            defs = con.execute("SELECT * FROM defs WHERE content=? ORDER BY rowid", (cid,)).fetchall()
            out[path] = (*fields, [d[1:] for d in defs])
        return out
    finally:
        con.close()


def test_a_copied_package_is_stored_exactly_as_parsing_it_would_store_it(tmp_path: Path) -> None:
    assert len(MODULES) >= 50  # enough files that the worker pool (not the inline path) runs
    root = tmp_path / "ws"
    _package(root / "src" / "lib")
    db = tmp_path / "reuse.sqlite3"
    first = build(_opts(root, db))
    assert first.reparsed == len(MODULES) + 1 and first.reused == 0
    _package(root / "services" / "lib_copy")  # the same bytes under new paths
    second = build(_opts(root, db))
    assert second.reread == len(MODULES) + 1
    assert second.reused == len(MODULES) + 1 and second.reparsed == 0
    plain = tmp_path / "plain.sqlite3"
    parsed = build(_opts(root, plain, reuse_content=False))
    assert parsed.reused == 0 and parsed.reparsed == 2 * (len(MODULES) + 1)
    assert _rows(db) == _rows(plain)
    # and the copy answers lookups under its own path
    name = Store(db, str(root)).defs_of(str(root / "services" / "lib_copy" / MODULES[0].name))[0][0]
    paths = {p for p, _d in Store(db, str(root)).defs_named(name)}
    assert str(root / "services" / "lib_copy" / MODULES[0].name) in paths


def test_a_renamed_folder_is_not_parsed_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _package(root / "old_name")
    db = tmp_path / "db.sqlite3"
    build(_opts(root, db))
    (root / "old_name").rename(root / "new_name")
    res = build(_opts(root, db))
    n = len(MODULES) + 1
    assert (res.reparsed, res.reused, res.removed, res.files) == (0, n, n, n)
    store = Store(db, str(root))
    assert all(p.startswith(str(root / "new_name")) for p in store.paths())


def test_a_few_copied_files_are_reused_on_the_inline_path_too(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    shutil.copyfile(MODULES[0], root / "a" / "m.py")
    db = tmp_path / "db.sqlite3"
    build(_opts(root, db))
    (root / "b").mkdir()
    shutil.copyfile(MODULES[0], root / "b" / "m.py")
    (root / "b" / "other.py").write_text("def fresh_function():\n    return 1\n")
    res = build(_opts(root, db))
    assert res.workers == 0  # fewer files than a pool is started for
    assert (res.reused, res.reparsed) == (1, 1)
    rows = _rows(db)
    assert rows[str(root / "a" / "m.py")][4:] == rows[str(root / "b" / "m.py")][4:]  # from the size on


def test_a_copy_whose_source_is_gone_is_parsed_instead(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "m.py"
    target.write_text("class Kept:\n    def method(self):\n        return 1\n")
    db = tmp_path / "db.sqlite3"
    build(_opts(root, db))  # creates the store (one file)
    store = Store(db, str(root))
    late = root / "late.py"
    late.write_text("def only_here():\n    pass\n")
    st = late.stat()
    # a worker saw this content stored under another path, which was deleted before the write
    copy: Copy = (str(late), st.st_mtime_ns, st.st_size, "f" * 32, "python")
    outcome: Outcome = ("copy", copy)
    res = BuildResult()
    _write(store, [outcome], res, 1_000_000)
    assert (res.reused, res.reparsed) == (0, 1)
    assert [d[0] for d in store.defs_of(str(late))] == ["only_here"]


def test_repeats_within_one_first_build_are_copied(tmp_path: Path) -> None:
    for count in (5, len(MODULES)):  # the inline path, then the worker pool
        root = tmp_path / f"ws{count}"
        for name in ("one", "two"):  # the same files twice, scanned close together
            (root / name).mkdir(parents=True)
            for p in MODULES[:count]:
                shutil.copyfile(p, root / name / p.name)
        db = tmp_path / f"db{count}.sqlite3"
        res = build(_opts(root, db))
        assert res.files == 2 * count and res.reparsed + res.reused == 2 * count
        assert res.reused > 0 if count == len(MODULES) else res.reused == count
        plain = tmp_path / f"plain{count}.sqlite3"
        build(_opts(root, plain, reuse_content=False))
        assert _rows(db) == _rows(plain)
