"""Pipeline tests that build a whole `Runtime`: an isolated cache, config and policy."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("LSP_ASSIST_CACHE_DIR", str(cache))
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "no-user-config.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))
    return cache
