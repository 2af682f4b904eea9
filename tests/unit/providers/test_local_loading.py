"""Loading the embedded model is not a timeout: requests meanwhile get the offline answer
at once, and the load reports its progress (no model needed: the load is held on a gate)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

import lsp_assist.providers.local as local_mod
import lsp_assist.providers.local_loader as local_loader
from lsp_assist.cli.session import complete_text
from lsp_assist.domain import Outcome
from lsp_assist.errors import Unavailable
from lsp_assist.server import build_runtime


async def test_requests_during_the_load_are_answered_offline_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = threading.Event()

    def held_resolve(name: str, cache_dir: Path) -> Path:
        gate.wait(20)
        raise Unavailable("test: the model file is missing")

    monkeypatch.setattr(local_loader, "resolve_model", held_resolve)
    monkeypatch.setattr(local_loader.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setenv("LSP_ASSIST_CACHE_DIR", str(tmp_path / "cache"))
    rt = build_runtime([], {"tiers": {"fast": {"provider": "local"}, "quality": {"provider": "offline"}}})
    provider = rt.providers["fast"]
    assert isinstance(provider, local_mod.LocalProvider)
    events: list[local_mod.LoadEvent] = []
    rt.listeners.load_progress = events.append
    try:
        rt.start_model_load()
        assert not provider.available_now()
        assert rt.engine is not None and "fast" not in rt.engine.c.tier_chain("fast")
        result = await asyncio.wait_for(
            complete_text(rt, tmp_path / "a.py", "import os\n\nos.path.", 2, len("os.path.")), 10
        )
        assert result.tier == "offline" and result.outcome in (Outcome.FALLBACK, Outcome.EMPTY)
        load = provider.start_loading()
        assert not load.done()  # the answer came while the model was still loading
        gate.set()
        await asyncio.wait_for(asyncio.shield(load), 10)
        assert not provider.loaded
        assert events[0].message == "loading the local model" and events[0].percent == 0
        assert events[-1].done and events[-1].error and "missing" in events[-1].error
        with pytest.raises(Unavailable, match="missing"):
            await provider.ready()
    finally:
        gate.set()
        await rt.aclose()
