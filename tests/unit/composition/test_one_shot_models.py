"""A one-shot command (`lsp-assist complete`) loads the model of the tier it asks and no
other: waiting for every tier's model loaded the 1.1 GB code model (the quality role) for a
typing-model answer, 1.71 GB of RSS where 0.48 GB serve it; and asking the quality tier
loaded the typing model too (the fallback's availability check started its load)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from lsp_assist.cli.session import complete_at, open_runtime, open_text, wait_for_model
from lsp_assist.domain import StreamChunk
from lsp_assist.providers.base import EmbeddedModel


class _Model:
    """An embedded model that only records being asked to load."""

    def __init__(self, model: str, answer: str = "") -> None:
        self.model = model
        self.answer = answer
        self.on_progress: Any = None
        self.loads = 0
        self.load_starts = 0
        self.settles = 0
        self._loaded = False

    name = "local"
    endpoint_host = None
    single_slot = True

    @property
    def loaded(self) -> bool:
        return self._loaded

    def start_loading(self) -> asyncio.Task[object]:
        raise AssertionError("not used by the one-shot path")

    def available_now(self) -> bool:
        # As `LocalProvider`: asking starts the load of a model not yet loaded.
        if not self._loaded:
            self.load_starts += 1
        return self._loaded

    async def ready(self) -> None:
        self.loads += 1
        self._loaded = True

    async def settled(self) -> None:
        self.settles += 1

    def prefill(self, context: Any, *, preempt: bool = False) -> None:
        return None

    async def stream(self, request: Any) -> AsyncIterator[StreamChunk]:
        yield StreamChunk(self.answer)

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def test_a_one_shot_loads_only_its_tiers_model(tmp_path: Path) -> None:
    rt = open_runtime(tmp_path)
    typing, strong = _Model("gemma3-270m"), _Model("qwen2.5-coder-1.5b")
    assert isinstance(typing, EmbeddedModel)
    real = dict(rt.providers)
    try:
        rt.providers["fast"], rt.providers["quality"] = typing, strong  # type: ignore[index]
        await wait_for_model(rt, quiet=True)
        assert (typing.loads, typing.settles, strong.loads) == (1, 1, 0)
        await wait_for_model(rt, quiet=True, tier="quality")
        assert (strong.loads, strong.settles) == (1, 1)
    finally:
        rt.providers.update(real)  # type: ignore[attr-defined]
        await rt.aclose()


async def test_the_quality_tier_does_not_load_the_typing_model(tmp_path: Path) -> None:
    rt = open_runtime(tmp_path)
    typing, strong = _Model("gemma3-270m", "0"), _Model("qwen2.5-coder-1.5b", "int(esc, 16)\n")
    real = dict(rt.providers)
    try:
        rt.providers["fast"], rt.providers["quality"] = typing, strong  # type: ignore[index]
        await wait_for_model(rt, quiet=True, tier="quality")
        uri = open_text(rt, tmp_path / "m.py", "def f(esc):\n    return \n")
        result = await complete_at(rt, uri, 1, 11, tier="quality")
        assert (result.text, result.tier) == ("int(esc, 16)", "quality")
        assert (typing.load_starts, typing.loads) == (0, 0)
    finally:
        rt.providers.update(real)  # type: ignore[attr-defined]
        await rt.aclose()
