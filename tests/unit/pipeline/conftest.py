"""Pipeline tests that build a whole `Runtime`: an isolated cache, config and policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_assist.config.loader import ConfigLayers
from lsp_assist.server import Runtime
from tests.fakes.fake_model_server import FakeModelServer


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("LSP_ASSIST_CACHE_DIR", str(cache))
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "no-user-config.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))
    return cache


def openai_runtime(fake: FakeModelServer, root: Path, **options: Any) -> Runtime:
    tier = {"provider": "openai", "base_url": fake.base_url, "model": "fake-coder"}
    opts: dict[str, Any] = {
        "tiers": {"fast": tier, "quality": tier, "backup": {"provider": "offline"}},
        "completion": {"prefetch": False, "enrichment": False},
        **options,
    }
    rt = Runtime(ConfigLayers(init_options=opts), [root])
    rt.build()
    return rt
