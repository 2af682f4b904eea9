"""The rewrite model's warm-up: a key pauses it without losing what it read, it resumes
once the model is free again, and the rewrite at the rest reads only what changed.

No model and no timing: `LlamaEngine`'s own bookkeeping runs over a stand-in for
llama.cpp that counts the tokens each decode call reads; tokens are characters.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from lsp_assist.context.templates import render_completion
from lsp_assist.domain import PromptContext
from lsp_assist.providers import local_prefill
from lsp_assist.providers.llama_abort import AbortWatch
from lsp_assist.providers.llama_engine import Job, LlamaEngine
from lsp_assist.providers.local_prefill import BackgroundReads
from lsp_assist.providers.local_shared import CutPrompts
from lsp_assist.providers.local_worker import ModelWorker
from lsp_assist.providers.model_rates import ModelRates
from lsp_assist.providers.prompt_budget import PromptBudget
from lsp_assist.providers.rewrite_prompt import render, rewrite_context

BATCH = 8


class _Batch:
    def __init__(self) -> None:
        self.n_tokens = 0
        self.token = [0] * 512
        self.pos = [0] * 512
        self.n_seq_id = [0] * 512
        self.seq_id = [[0] for _ in range(512)]
        self.logits = [False] * 512


class _Llama:
    """llama.cpp's calls `LlamaEngine` makes while reading, counting what each decode reads;
    `after_decode` runs on the worker thread after each call (a key arriving mid-read)."""

    def __init__(self) -> None:
        self.read = 0
        self.after_decode: Callable[[], None] = lambda: None

    def llama_decode(self, _ctx: Any, batch: _Batch) -> int:
        self.read += batch.n_tokens
        self.after_decode()
        return 0

    def llama_get_memory(self, _ctx: Any) -> None:
        return None

    def llama_memory_seq_rm(self, *_args: Any) -> None:
        return None

    def llama_memory_clear(self, *_args: Any) -> None:
        return None

    def llama_set_abort_callback(self, *_args: Any) -> None:
        return None

    def ggml_abort_callback(self, *args: Any) -> Any:
        return args[0] if args else None


def _engine() -> tuple[LlamaEngine, _Llama]:
    """A `LlamaEngine` without a model: its KV-cache bookkeeping over `_Llama`."""
    engine = object.__new__(LlamaEngine)
    lib = _Llama()
    engine._lib = lib
    engine._ctx = None
    engine._batch = _Batch()
    engine._tokens = []
    engine._abort = AbortWatch(lib, None)
    engine.tokenize = lambda text, markers=(): [ord(c) for c in text]  # type: ignore[method-assign]
    engine._choose = lambda *_a, **_k: 0  # type: ignore[method-assign]
    engine.n_ctx = 1 << 20
    return engine, lib


FAST = ModelRates(gen_tps=100.0, compute_tps=1e6)


def _ignore(*_args: object) -> None:
    """The rates stand-in's `observe_read`: these tests read at no set speed."""


def _rates() -> Any:
    """A `RatesKeeper` stand-in: rates fast enough that the rewrite's prefix is never
    shortened here, batches of BATCH."""
    fast = lambda _name: FAST  # noqa: E731
    return SimpleNamespace(batch=lambda _name, _budget: BATCH, of=fast, shape_of=fast, observe_read=_ignore)


def _context(typed: str = "") -> PromptContext:
    head = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(12))
    return PromptContext(
        language="python",
        path="m.py",
        prefix=head + "    " + typed,
        suffix="\n\nclass C:\n    pass\n" * 4,
    )


def _rewrite_tokens(engine: LlamaEngine, ctx: PromptContext) -> list[int]:
    return engine.tokenize(render(rewrite_context(ctx), "qwen").text)


def test_a_cancelled_read_keeps_its_tokens_and_the_next_reads_only_the_rest() -> None:
    engine, lib = _engine()
    tokens = _rewrite_tokens(engine, _context())
    cancel = threading.Event()
    lib.after_decode = lambda: cancel.set() if lib.read >= 2 * BATCH else None
    assert engine.prefill(tokens, cancel, batch=BATCH) == 2 * BATCH
    assert engine.cached_tokens == tokens[: 2 * BATCH]  # kept, not reset
    lib.after_decode = lambda: None
    assert engine.prefill(tokens, threading.Event(), batch=BATCH) == len(tokens) - 1 - 2 * BATCH
    assert lib.read == len(tokens) - 1  # no token read twice


