"""The in-process embedded model for real (marked `model`): KV-cache reuse across
requests, interruption by a newer request, prompts that share all but their last tokens.
SmolLM2 135M keeps these short; figures come from benchmarks/local_latency.py."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
from pathlib import Path

import pytest

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.templates import render_completion, resolve_template
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, ModelRequest, PromptContext
from lsp_assist.errors import Unavailable
from lsp_assist.providers.llama_engine import common_prefix
from lsp_assist.providers.local import LoadEvent, LocalProvider
from lsp_assist.providers.models import resolve_model

pytestmark = [
    pytest.mark.model,
    pytest.mark.timeout(180),
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None, reason="the 'local' extra is not installed"
    ),
]

CODE = "import os\n\n\ndef join_all(parts):\n    out = []\n    for part in parts:\n        out.append("


@pytest.fixture
async def provider(tmp_path: Path) -> LocalProvider:
    try:
        resolve_model("smollm2", tmp_path)
    except Unavailable as exc:
        pytest.skip(str(exc))
    # No refine model: these tests are about the main model's own reads and refinements
    # (the coder's are in test_coder_model_real.py), whatever extras are installed.
    local = LocalConfig(n_ctx=1024, refine_model="")
    p = LocalProvider(TierConfig(provider="local", model="smollm2"), local, tmp_path)
    events: list[LoadEvent] = []
    p.on_progress = events.append
    assert not p.available_now()  # starts the load, never waits for it
    await asyncio.wait_for(p.ready(), 120)
    assert p.available_now()
    assert events[0].percent == 0 and events[-1].done and events[-1].percent == 100
    yield p  # type: ignore[misc]
    await p.aclose()


async def _complete(p: LocalProvider, prefix: str, max_tokens: int = 6) -> str:
    ctx = PromptContext("python", "join.py", prefix, "")
    return "".join(
        [c.text async for c in p.stream(ModelRequest(ctx, max_tokens=max_tokens, temperature=0.0))]
    )


async def test_the_common_prefix_stays_in_the_kv_cache(provider: LocalProvider) -> None:
    first = await _complete(provider, CODE)
    assert first
    cold = provider.last_stats
    assert cold.evaluated_tokens == cold.prompt_tokens
    await _complete(provider, CODE + "o")  # one more typed character
    warm = provider.last_stats
    assert warm.prompt_tokens >= cold.prompt_tokens
    assert warm.evaluated_tokens <= 3, warm
    assert warm.reused_tokens >= warm.prompt_tokens - 3


async def test_a_newer_request_interrupts_the_running_generation(provider: LocalProvider) -> None:
    ctx = PromptContext("python", "join.py", "# the numbers from 1 to 500, one per line\n1\n2\n3\n", "")
    long = provider.stream(ModelRequest(ctx, max_tokens=400, temperature=0.0))
    got = [await long.__anext__(), await long.__anext__()]
    job = provider._current
    assert job is not None and got
    second = await _complete(provider, CODE)  # supersedes the running one
    assert second is not None
    rest = [c async for c in long]
    assert job.stats.cancelled and job.stats.stop_reason == "cancel"
    assert job.stats.generated_tokens < 400
    assert len(got) + len(rest) < 400


async def test_consecutive_keystrokes_share_all_but_the_last_tokens(provider: LocalProvider) -> None:
    lines = [f"    value_{i} = compute(value_{i - 1}, limit)" for i in range(60)]
    statement = "result = os.path.join(value_3, "
    engine = ContextEngine()
    token_lists = []
    for i in range(len(statement) + 1):
        text = "def f(limit):\n" + "\n".join(lines) + "\n    " + statement[:i]
        doc = Document("file:///w/f.py", "python", 1, text, "/w/f.py")
        ctx = engine.build(doc, Cursor(61, 4 + i), 1500, layout="stable")
        token_lists.append(provider._engine.tokenize(render_completion(ctx, "none", "smollm2").prompt))
    for before, after in itertools.pairwise(token_lists):
        assert common_prefix(before, after) >= len(before) - 2


async def test_a_line_that_goes_on_does_not_get_an_empty_answer(provider: LocalProvider) -> None:
    """After `print("done")` the model would end the line; told the line goes on (it ends
    with an operator), its first token is never a newline or end-of-text."""
    from lsp_assist.providers.llama_engine import Job

    engine = provider._engine
    prompt = 'def main():\n    print("done")\n    value = 1 +'
    pieces: list[str] = []
    job = Job(engine.tokenize(prompt), 3, 0.0, lambda t: pieces.append(t) or True, line_goes_on=True)
    await asyncio.get_running_loop().run_in_executor(provider._executor, engine.run, job)
    assert "".join(pieces).strip() and "\n" not in pieces[0], pieces


async def test_a_background_prefill_leaves_only_the_typed_tokens_to_read(provider: LocalProvider) -> None:
    body = "\n".join(f"    item_{i} = parts[{i}]" for i in range(40))
    ctx = PromptContext("python", "join.py", f"def f(parts):\n{body}\n    ", "")
    first = provider.prefill(PromptContext("python", "join.py", "def unrelated():\n    pass\n" * 30, ""))
    running = provider.prefill(ctx)  # a newer rest replaces the older read (cancelled at a batch)
    assert first is not None and running is not None
    await asyncio.wait_for(running, 120)  # it runs on the model's thread
    await asyncio.sleep(0)  # its completion callback clears the busy flag
    assert provider._current is None and provider._background is None
    await _complete(provider, ctx.prefix + "return")
    assert provider.last_stats.evaluated_tokens <= 3, provider.last_stats


async def test_a_jump_reads_only_its_budget_first_and_the_rest_in_the_background(
    provider: LocalProvider,
) -> None:
    here = "def f(parts):\n" + "\n".join(f"    item_{i} = parts[{i}]" for i in range(40)) + "\n    "
    there = "def g(rows):\n" + "\n".join(f"    row_{i} = rows[{i}] * {i}" for i in range(40)) + "\n    "
    await _complete(provider, here)
    provider.budget.budget_ms = 1.0  # any speed reads only the floor's tokens in 1 ms
    allowed = provider.budget.allowed_new()
    assert allowed is not None
    runs = provider.read_ahead_runs
    await _complete(provider, there)  # the jump: a new window, far more than the allowance
    jump = provider.last_stats
    engine = provider._engine
    template = resolve_template("auto", provider._path_name, provider._template)
    full = engine.tokenize(
        render_completion(PromptContext("python", "join.py", there, ""), template, "").prompt
    )
    assert jump.prompt_tokens < len(full)
    assert jump.evaluated_tokens <= allowed + 1, jump
    for _ in range(600):  # the whole prompt is read next, on the model's thread (bounded wait)
        if not provider.busy:
            break
        await asyncio.sleep(0.05)
    assert provider.read_ahead_runs == runs + 1
    assert common_prefix(engine.cached_tokens, full) == len(full) - 1
    provider.budget.budget_ms = 0.0  # the next key: the whole context, already read
    await _complete(provider, there + "r")
    assert provider.last_stats.prompt_tokens >= len(full)
    assert provider.last_stats.evaluated_tokens <= 3, provider.last_stats


async def test_a_refinement_reads_the_whole_prompt_the_jump_budget_cut(provider: LocalProvider) -> None:
    """The cut stream says how much it left out (before its first token); the refinement that
    follows reads the whole prompt, with the function's head the cut lacked, whatever the budget."""
    here = "def f(parts):\n" + "\n".join(f"    item_{i} = parts[{i}]" for i in range(40)) + "\n    "
    there = "def g(rows):\n" + "\n".join(f"    row_{i} = rows[{i}] * {i}" for i in range(40)) + "\n    "
    await _complete(provider, here)
    provider.budget.budget_ms = 1.0  # any speed reads only the floor's tokens in 1 ms
    ctx = PromptContext("python", "join.py", there, "")
    chunks = [c async for c in provider.stream(ModelRequest(ctx, max_tokens=4, temperature=0.0))]
    cut = [c.meta["prompt_cut"] for c in chunks if c.meta and "prompt_cut" in c.meta]
    assert len(cut) == 1 and cut[0] > 0 and chunks[0].meta is not None  # it comes first
    engine = provider._engine
    template = resolve_template("auto", provider._path_name, provider._template)
    full = engine.tokenize(render_completion(ctx, template, "").prompt)
    assert provider.last_stats.prompt_tokens < len(full)
    # What the cut read lacks: the prompt's start after the reused head (`def g(rows):` ...).
    assert common_prefix(engine.cached_tokens, full) < len(full) // 2
    refined = ModelRequest(ctx, max_tokens=4, temperature=0.0, refine=True)
    chunks = [c async for c in provider.stream(refined)]
    assert not any(c.meta and "prompt_cut" in c.meta for c in chunks)
    assert provider.last_stats.prompt_tokens == len(full)
    assert common_prefix(engine.cached_tokens, full) >= len(full) - 1


