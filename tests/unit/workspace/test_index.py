"""The persisted index: incremental refresh, corrupt and concurrent files, unreadable files."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from lsp_assist.workspace import index as index_mod
from lsp_assist.workspace.index import WorkspaceIndex, build_symbol_index, index_path


def _touch(path: Path, text: str) -> None:
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_build_then_incremental_rereads_only_the_changed_file(ws: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c"
    first = WorkspaceIndex(str(ws), cache)
    r1 = first.refresh()
    assert r1.files == 2 and r1.reread == 2 and r1.loaded == "none"
    assert first.save() > 0
    names = {s.name for s in build_symbol_index([first]).lookup("distance_between")}
    assert names == {"distance_between"}

    second = WorkspaceIndex(str(ws), cache)
    r2 = second.refresh()
    assert r2.loaded == "ok" and r2.reread == 0 and r2.symbols == r1.symbols

    _touch(ws / "main.py", "def fresh_function():\n    pass\n")
    r3 = second.refresh()
    assert r3.reread == 1 and r3.reparsed == 1
    assert build_symbol_index([second]).lookup("fresh_function")


def test_same_content_new_mtime_is_not_reparsed(ws: Path, tmp_path: Path) -> None:
    idx = WorkspaceIndex(str(ws), tmp_path / "c")
    idx.refresh()
    _touch(ws / "main.py", (ws / "main.py").read_text())
    r = idx.refresh()
    assert r.reread == 1 and r.reparsed == 0


def test_deleted_files_leave_the_index(ws: Path, tmp_path: Path) -> None:
    idx = WorkspaceIndex(str(ws), tmp_path / "c")
    idx.refresh()
    (ws / "pkg" / "geometry.py").unlink()
    r = idx.refresh()
    assert r.removed == 1 and r.files == 1
    assert not build_symbol_index([idx]).lookup("Vector")


@pytest.mark.parametrize(
    "damage",
    ["truncate", "garbage", "flip", "version", "other_root"],
)
def test_corrupt_index_is_detected_and_rebuilt_never_served(ws: Path, tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "c"
    idx = WorkspaceIndex(str(ws), cache)
    idx.refresh()
    idx.save()
    f = index_path(cache, str(ws))
    raw = f.read_text()
    if damage == "truncate":
        f.write_text(raw[: len(raw) // 2])
    elif damage == "garbage":
        f.write_bytes(b"\xff\xfe\x00not json")
    elif damage == "flip":
        # Same shape, a symbol renamed: only the checksum can tell.
        f.write_text(raw.replace("distance_between", "distance_betweeX"))
    elif damage == "version":
        doc = json.loads(raw)
        doc["version"] = 999
        f.write_text(json.dumps(doc))
    else:
        doc = json.loads(raw)
        payload = json.loads(doc["payload"])
        payload["root"] = "/elsewhere"
        doc["payload"] = json.dumps(payload)
        doc["checksum"] = index_mod._checksum(doc["payload"])
        f.write_text(json.dumps(doc))
    again = WorkspaceIndex(str(ws), cache)
    r = again.refresh()
    assert r.loaded.startswith("corrupt")
    assert r.reread == 2  # rebuilt from the workspace
    syms = build_symbol_index([again])
    assert syms.lookup("distance_between") and not syms.lookup("distance_betweeX")


def test_concurrent_writers_leave_a_whole_file(ws: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c"
    idx = WorkspaceIndex(str(ws), cache)
    idx.refresh()
    others = [WorkspaceIndex(str(ws), cache) for _ in range(4)]
    for o in others:
        o.records = dict(idx.records)
    errors: list[BaseException] = []

    def write(w: WorkspaceIndex) -> None:
        try:
            for _ in range(10):
                w.save()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(o,)) for o in others]
    for t in threads:
        t.start()
    # Read while they write: every read is the old or a new whole file, never a torn one.
    for _ in range(20):
        reader = WorkspaceIndex(str(ws), cache)
        assert reader.load() in ("ok", "none")
    for t in threads:
        t.join(timeout=30)
    assert not errors
    assert WorkspaceIndex(str(ws), cache).load() == "ok"
    assert not [p for p in (cache / "index").iterdir() if p.suffix == ".tmp"]


def test_in_place_writer_is_detected(ws: Path, tmp_path: Path) -> None:
    """A writer that does not use rename (an old version, a sync tool) is caught mid-write."""
    cache = tmp_path / "c"
    idx = WorkspaceIndex(str(ws), cache)
    idx.refresh()
    idx.save()
    f = index_path(cache, str(ws))
    raw = f.read_text()
    with open(f, "w") as out:
        out.write(raw[:100])
        out.flush()
        assert WorkspaceIndex(str(ws), cache).load().startswith("corrupt")
        out.write(raw[100:])
    assert WorkspaceIndex(str(ws), cache).load() == "ok"


def test_permission_denied_file_is_skipped(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = open
    blocked = str(ws / "pkg" / "geometry.py")

    def fake_open(file: object, *args: object, **kwargs: object) -> object:
        if str(file) == blocked:
            raise PermissionError(13, "Permission denied", blocked)
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", fake_open)
    idx = WorkspaceIndex(str(ws), tmp_path / "c")
    r = idx.refresh()
    assert r.errors == 1 and r.files == 1
    assert blocked not in idx.records


def test_file_changing_while_read_is_read_again_next_time(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = str(ws / "main.py")
    real_stat = os.stat

    def racing_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        st = real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
        if str(path) == target:
            # Pretend the file was written between the scan and the read.
            return os.stat_result(
                (
                    st.st_mode,
                    st.st_ino,
                    st.st_dev,
                    st.st_nlink,
                    st.st_uid,
                    st.st_gid,
                    st.st_size,
                    int(st.st_atime),
                    int(st.st_mtime) + 5,
                    int(st.st_ctime),
                )
            )
        return st

    idx = WorkspaceIndex(str(ws), tmp_path / "c")
    monkeypatch.setattr(os, "stat", racing_stat)
    r1 = idx.refresh()
    assert r1.files == 2
    assert idx.records[target].mtime_ns == 0  # not trusted
    monkeypatch.undo()
    r2 = idx.refresh()
    assert r2.reread == 1  # main.py read again, geometry.py not


def test_binary_files_are_skipped(ws: Path, tmp_path: Path) -> None:
    (ws / "blob.py").write_bytes(b"\x00\x01\x02binary")
    idx = WorkspaceIndex(str(ws), tmp_path / "c")
    r = idx.refresh()
    assert r.skipped_binary == 1
    assert str(ws / "blob.py") not in idx.records


def test_partial_scan_never_drops_records(ws: Path, tmp_path: Path) -> None:
    idx = WorkspaceIndex(str(ws), tmp_path / "c")
    idx.refresh()
    idx.max_files = 1
    r = idx.refresh()
    assert r.stopped is not None and r.removed == 0 and r.files == 2


def test_outlines_are_computed_at_index_time_persisted_and_fed_to_the_symbol_index(
    ws: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "c"
    first = WorkspaceIndex(str(ws), cache)
    first.refresh()
    first.save()
    path = str(ws / "pkg" / "geometry.py")
    built = build_symbol_index([first]).outline(path)
    assert built is not None
    assert [e.name for e in built.entries] == ["Vector", "norm", "distance_between"]
    assert "def distance_between(alpha: Vector, beta: Vector) -> float:" in [e.text for e in built.entries]
    again = WorkspaceIndex(str(ws), cache)
    assert again.refresh().reparsed == 0  # loaded from disk, not parsed again
    loaded = build_symbol_index([again]).outline(path)
    assert loaded is not None and loaded.entries == built.entries


def test_an_index_of_the_previous_format_is_rebuilt_quietly(ws: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c"
    first = WorkspaceIndex(str(ws), cache)
    first.refresh()
    first.save()
    assert first.file is not None
    doc = json.loads(first.file.read_text())
    doc["version"] = index_mod.FORMAT_VERSION - 1
    first.file.write_text(json.dumps(doc))
    again = WorkspaceIndex(str(ws), cache)
    res = again.refresh()
    assert res.loaded == "none" and res.reparsed == 2  # rebuilt with outlines, not "corrupt"
    path = str(ws / "pkg" / "geometry.py")
    outline = build_symbol_index([again]).outline(path)
    assert outline is not None and outline.entries


def test_headers_are_parsed_as_cpp_so_a_cpp_header_outlines_its_classes(tmp_path: Path) -> None:
    # `.h` is C++ in Vim/Neovim's default filetype and in clangd; read as C, a C++ header
    # outlined nothing of its classes and the index could not offer their members.
    root = tmp_path / "w"
    root.mkdir()
    (root / "db.h").write_text(
        "namespace leveldb {\nclass DB {\n public:\n"
        "  virtual Status Get(const ReadOptions& o, std::string* v) = 0;\n};\n}  // namespace leveldb\n"
    )
    (root / "util.h").write_text("struct point { int x; };\nint twice(int x);\n")  # C reads the same
    idx = WorkspaceIndex(str(root), None)
    idx.refresh()
    symbols = build_symbol_index([idx])
    db = symbols.outline(str(root / "db.h"))
    assert db is not None and db.language == "cpp"
    owner = {e.name: db.entries[e.owner].name if e.owner >= 0 else None for e in db.entries}
    assert owner.get("Get") == "DB" and owner.get("DB") == "leveldb"
    util = symbols.outline(str(root / "util.h"))
    assert util is not None and {e.name for e in util.entries} == {"point", "x", "twice"}
