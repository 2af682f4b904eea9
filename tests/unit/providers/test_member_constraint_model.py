"""The member constraint on the real embedded model (marked `model`): after `self.` and
`self.center.` the member the model writes is one the class has; switched off, the tokens
are exactly those of free decoding."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import replace
from pathlib import Path

import pytest

from lsp_assist.config.schema import LocalConfig
from lsp_assist.context.builder import ContextEngine
from lsp_assist.domain import Cursor, ModelRequest, PromptContext
from lsp_assist.providers.local import LocalProvider
from lsp_assist.providers.prompt_budget import PromptBudget
from tests.unit.providers.conftest import loaded_gemma

pytestmark = [
    pytest.mark.model,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None, reason="the 'local' extra is not installed"
    ),
]

SHAPES = '''"""Shapes on a plane."""


class Point:
    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def distance_to(self, other: "Point") -> float:
        return ((self.x - other.x) ** 2 + (self.y - other.y) ** 2) ** 0.5


class Circle:
    def __init__(self, center: Point, radius: float) -> None:
        self.center = center
        self.radius = radius

    def area(self) -> float:
        return 3.14159 * self.radius ** 2

    def contains(self, point: Point) -> bool:
        return '''

POINT = {"x", "y", "distance_to"}
CIRCLE = {"center", "radius", "area", "contains"}


@pytest.fixture
async def provider(tmp_path: Path) -> LocalProvider:
    # The constraint is the main model's: no refine model.
    p = await loaded_gemma(tmp_path, LocalConfig(refine_model=""))
    assert await p.members_ready()  # the vocabulary is indexed after the load
    assert p._loader.engine.heal_index is not None  # `loaded_gemma` waited for it
    # Two answers are compared token for token: the whole prompt every time, as the jump
    # budget cuts it to what the model reads in 200 ms at the rate it measured (the load's).
    p.budget = PromptBudget(budget_ms=0)
    yield p  # type: ignore[misc]
    await p.aclose()


def _context(typed: str) -> PromptContext:
    text = SHAPES + typed
    lines = text.split("\n")
    return ContextEngine().build_from_text(
        text, "python", "/tmp/shapes.py", Cursor(len(lines) - 1, len(lines[-1])), 1500, layout="stable"
    )


async def _complete(p: LocalProvider, ctx: PromptContext, *, constrain: bool) -> str:
    p._local = replace(p._local, constrain_members=constrain)
    request = ModelRequest(ctx, max_tokens=8, temperature=0.0)
    return "".join([c.text async for c in p.stream(request)])


def _member(answer: str) -> str:
    m = re.match(r"\w+", answer)
    return m.group() if m else ""


async def test_after_self_dot_the_model_names_a_member_the_class_has(provider: LocalProvider) -> None:
    for typed, names in (("self.center.", POINT), ("self.", CIRCLE), ("point.", POINT)):
        answer = await _complete(provider, _context(typed), constrain=True)
        assert _member(answer) in names, (typed, answer)
        assert provider.last_constraint is not None and provider.last_constraint.masked_steps >= 1


async def test_switched_off_the_tokens_are_those_of_free_decoding(provider: LocalProvider) -> None:
    ctx = _context("self.center.")
    off = await _complete(provider, ctx, constrain=False)
    assert provider.last_constraint is None
    ctx_no_scope = replace(ctx, members=None)  # no receivers known: no constraint either
    free = await _complete(provider, ctx_no_scope, constrain=True)
    assert provider.last_constraint is None
    assert off == free
    again = await _complete(provider, ctx, constrain=False)
    assert again == off  # greedy: the same tokens every time


async def test_speculative_drafts_keep_the_constrained_answer(provider: LocalProvider) -> None:
    ctx = _context("d = self.")
    # The whole prompt is read (no jump budget's cut): the drafts are n-grams of the prompt,
    # and the class they would repeat must be in it.
    provider.budget = PromptBudget(budget_ms=0)
    plain = await _complete(provider, ctx, constrain=True)
    provider._local = replace(provider._local, draft_tokens=6)
    try:
        drafted = await _complete(provider, ctx, constrain=True)
    finally:
        provider._local = replace(provider._local, draft_tokens=0)
    assert provider.last_stats.drafted_tokens > 0  # the drafts were tried
    assert drafted == plain  # greedy: drafts verified through the same mask
    assert _member(drafted) in CIRCLE


async def test_where_nothing_is_known_the_constraint_changes_nothing(provider: LocalProvider) -> None:
    text = "import numpy as np\n\n\ndef scaled(values):\n    return np."  # numpy: not listed
    ctx = ContextEngine().build_from_text(
        text, "python", "/tmp/scale.py", Cursor(4, 14), 1500, layout="stable"
    )
    on = await _complete(provider, ctx, constrain=True)
    assert provider.last_constraint is not None and provider.last_constraint.masked_steps == 0
    assert on == await _complete(provider, ctx, constrain=False)


async def test_through_the_whole_pipeline_the_prompt_carries_the_receivers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lsp_assist.cli.session import complete_text
    from lsp_assist.server import build_runtime

    monkeypatch.setenv("LSP_ASSIST_CACHE_DIR", str(tmp_path))
    config = {
        "tiers": {"fast": {"provider": "local"}},
        "local": {"model": "gemma3-270m", "first_token_timeout_ms": 60000, "total_timeout_ms": 90000},
        "cache": {"enabled": False},
        "completion": {"prefetch": False, "enrichment": False, "deadline_ms": 120000},
    }
    rt = build_runtime([], config)
    try:
        await rt.warm()
        (model,) = rt.local_models()
        if not model.loaded:
            pytest.skip("the embedded model is not installed")
        assert await model.members_ready()  # type: ignore[attr-defined]
        text = SHAPES + "self.center.\n"
        row = text.count("\n") - 1
        res = await complete_text(
            rt, tmp_path / "shapes.py", text, row, len(text.split("\n")[row]), version=1
        )
        constraint = model.last_constraint  # type: ignore[attr-defined]
        assert constraint is not None and constraint.masked_steps >= 1
        assert _member(res.text) in POINT, res.text
    finally:
        await rt.aclose()
