"""The on-disk index (SQLite): builds, damage, schema changes, resumes, sharing, equality."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from lsp_assist.workspace.index import WorkspaceIndex, build_symbol_index
from lsp_assist.workspace.indexer import BuildOptions, build, refresh_paths
from lsp_assist.workspace.rows import FileRow
from lsp_assist.workspace.store import SCHEMA_VERSION, Store, build_lock, open_store, store_path
from lsp_assist.workspace.stored_symbols import StoredSymbolIndex

FILES = {
    "pkg/geometry.py": (
        "import math\n\nclass Vector:\n    def norm(self) -> float:\n        return math.sqrt(0)\n\n\n"
        "def distance_between(alpha: Vector, beta: Vector) -> float:\n    return 0.0\n"
    ),
    "pkg/shapes.py": (
        "from pkg.geometry import Vector\n\n\ndef area(v: Vector) -> float:\n    return v.norm()\n"
    ),
    "pkg/__init__.py": "",
    "web/app.ts": (
        "export class Router {\n  route(path: string): void {}\n}\n"
        "export function area(): number { return 1; }\n"
    ),
    "go/util/strings.go": (
        "package util\n\nfunc Reverse(s string) string { return s }\n\ntype Pair struct { A int }\n"
    ),
    "main.py": "import pkg.geometry\n\nx = pkg.geometry.distance_between(None, None)\n",
}


def _tree(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def _opts(root: Path, db: Path, **kw: object) -> BuildOptions:
    return BuildOptions(root=str(root), db=str(db), **kw)  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return _tree(tmp_path / "ws")


def _stored(root: Path, db: Path) -> StoredSymbolIndex:
    return StoredSymbolIndex([Store(db, str(root))])


def test_a_build_indexes_every_file_and_a_second_reads_none(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    first = build(_opts(ws, db))
    assert first.loaded == "new" and first.files == len(FILES) and first.reparsed == len(FILES)
    again = build(_opts(ws, db))
    assert again.loaded == "ok" and again.reread == 0 and again.files == len(FILES)
    (ws / "pkg" / "shapes.py").write_text("def perimeter():\n    pass\n")
    (ws / "main.py").unlink()
    third = build(_opts(ws, db))
    assert third.reread == 1 and third.removed == 1 and third.files == len(FILES) - 1
    idx = _stored(ws, db)
    assert idx.lookup("perimeter") and not idx.lookup("area")[0].path.endswith("shapes.py")


def test_the_store_answers_exactly_as_the_in_memory_index(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    old = WorkspaceIndex(str(ws), None)
    old.refresh()
    mem = build_symbol_index([old])
    new = _stored(ws, db)
    paths = mem.paths()
    assert new.paths() == paths and new.file_count() == mem.file_count()
    names = {s.name for p in paths for s in mem.symbols(p)}
    assert names
    for name in sorted(names):
        assert new.lookup(name) == mem.lookup(name), name
        assert new.definers(name) == mem.definers(name), name
    for p in paths:
        assert new.outline(p) == mem.outline(p), p
        assert new.refs(p) == mem.refs(p) and new.imports(p) == mem.imports(p), p
        assert new.symbols(p) == mem.symbols(p) and new.has_path(p)
        assert new.version(p) == mem.version(p)
    for d in {str(Path(p).parent) for p in paths}:
        assert new.paths_in_dir(d) == mem.paths_in_dir(d)
        assert new.refs_in_dir(d) == mem.refs_in_dir(d)
        assert dict(new.package_uses(d)) == dict(mem.package_uses(d))
    for stem in ("geometry", "shapes", "strings", "app"):
        assert new.paths_with_stem(stem) == mem.paths_with_stem(stem)
    assert new.paths_in_dir_named("go/util") == mem.paths_in_dir_named("go/util") != []


def test_memory_layer_shadows_the_store_and_counts_stay_exact(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    idx = _stored(ws, db)
    geometry = str(ws / "pkg" / "geometry.py")
    assert idx.definers("distance_between") == 1
    gen = idx.generation
    idx.update_file(geometry, "def buffer_only():\n    pass\n", "python")  # an open buffer
    assert idx.generation > gen
    assert [s.path for s in idx.lookup("buffer_only")] == [geometry]
    assert idx.lookup("distance_between") == [] and idx.definers("distance_between") == 0
    assert idx.definers("buffer_only") == 1
    idx.remove_file(geometry)  # closed: the stored row is the truth again
    assert idx.definers("distance_between") == 1 and not idx.lookup("buffer_only")


def test_the_boundary_hides_stored_files(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    idx = _stored(ws, db)
    secret = str(ws / "pkg" / "geometry.py")
    idx.admits = lambda p: p != secret
    idx.purge()
    assert not idx.has_path(secret) and idx.outline(secret) is None
    assert all(s.path != secret for s in idx.lookup("distance_between"))
    assert secret not in idx.paths_in_dir(str(ws / "pkg"))


def test_a_corrupt_database_is_rebuilt_with_a_log_line(
    ws: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    data = db.read_bytes()
    db.write_bytes(b"this is not a database" + data[22:4096])  # a damaged header
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with caplog.at_level(logging.WARNING):
        res = build(_opts(ws, db))
    assert res.loaded.startswith("rebuilt: ") and res.files == len(FILES) and res.reparsed == len(FILES)
    assert any("rebuilding it" in r.getMessage() for r in caplog.records)
    db.write_bytes(b"\x00" * 100)  # truncated to nothing useful
    assert build(_opts(ws, db)).loaded.startswith("rebuilt: ")


def test_a_schema_change_rebuilds_the_database(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    con.close()
    res = build(_opts(ws, db))
    assert res.loaded == f"rebuilt: schema version {SCHEMA_VERSION + 1}, expected {SCHEMA_VERSION}"
    assert res.reparsed == len(FILES)


def test_a_database_of_another_root_is_not_served(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    other = _tree(tmp_path / "other", {"a.py": "def only_other():\n    pass\n"})
    res = build(_opts(other, db))
    assert res.loaded == "rebuilt: written for another root" and res.files == 1


def test_an_interrupted_build_keeps_its_work_and_the_next_continues(tmp_path: Path) -> None:
    n = 300
    root = _tree(tmp_path / "big", {f"m/f{i}.py": f"def fn_{i}():\n    return {i}\n" for i in range(n)})
    db = tmp_path / "db.sqlite3"
    checks = [0]

    def stop_soon() -> bool:
        checks[0] += 1
        return checks[0] >= 2

    first = build(_opts(root, db, workers=1), should_stop=stop_soon)
    assert first.stopped == "cancelled"
    assert 0 < first.files < n and first.reparsed == first.files
    second = build(_opts(root, db, workers=1))
    assert second.stopped is None and second.files == n
    assert second.reparsed == n - first.files  # nothing parsed twice


def test_a_byte_budget_stops_cleanly_and_the_next_build_continues(tmp_path: Path) -> None:
    root = _tree(tmp_path / "r", {f"f{i}.py": f"def fn_{i}():\n    return {i}\n" for i in range(10)})
    db = tmp_path / "db.sqlite3"
    size = (root / "f0.py").stat().st_size
    first = build(_opts(root, db, max_total_bytes=size * 4))
    assert first.files == 4 and first.stopped is not None and "max_total_bytes" in first.stopped
    assert build(_opts(root, db, max_total_bytes=size * 4)).files == 8
    assert build(_opts(root, db)).files == 10


def test_a_second_server_shares_the_index_while_the_first_builds(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    with build_lock(db, blocking=False) as held:  # the first server is building
        assert held is not None
        res = build(_opts(ws, db))
        assert res.shared and res.stopped is not None and "sharing" in res.stopped
        assert res.files == len(FILES)  # it reads what the first wrote
    reader, writer = Store(db, str(ws)), Store(db, str(ws))
    before = reader.data_version()
    assert refresh_paths(writer, [str(ws / "main.py")], None, 1_000_000) == 0  # unchanged
    (ws / "main.py").write_text("def from_the_other_server():\n    pass\n")
    assert refresh_paths(writer, [str(ws / "main.py")], None, 1_000_000) == 1
    assert reader.data_version() != before  # the reader sees the other's commit (WAL)
    assert _stored(ws, db).lookup("from_the_other_server")


def test_refresh_paths_removes_deleted_and_excluded_files(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    store = Store(db, str(ws))
    main, shapes = str(ws / "main.py"), str(ws / "pkg" / "shapes.py")
    (ws / "main.py").unlink()
    assert refresh_paths(store, [main, shapes], lambda p: "secret" if p == shapes else None, 1_000_000) == 2
    assert not store.has_path(main) and not store.has_path(shapes)


def test_symlinks_are_not_followed_and_a_loop_ends(tmp_path: Path) -> None:
    root = _tree(tmp_path / "r", {"a/x.py": "def inside():\n    pass\n"})
    (root / "a" / "loop").symlink_to(root, target_is_directory=True)
    (root / "a" / "link.py").symlink_to(root / "a" / "x.py")
    res = build(_opts(root, tmp_path / "db.sqlite3"))
    assert res.files == 1 and res.stopped is None


def test_open_store_places_one_file_per_root(tmp_path: Path) -> None:
    a, b = store_path(tmp_path, "/x/one"), store_path(tmp_path, "/x/two")
    assert a != b and a.parent == b.parent == tmp_path / "index"
    store, how = open_store(a, "/x/one")
    assert how == "new" and store.file_count() == 0
    assert open_store(a, "/x/one")[1] == "ok"


def test_a_damaged_page_found_while_building_rebuilds_the_database(
    ws: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "db.sqlite3"
    build(_opts(ws, db))
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(db.read_bytes())
    page = 4096
    data[page:] = b"\xa5" * (len(data) - page)  # every page but the first (the header) damaged
    db.write_bytes(bytes(data))
    reader = Store(db, str(ws))
    with caplog.at_level(logging.WARNING):
        assert reader.paths() == [] and reader.failed  # a read answers nothing, never raises
        res = build(_opts(ws, db))
    assert res.loaded.startswith("rebuilt: ") and res.files == len(FILES)
    assert any("rebuilding it" in r.getMessage() for r in caplog.records)


def test_names_spelled_are_the_reference_names() -> None:
    from lsp_assist.structure.symbols import reference_names
    from lsp_assist.workspace.parse_worker import names_spelled

    text = "def ab(x1abc, é_long, $dollar):\n    return _hidden + 9abc + aé + abé1 # cmt ok\n" * 3
    assert frozenset(names_spelled(text)) == reference_names(text)
    many = " ".join(f"name_{i}" for i in range(5000))
    assert frozenset(names_spelled(many)) == reference_names(many)


def test_packed_names_of_ascii_files_are_the_regex_ones() -> None:
    """The ASCII fast path gives the blob the regex path gives, byte for byte: leading
    digits, short runs, `$`, a name spelled again, punctuation, and the cap on names."""
    from lsp_assist.workspace.parse_worker import names_spelled, packed_names
    from lsp_assist.workspace.store import pack_names

    texts = [
        "def ab(x1abc, $dollar, 12ab, 123abcd):\n    return _hidden + 9abc + a.b_c.d_ef # cmt ok\n" * 3,
        "x = 1e10 + 0x1fab + 3_000_000 + __dunder__ + a$b$c\n\tTAB\r\nend",
        " ".join(f"n{i % 7}_{i}" for i in range(9000)) + " zzz aaa",  # past MAX_REFS_PER_FILE
        "",
        "déjà vu: non-ASCII takes the regex path",
    ]
    for text in texts:
        data = text.encode("utf-8")
        assert packed_names(data, text) == pack_names(names_spelled(text)), text[:40]


def _row(path: str, sha: str, defs: list[str]) -> FileRow:
    rows = tuple((n, "function", i, i, i, i, f"def {n}()", None) for i, n in enumerate(defs))
    return FileRow(path, 1, 1, sha, "python", outline=b"", refs=b"", imports="[]", defs=rows)


def test_put_files_replaces_a_file_and_its_definitions_batch_by_batch(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path / "x.sqlite3", str(tmp_path))
    assert store.put_files([_row("/r/a.py", "1", ["alpha", "beta"]), _row("/r/b.py", "2", ["gamma"])]) == 2
    # The same path twice in one batch: the last row wins, its definitions only once.
    twice = [_row("/r/a.py", "3", ["delta"]), _row("/r/c.py", "4", []), _row("/r/a.py", "5", ["eps"])]
    store.put_files(twice)
    assert [d[0] for d in store.defs_of("/r/a.py")] == ["eps"]
    assert store.file_info("/r/a.py") == ("python", "5", 1)
    assert [d[0] for d in store.defs_of("/r/b.py")] == ["gamma"]
    assert store.defs_named("alpha") == [] and store.def_count() == 2
    assert store.paths() == ["/r/a.py", "/r/b.py", "/r/c.py"]
    store.close()


def _table_counts(db: Path) -> tuple[int, int, int]:
    con = sqlite3.connect(db)
    try:
        return tuple(
            con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("files", "contents", "defs")
        )  # type: ignore[return-value]
    finally:
        con.close()


def test_files_with_the_same_bytes_share_one_content_until_none_holds_it(tmp_path: Path) -> None:
    db = tmp_path / "x.sqlite3"
    store, _ = open_store(db, str(tmp_path))
    store.put_files([_row("/r/a.py", "1", ["alpha", "beta"]), _row("/r/b.py", "1", ["alpha", "beta"])])
    assert store.copy_files([("/r/c.py", 1, 1, "1", "python"), ("/r/d.py", 1, 1, "9", "python")]) == [
        ("/r/d.py", 1, 1, "9", "python")  # no stored content with that hash: the caller parses it
    ]
    assert _table_counts(db) == (3, 1, 2)  # three files, one content, its two definitions
    assert [p for p, _d in store.defs_named("alpha")] == ["/r/a.py", "/r/b.py", "/r/c.py"]
    assert store.definer_count("alpha") == 3 and store.def_count() == 6
    store.put_files([_row("/r/a.py", "2", ["gamma"])])  # a changed: b and c keep the old content
    assert [p for p, _d in store.defs_named("alpha")] == ["/r/b.py", "/r/c.py"]
    assert _table_counts(db) == (3, 2, 3)
    store.delete_paths(["/r/b.py", "/r/c.py"])  # nothing holds content "1" now: it goes
    assert _table_counts(db) == (1, 1, 1) and store.defs_named("alpha") == []
    store.copy_files([("/r/e.py", 1, 1, "2", "python")])
    store.delete_paths(["/r/a.py"])  # e.py still holds content "2"
    assert [p for p, _d in store.defs_named("gamma")] == ["/r/e.py"] and _table_counts(db) == (1, 1, 1)
    store.close()


def test_a_worker_collects_cycles_less_often_but_still_collects() -> None:
    import gc

    from lsp_assist.workspace.parse_worker import WORKER_GC_THRESHOLDS, tune_gc

    before = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_threshold() == WORKER_GC_THRESHOLDS and gc.get_threshold()[0] > before[0]
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
