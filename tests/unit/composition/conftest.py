from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_assist.config.loader import ConfigLayers
from lsp_assist.server import Runtime

OFFLINE: dict[str, Any] = {"provider": "offline"}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LSP_ASSIST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))


@pytest.fixture
def runtime(tmp_path: Path) -> Runtime:
    """A runtime on the offline engine over one empty workspace folder, built once."""
    ws = tmp_path / "ws"
    ws.mkdir()
    options = {"tiers": {"fast": OFFLINE, "quality": OFFLINE, "backup": OFFLINE}}
    rt = Runtime(ConfigLayers(init_options=options), [ws])
    rt.build()
    return rt