def test_a_rewrite_after_a_warm_up_reads_only_the_typed_characters() -> None:
    """The typed part of the line comes after the middle marker (`rewrite_prompt.render`):
    the code after the cursor, read by the warm-up before the user typed, is not read again."""
    engine, lib = _engine()
    engine.prefill(_rewrite_tokens(engine, _context()), threading.Event(), batch=BATCH)
    warmed = lib.read
    ctx = _context("return f3(")
    rewrite = Job(tokens=_rewrite_tokens(engine, ctx), max_tokens=1, temperature=0.0, emit=lambda _t: True)
    assert engine._read_prompt(rewrite) is not None
    # The warm-up's last token (a read leaves it for the request that writes), the line's
    # indentation (left to the model while nothing else was typed) and the keys.
    new = 1 + len("    return f3(")
    assert rewrite.stats.evaluated_tokens == new
    assert lib.read == warmed + new
    assert rewrite.stats.evaluated_tokens < len(rewrite_context(ctx).suffix)  # no suffix read again


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(local_prefill, "RESUME_AFTER_S", 0.0)
    typing, _ = _engine()
    refiner, lib = _engine()
    worker = ModelWorker()
    worker.start()
    parts = SimpleNamespace(
        worker=worker,
        refiner=refiner,
        lib=lib,
        reads=BackgroundReads(
            worker,
            SimpleNamespace(engine=typing, template="none"),  # type: ignore[arg-type]
            SimpleNamespace(engine=refiner, template="qwen", name="coder"),  # type: ignore[arg-type]
            # Rates fast enough that the rewrite's prefix is never shortened here.
            _rates(),
            CutPrompts(PromptBudget(budget_ms=0.0)),
        ),
    )
    yield parts
    assert worker.executor is not None
    worker.executor.shutdown(wait=True)


async def test_a_warm_up_a_key_stops_resumes_after_its_request_and_reads_nothing_twice(reads: Any) -> None:
    worker, refiner, lib = reads.worker, reads.refiner, reads.lib
    whole = _rewrite_tokens(refiner, _context())
    paused, go = threading.Event(), threading.Event()

    def key_arrives() -> None:  # on the worker thread, after two batches of the warm-up
        if lib.read == 2 * BATCH:
            paused.set()
            go.wait(5)

    lib.after_decode = key_arrives
    reads.reads.prefill(_context())
    await asyncio.get_running_loop().run_in_executor(None, paused.wait, 5)
    key = Job(tokens=[], max_tokens=1, temperature=0.0, emit=lambda _t: True)
    worker.take(key, "the key's prompt")
    worker.stop_background()  # what a key's stream does (`LocalStreamer.stream`)
    go.set()
    await asyncio.get_running_loop().run_in_executor(worker.executor, lambda: None)  # the read ended
    assert refiner.cached_tokens == whole[: 2 * BATCH]  # what it read stays in the cache
    worker.release(key)
    reads.reads.resume()  # the key's stream ended: the model is free
    await _until(lambda: len(refiner.cached_tokens) == len(whole) - 1 and not worker.busy)
    assert refiner.cached_tokens == whole[:-1]
    assert lib.read == len(whole) - 1  # the resumed read read only what it lacked
    assert reads.reads.warm_runs == 2


async def test_a_rest_while_the_last_key_is_answered_warms_once_the_answer_ends(reads: Any) -> None:
    worker, refiner = reads.worker, reads.refiner
    key = Job(tokens=[], max_tokens=1, temperature=0.0, emit=lambda _t: True)
    typing_prompt = render_completion(_context(), "none", "").prompt
    worker.take(key, typing_prompt)
    assert reads.reads.prefill(_context(), preempt=True) is None  # the answer runs on
    assert not key.cancel.is_set() and refiner.cached_tokens == []
    worker.release(key)
    reads.reads.resume()
    whole = _rewrite_tokens(refiner, _context())
    await _until(lambda: len(refiner.cached_tokens) == len(whole) - 1 and not worker.busy)


