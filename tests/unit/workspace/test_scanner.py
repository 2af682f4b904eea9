"""The scanner: ignore rules, vendored folders, links, limits and unreadable folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_assist.governance.boundaries import DataBoundary
from lsp_assist.workspace.scanner import ScanLimits, scan


def _names(root: Path) -> list[str]:
    res = scan(str(root))
    return sorted(os.path.relpath(f.path, root) for f in res.files)


def test_lists_source_files_and_skips_vendored_and_unknown(ws: Path) -> None:
    (ws / "node_modules" / "x").mkdir(parents=True)
    (ws / "node_modules" / "x" / "index.js").write_text("function f() {}\n")
    (ws / ".venv").mkdir()
    (ws / ".venv" / "lib.py").write_text("def f(): pass\n")
    (ws / "notes.txt").write_text("hello\n")
    assert _names(ws) == ["main.py", os.path.join("pkg", "geometry.py")]


def test_gitignore_always_honoured_with_nested_negation(ws: Path) -> None:
    (ws / ".gitignore").write_text("gen/\n*.gen.py\n")
    (ws / "gen").mkdir()
    (ws / "gen" / "a.py").write_text("def a(): pass\n")
    (ws / "pkg" / "x.gen.py").write_text("def x(): pass\n")
    (ws / "pkg" / ".gitignore").write_text("!keep.gen.py\n")
    (ws / "pkg" / "keep.gen.py").write_text("def k(): pass\n")
    names = _names(ws)
    assert os.path.join("gen", "a.py") not in names
    assert os.path.join("pkg", "x.gen.py") not in names
    assert os.path.join("pkg", "keep.gen.py") in names


def test_boundary_secret_globs_and_lsp_assist_ignore(ws: Path) -> None:
    (ws / ".lsp-assist-ignore").write_text("private/\n")
    (ws / "private").mkdir()
    (ws / "private" / "p.py").write_text("def p(): pass\n")
    (ws / "secrets.py").write_text("KEY = 'x'\n")  # default secret glob `secrets.*`
    boundary = DataBoundary([str(ws)])
    res = scan(str(ws), excluded=boundary.excluded)
    names = sorted(os.path.relpath(f.path, ws) for f in res.files)
    assert names == ["main.py", os.path.join("pkg", "geometry.py")]
    assert res.skipped_excluded == 2


def test_symlink_loops_and_file_links_are_not_followed(ws: Path) -> None:
    os.symlink(ws, ws / "pkg" / "loop")  # a directory link back to the root
    os.symlink(ws / "pkg" / "loop", ws / "loop2")
    os.symlink(ws / "main.py", ws / "alias.py")
    res = scan(str(ws), limits=ScanLimits(time_budget_s=10))
    assert res.stopped is None
    assert sorted(os.path.relpath(f.path, ws) for f in res.files) == [
        "main.py",
        os.path.join("pkg", "geometry.py"),
    ]


def test_huge_files_skipped(ws: Path) -> None:
    (ws / "big.py").write_text("x = 1\n" * 1000)
    res = scan(str(ws), limits=ScanLimits(max_file_bytes=1000))
    assert res.skipped_large == 1
    assert all(not f.path.endswith("big.py") for f in res.files)


def test_permission_denied_directory_is_skipped_with_a_log_line(
    ws: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = os.scandir
    blocked = str(ws / "pkg")

    def scandir(path: str) -> object:
        if str(path) == blocked:
            raise PermissionError(13, "Permission denied", blocked)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with caplog.at_level("INFO", logger="lsp_assist.workspace.scanner"):
        res = scan(str(ws))
    assert [os.path.basename(f.path) for f in res.files] == ["main.py"]
    assert res.errors == 1
    assert any("Permission denied" in r.getMessage() for r in caplog.records)


def test_file_vanishing_during_the_scan_is_tolerated(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}

    class Entry:
        def __init__(self, e: os.DirEntry[str]) -> None:
            self._e = e
            self.name, self.path = e.name, e.path

        def is_symlink(self) -> bool:
            return self._e.is_symlink()

        def is_dir(self, follow_symlinks: bool = True) -> bool:
            return self._e.is_dir(follow_symlinks=follow_symlinks)

        def is_file(self, follow_symlinks: bool = True) -> bool:
            return self._e.is_file(follow_symlinks=follow_symlinks)

        def stat(self, follow_symlinks: bool = True) -> os.stat_result:
            if self.name == "main.py":
                calls["n"] += 1
                raise FileNotFoundError(2, "No such file or directory", self.path)
            return self._e.stat(follow_symlinks=follow_symlinks)

    real_scandir = os.scandir

    class Listing:
        def __init__(self, path: str) -> None:
            self._it = real_scandir(path)

        def __enter__(self) -> list[Entry]:
            return [Entry(e) for e in self._it]

        def __exit__(self, *exc: object) -> None:
            self._it.close()

    monkeypatch.setattr(os, "scandir", Listing)
    res = scan(str(ws))
    assert calls["n"] == 1
    assert [os.path.basename(f.path) for f in res.files] == ["geometry.py"]
    assert res.stopped is None


def test_max_files_stops_cleanly_with_a_message(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(50):
        (root / f"m{i:03}.py").write_text("")
    res = scan(str(root), limits=ScanLimits(max_files=10))
    assert len(res.files) == 10
    assert res.stopped is not None and "max_files=10" in res.stopped


def test_time_budget_stops_cleanly(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(600):
        (root / f"m{i:03}.py").write_text("")
    res = scan(str(root), limits=ScanLimits(time_budget_s=0.0))
    assert res.stopped is not None and "time budget" in res.stopped
    assert len(res.files) < 600


def test_hundred_thousand_files_stop_at_the_entry_cap(tmp_path: Path) -> None:
    root = tmp_path / "huge"
    for d in range(100):
        sub = root / f"d{d:02}"
        sub.mkdir(parents=True)
        for i in range(1000):
            # Empty non-source files: every one is a directory entry the walk must pass.
            os.close(os.open(sub / f"f{i}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    res = scan(str(root), limits=ScanLimits(max_files=500, time_budget_s=60))
    assert res.stopped is not None and "directory entries" in res.stopped
    assert res.entries_seen <= 10_001