@pytest.mark.parametrize("feature", ["escalation", "next_edit"])
async def test_only_a_completion_is_cut_to_the_jump_budget(provider: LocalProvider, feature: str) -> None:
    """An escalation (the user asked for the fuller answer and waits) and a next edit are
    never refined, so a cut read would be their final answer: they read the whole prompt
    after a jump, whatever the budget, and say nothing of a cut."""
    here = "def f(parts):\n" + "\n".join(f"    item_{i} = parts[{i}]" for i in range(40)) + "\n    "
    there = "def g(rows):\n" + "\n".join(f"    row_{i} = rows[{i}] * {i}" for i in range(40)) + "\n    "
    await _complete(provider, here)
    provider.budget.budget_ms = 1.0  # a completion here would read only the floor's tokens
    ctx = PromptContext("python", "join.py", there, "")
    request = ModelRequest(ctx, max_tokens=4, temperature=0.0, feature=feature)  # type: ignore[arg-type]
    chunks = [c async for c in provider.stream(request)]
    assert not any(c.meta and "prompt_cut" in c.meta for c in chunks)
    template = resolve_template("auto", provider._path_name, provider._template)
    full = provider._engine.tokenize(render_completion(ctx, template, "").prompt)
    assert provider.last_stats.prompt_tokens == len(full)
    assert common_prefix(provider._engine.cached_tokens, full) >= len(full) - 1


async def test_a_rest_elsewhere_stops_a_generation_for_the_place_left(provider: LocalProvider) -> None:
    numbers = "".join(f"{i}\n" for i in range(1, 80))
    ctx = PromptContext("python", "join.py", f"# the numbers from 1 to 500, one per line\n{numbers}", "")
    long = provider.stream(ModelRequest(ctx, max_tokens=400, temperature=0.0))
    assert await long.__anext__() is not None
    job = provider._current
    assert job is not None
    far = "\n".join(f"    row_{i} = rows[{i}] * {i}" for i in range(30))
    elsewhere = PromptContext("python", "join.py", f"def g(rows):\n{far}\n    ", "")
    assert provider.prefill(elsewhere) is None  # an edit pause never stops a request
    here = PromptContext("python", "join.py", ctx.prefix + "80\n", "")
    assert provider.prefill(here, preempt=True) is None  # a rest where it generates: it goes on
    assert not job.cancel.is_set()
    running = provider.prefill(elsewhere, preempt=True)  # the cursor rests somewhere else
    assert running is not None and job.cancel.is_set()
    _ = [c async for c in long]  # the stream ends at its next token
    assert job.stats.stop_reason == "cancel"
    await asyncio.wait_for(running, 120)
