"""A configuration change keeps the loaded embedded model unless its own settings changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_assist.config.loader import ConfigLayers
from lsp_assist.server import Runtime, local_model_available

pytestmark = pytest.mark.skipif(not local_model_available(), reason="the `local` extra is not installed")


def _runtime(tmp_path: Path, **options: Any) -> Runtime:
    options.setdefault("cache", {"dir": str(tmp_path / "cache")})
    rt = Runtime(ConfigLayers(init_options=options), [tmp_path])
    rt.build()
    return rt


def _rebuild(rt: Runtime, client: dict[str, Any]) -> None:
    rt.layers.client = client
    rt.build()


async def test_unrelated_change_keeps_the_model(tmp_path: Path) -> None:
    rt = _runtime(tmp_path)
    model = rt.providers["fast"]
    # The quality tier runs on the typing provider's engine (itself, or its rewrite model's
    # view when the code model is installed): never a second copy.
    quality = rt.providers["quality"]
    assert model.name == "local" and getattr(quality, "slot", quality) is model
    _rebuild(rt, {"completion": {"debounce_min_ms": 5}, "local": {"context_chars": 1200}})
    quality = rt.providers["quality"]
    assert rt.providers["fast"] is model and getattr(quality, "slot", quality) is model
    await rt.retire_old()  # must not close the model that is kept
    assert rt.local_models() == [model]
    await rt.aclose()


async def test_a_model_setting_change_builds_a_new_model(tmp_path: Path) -> None:
    rt = _runtime(tmp_path)
    model = rt.providers["fast"]
    _rebuild(rt, {"local": {"n_ctx": 4096}})
    assert rt.providers["fast"] is not model
    assert rt.providers["fast"].name == "local"
    await rt.retire_old()
    await rt.aclose()
