"""A monorepo-sized workspace: 100,000 small files and a symbolic link loop, under a time limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_assist.workspace.indexer import BuildOptions, build
from lsp_assist.workspace.store import Store
from lsp_assist.workspace.stored_symbols import StoredSymbolIndex

N = 100_000
PER_DIR = 100


def _generate(root: Path) -> None:
    """N one-definition Python files, PER_DIR a folder (os-level writes: seconds, not minutes)."""
    for d in range(N // PER_DIR):
        folder = root / f"d{d // 100:03d}" / f"p{d % 100:02d}"
        folder.mkdir(parents=True)
        base = str(folder)
        for i in range(d * PER_DIR, (d + 1) * PER_DIR):
            fd = os.open(os.path.join(base, f"m{i}.py"), os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, f"def f{i}():\n    return {i}\n".encode())
            os.close(fd)
    (root / "d000" / "loop").symlink_to(root, target_is_directory=True)  # a cycle
    (root / "d000" / "p00" / "up").symlink_to(root / "d000", target_is_directory=True)


@pytest.mark.scale
@pytest.mark.timeout(110)
def test_a_hundred_thousand_files_and_a_link_loop_are_indexed_whole(tmp_path: Path) -> None:
    root = tmp_path / "mono"
    _generate(root)
    db = tmp_path / "index.sqlite3"
    res = build(BuildOptions(root=str(root), db=str(db), boundary=False))
    assert res.stopped is None and res.errors == 0
    assert res.files == N and res.symbols == N  # no file cap, each link loop walked zero times
    idx = StoredSymbolIndex([Store(db, str(root))])
    assert [s.path for s in idx.lookup(f"f{N - 1}")] == [str(root / "d009" / "p99" / f"m{N - 1}.py")]
    again = build(BuildOptions(root=str(root), db=str(db), boundary=False))
    assert again.reread == 0 and again.files == N