async def test_the_typing_models_whole_prompt_is_read_before_the_rewrites_warm_up() -> None:
    """At a cursor rest the typing model reads the jump budget's cut, then its whole prompt,
    then the rewrite model warms: the keys typed there and the first ghost text after the
    rest see the whole window, not the cut (the warm-up first left them the cut)."""
    typing, typing_lib = _engine()
    refiner, refiner_lib = _engine()
    order: list[str] = []
    typing_lib.after_decode = lambda: order.append("typing")
    refiner_lib.after_decode = lambda: order.append("rewrite")
    worker = ModelWorker()
    worker.start()
    reads = BackgroundReads(
        worker,
        SimpleNamespace(engine=typing, template="none"),  # type: ignore[arg-type]
        SimpleNamespace(engine=refiner, template="qwen", name="coder"),  # type: ignore[arg-type]
        _rates(),
        CutPrompts(PromptBudget(fixed_tokens=40)),  # the jump budget: a cut of 40 new tokens
    )
    try:
        typing_whole = typing.tokenize(render_completion(_context(), "none", "").prompt)
        rewrite_whole = _rewrite_tokens(refiner, _context())
        assert len(typing_whole) > 40 + 1  # the prefill cuts it
        reads.prefill(_context())
        await _until(lambda: len(refiner.cached_tokens) == len(rewrite_whole) - 1 and not worker.busy)
        assert typing.cached_tokens == typing_whole[:-1]  # the whole window, not the cut
        first_rewrite = order.index("rewrite")
        assert "typing" not in order[first_rewrite:]  # the whole prompt was read before the warm-up
        assert typing_lib.read > len(typing_whole) - 1  # the cut first, then the whole
    finally:
        assert worker.executor is not None
        worker.executor.shutdown(wait=True)


def test_an_escalation_on_the_rewrite_model_reads_what_its_warm_up_read() -> None:
    """An escalation runs on the rewrite model with the prompt its warm-up reads: after a
    warm-up at the place, only the prompt's last token is read (the whole quality window
    was a cold read of 10-20 s on two cores)."""
    from lsp_assist.domain import ModelRequest
    from lsp_assist.providers.local_stream import LocalStreamer

    engine, lib = _engine()
    parts = SimpleNamespace(
        loader=SimpleNamespace(path_name="gemma.gguf", template="none", engine=None),
        refiner=SimpleNamespace(engine=engine, template="qwen", name="coder"),
        rates=_rates(),
    )
    streamer = LocalStreamer(parts, lambda _r: None)  # type: ignore[arg-type]
    ctx = _context("return f3(")
    plan = streamer.plan(ModelRequest(ctx, max_tokens=64, temperature=0.0, feature="escalation"), strong=True)
    assert plan.on_refiner and plan.engine is engine
    assert plan.prompt == render(rewrite_context(ctx), "qwen").text
    engine.prefill(engine.tokenize(plan.prompt), threading.Event(), batch=BATCH)  # the warm-up
    warmed = lib.read
    job = Job(tokens=engine.tokenize(plan.prompt), max_tokens=1, temperature=0.0, emit=lambda _t: True)
    assert engine._read_prompt(job) is not None
    assert job.stats.evaluated_tokens == 1 and lib.read == warmed + 1


def test_a_rewrite_at_the_rest_reads_what_is_left_in_one_decode_call() -> None:
    """The rest's read goes in the largest batches a key can stop midway, not in the
    warm-up's (sized to what a key throws away): each decode call costs a pass over the
    weights, ~0.1 s of the code model on two cores."""
    from lsp_assist.domain import ModelRequest
    from lsp_assist.providers.local_prefill import ABORTABLE_MAX_BATCH
    from lsp_assist.providers.local_stream import LocalStreamer

    engine, lib = _engine()
    sizes: list[int] = []
    lib.after_decode = lambda: sizes.append(engine._batch.n_tokens)
    parts = SimpleNamespace(
        loader=SimpleNamespace(path_name="gemma.gguf", template="none", engine=None),
        refiner=SimpleNamespace(engine=engine, template="qwen", name="coder"),
        rates=_rates(),  # the warm-up's batches: BATCH
    )
    streamer = LocalStreamer(parts, lambda _r: None)  # type: ignore[arg-type]
    ctx = _context("return f3(")
    plan = streamer.plan(ModelRequest(ctx, max_tokens=8, temperature=0.0, refine=True), strong=True)
    assert plan.prompt_batch == ABORTABLE_MAX_BATCH > BATCH
    tokens = engine.tokenize(plan.prompt)
    engine.prefill(tokens[: len(tokens) - 40], threading.Event(), batch=BATCH)  # a warm-up cut short
    sizes.clear()
    job = Job(
        tokens=tokens, max_tokens=1, temperature=0.0, emit=lambda _t: True, prompt_batch=plan.prompt_batch
    )
    assert engine._read_prompt(job) is not None
    assert sizes[0] == 40  # the 40 tokens left, in one call
