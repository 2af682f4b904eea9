"""Token healing on the real embedded model (marked `model`): stopped inside a word, the
model's answer finishes the word the file defines, and never repeats what was typed;
switched off, the prompt ends where the user stopped."""

from __future__ import annotations

import asyncio
import importlib.util
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

BILLING = '''"""Invoices."""


def compute_total(prices: list[float], rate: float) -> float:
    return sum(prices) * (1 + rate)


def describe_invoice(prices: list[float]) -> str:
    return f"{len(prices)} items"


prices = [9.5, 3.25, 12.0]
'''


@pytest.fixture
async def provider(tmp_path: Path) -> LocalProvider:
    p = await loaded_gemma(tmp_path, LocalConfig(refine_model=""))
    engine = p._loader.engine
    for _ in range(200):  # the index is built in a thread after the load (~0.3 s)
        if engine.heal_index is not None:
            break
        await asyncio.sleep(0.05)
    assert engine.heal_index is not None
    p.budget = PromptBudget(budget_ms=0)  # the whole prompt: no jump cut in the way
    yield p  # type: ignore[misc]
    await p.aclose()


def _context(typed: str) -> PromptContext:
    text = BILLING + typed
    lines = text.split("\n")
    return ContextEngine().build_from_text(
        text, "python", "/tmp/billing.py", Cursor(len(lines) - 1, len(lines[-1])), 1500, layout="stable"
    )


async def _complete(p: LocalProvider, typed: str, *, heal: bool) -> str:
    p._local = replace(p._local, token_healing=heal)
    request = ModelRequest(_context(typed), max_tokens=10, temperature=0.0)
    return "".join([c.text async for c in p.stream(request)])


async def test_stopped_inside_a_word_the_answer_finishes_the_files_word(provider: LocalProvider) -> None:
    cases = [("total = comp", "ute_total"), ("label = describe_inv", "oice")]
    # A word Gemma's vocabulary splits (`_` + `in` + `vo`): given back whole, not as its
    # last piece (which gave `describe_invoices`).
    cases.append(("label = describe_invo", "ice("))
    for typed, rest in cases:
        answer = await _complete(provider, typed, heal=True)
        assert answer.startswith(rest), (typed, answer)
        stats = provider.last_stats
        assert stats.prompt_tokens >= 2


async def test_the_prompt_gives_back_one_token_and_only_when_on(provider: LocalProvider) -> None:
    engine = provider._loader.engine
    await _complete(provider, "total = comp", heal=False)
    off = provider.last_stats.prompt_tokens
    await _complete(provider, "total = comp", heal=True)
    assert provider.last_stats.prompt_tokens == off - 1
    assert engine.heal_index is not None


async def test_the_given_back_token_is_read_with_the_prompts_last(provider: LocalProvider) -> None:
    # At a token's end the model mostly spells the given-back token as it was: drafted after
    # the prompt, it then costs no decode call of its own (`LlamaEngine._read_prompt`).
    engine = provider._loader.engine
    batches: list[list[int]] = []
    jobs: list[tuple[list[int], list[int]]] = []
    decode, run = engine._decode, engine.run

    def spy_decode(tokens: list[int], logits_from: int) -> bool:
        batches.append(list(tokens))
        return decode(tokens, logits_from)

    def spy_run(job: object) -> object:
        jobs.append((list(job.tokens), list(job.hint)))  # type: ignore[attr-defined]
        return run(job)  # type: ignore[arg-type]

    engine._decode, engine.run = spy_decode, spy_run
    try:
        plain = await _complete(provider, "total = compute_total(prices", heal=False)
        batches.clear()
        jobs.clear()
        healed = await _complete(provider, "total = compute_total(prices", heal=True)
    finally:
        engine._decode, engine.run = decode, run
    ((tokens, hint),) = jobs
    assert len(hint) == 1, hint  # the given-back token, drafted
    assert [tokens[-1], hint[0]] in batches, batches[-4:]
    assert provider.last_stats.accepted_tokens >= 1
    # The given-back token counts among the answer's 10: one fewer after it.
    assert healed and plain.startswith(healed), (plain, healed)
