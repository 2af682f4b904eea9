"""The line on screen as a rewrite's draft (`Job.hint`), on the real embedded model (marked
`model`): a draft the model agrees with is verified in passes of several tokens and kept; a
wrong one is dropped at its first token, and the text is then exactly that of plain greedy
decoding. (Where a draft is kept, llama.cpp's batched pass computes the logits in another
order than one token a pass, so a later near-tie may fall the other way.)"""

from __future__ import annotations

import importlib.util
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

SOURCE = '''"""Temperatures."""


def celsius_to_fahrenheit(celsius: float) -> float:
    return celsius * 9 / 5 + 32


def fahrenheit_to_celsius(fahrenheit: float) -> float:
    return '''


@pytest.fixture
async def provider(tmp_path: Path) -> LocalProvider:
    local = LocalConfig(refine_model="", constrain_members=False)
    p = await loaded_gemma(tmp_path, local)
    p.budget = PromptBudget(budget_ms=0)  # the whole prompt, every time
    yield p  # type: ignore[misc]
    await p.aclose()


def _context() -> PromptContext:
    lines = SOURCE.split("\n")
    return ContextEngine().build_from_text(
        SOURCE, "python", "/tmp/temps.py", Cursor(len(lines) - 1, len(lines[-1])), 1500, layout="stable"
    )


async def _complete(p: LocalProvider, draft: str = "") -> str:
    request = ModelRequest(_context(), max_tokens=16, temperature=0.0, draft=draft)
    return "".join([c.text async for c in p.stream(request)])


async def test_a_draft_the_model_agrees_with_is_kept_in_fewer_passes(provider: LocalProvider) -> None:
    plain = await _complete(provider)
    assert provider.last_stats.drafted_tokens == 0
    line = plain.split("\n", 1)[0]
    assert len(line.strip()) >= 3, plain  # something to draft
    drafted = await _complete(provider, draft=plain)
    stats = provider.last_stats
    assert stats.drafted_tokens >= 2 and stats.accepted_tokens >= 2, (plain, drafted)
    engine = provider._parts.loader.engine
    kept = engine.llm.detokenize(engine.continuation(line)[: stats.accepted_tokens + 1]).decode()
    assert drafted.startswith(kept) and plain.startswith(kept), (plain, drafted)


async def test_a_wrong_draft_changes_nothing(provider: LocalProvider) -> None:
    plain = await _complete(provider)
    drafted = await _complete(provider, draft="zzz_unlikely_name + 12345\nmore")
    assert drafted == plain
    assert provider.last_stats.accepted_tokens == 0
