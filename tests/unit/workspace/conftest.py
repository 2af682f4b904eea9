"""Fixtures for the workspace tests: an isolated cache and config, and a small workspace."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.fakes.fake_model_server import FakeModelServer  # noqa: E402


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("LSP_ASSIST_CACHE_DIR", str(cache))
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "no-user-config.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))
    return cache


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "geometry.py").write_text(
        "class Vector:\n    def norm(self) -> float:\n        return 0.0\n\n\n"
        "def distance_between(alpha: Vector, beta: Vector) -> float:\n    return 0.0\n"
    )
    (root / "main.py").write_text("import pkg.geometry\n\nx = 1\n")
    return root


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer() as srv:
        yield srv
