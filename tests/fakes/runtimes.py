"""A whole `Runtime` whose tiers call a loopback fake model (`fake_model_server.py`): the
pipeline tests and `benchmarks/request_profile.py` build theirs here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsp_assist.config.loader import ConfigLayers
from lsp_assist.server import Runtime
from tests.fakes.fake_model_server import FakeModelServer


def openai_runtime(fake: FakeModelServer, root: Path, **options: Any) -> Runtime:
    """A built runtime for the workspace `root`: the fast and quality tiers on `fake`
    (OpenAI-compatible), no backup model, no prefetch or enrichment unless `options`
    (initializationOptions sections) say otherwise."""
    tier = {"provider": "openai", "base_url": fake.base_url, "model": "fake-coder"}
    opts: dict[str, Any] = {
        "tiers": {"fast": tier, "quality": tier, "backup": {"provider": "offline"}},
        "completion": {"prefetch": False, "enrichment": False},
        **options,
    }
    rt = Runtime(ConfigLayers(init_options=opts), [root])
    rt.build()
    return rt
