"""`BackgroundReads`: prompt reads into the embedded model's KV caches while it idles.

A prefill reads the prompt of a place the user is about to type at (like llama.vim's
ring-buffer warm-up); a read-ahead reads the whole prompt after an answer came from one cut
to the jump budget; a warm-up reads the rewrite model's prompt for the same place. Each runs
on the worker thread, and any request or newer read stops it midway through a batch
(`ModelWorker.stop_background`, llama.cpp's abort callback), keeping the batches before.

The rewrite model's warm-up is the long read (the code model reads ~100 tokens/s on two
cores: a 370-token prompt is 3-5 s), so it is never dropped: a key stops it between two
batches, the tokens it read stay in that model's KV cache (`LlamaEngine.prefill` keeps each
batch it decoded), and it resumes once the model has idled `RESUME_AFTER_S` after the key's
request, reading only what it still lacks. It runs after the typing model's whole prompt
of a place (~0.5 s on a quiet machine, 1.1-1.8 s on loaded cores): the keys typed there and
the first ghost text after the rest see the whole window, where reading the warm-up first
left the typing model the jump budget's cut (40-55 tokens) until the user rested. Measured
twice (2026-12-06 and 12-07, `quality_over_time`), the warm-up first made the first ghost
text after typing worse and did not bring the rewrite sooner (issue 36).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lsp_assist.context.templates import MARKERS, render_completion
from lsp_assist.domain import PromptContext
from lsp_assist.providers.local_loader import ModelLoader
from lsp_assist.providers.local_rates import RatesKeeper
from lsp_assist.providers.local_refine import RefineModel
from lsp_assist.providers.local_shared import CutPrompts
from lsp_assist.providers.local_worker import ModelWorker
from lsp_assist.providers.prompt_budget import fit_prompt, same_place
from lsp_assist.providers.rewrite_prompt import render as render_rewrite
from lsp_assist.providers.rewrite_prompt import shaped

stats_log = logging.getLogger("lsp_assist.local_model")

# Prompt tokens per decode call of a refinement on the typing model: a request arriving
# meanwhile waits for one batch (~50 ms on two cores), not for 128 tokens.
BACKGROUND_BATCH = 16
# The typing model's background reads (prefill, read-ahead) are aborted midway through a
# batch by a request, like the rewrite model's: a key waits for no batch, so they read in
# batches sized for throughput. Gemma 3 270M on two cores, 383 tokens: 16 a batch 1.3-1.9 s,
# 64 1.0-1.5 s; a key throws away at most one batch (~0.2 s of reading).
TYPING_READ_BATCH = 64
# A prefill reads the jump budget's cut of a prompt at once and the whole prompt only after
# this much more idleness: a key typed meanwhile keeps the cut's seam and reads only itself.
FULL_READ_AFTER_S = 1.0
# A warm-up stopped by a request resumes once the model has idled this long after it: keys
# typed at speed (one every 80-200 ms, each request running until the next key) never
# find a batch of it in their way; a pause in typing does.
RESUME_AFTER_S = 0.15
# The rewrite model's reads (its warm-up, the rewrite itself) are aborted midway through a
# batch by a key (`LlamaEngine.prefill(abortable=True)`): a key waits for no batch, so the
# batch is sized for throughput, what a key throws away of it bounded by this. The code
# model on two cores: one decode call is ~0.1 s of passes over the weights whatever its
# size (4 tokens 0.19 s, 16 0.30 s, 32 0.41 s, 64 0.63 s, 128 1.1 s: 21, 54, 78, 101 and
# 115 tokens/s). A key costs the batch it stops (read again later), never a wait: at most
# ABORTABLE_MAX_BATCH, so a key throws away at most ~0.6 s of reading.
ABORTABLE_BATCH_BUDGET_S = 0.7
# The typing model's whole prompt of a place, read after its cut and before the rewrite
# model's warm-up (`_after_read`).
WHOLE_FIRST = "whole prompt"
ABORTABLE_MAX_BATCH = 64


def abortable_batch(rates: RatesKeeper, model: str) -> int:
    """The prompt batch of the rewrite model's abortable reads (see above)."""
    return min(ABORTABLE_MAX_BATCH, rates.batch(model, ABORTABLE_BATCH_BUDGET_S))


Tokens = Callable[[], list[int]]


class BackgroundReads:
    """Prefill, read-ahead and the rewrite model's warm-up (see module docstring)."""

    def __init__(
        self,
        worker: ModelWorker,
        loader: ModelLoader,
        refiner: RefineModel,
        rates: RatesKeeper,
        cuts: CutPrompts,
    ) -> None:
        self._worker = worker
        self._loader = loader
        self._refiner = refiner
        self._rates = rates
        self._cuts = cuts
        # The rewrite prompt to warm: kept until a warm-up has read it to its end, or a
        # newer place replaces it (a key only pauses it).
        self._warm_rewrite: Tokens | None = None
        self._rest_here = False  # a rest came while a request ran at its place
        self.warm_runs = 0  # rewrite warm-up reads started (a resumed one counts again)
        self.read_ahead_runs = 0  # full prompts read in the background after a cut one

    def prefill(self, context: PromptContext, *, preempt: bool = False) -> asyncio.Future[None] | None:
        """Read the prompt for `context` into the KV cache in the background, when the model
        is idle: the user has started editing a line far from the last prompt, or the cursor
        rests there (`pipeline/prefill.py`), so the request that follows finds its window
        already read.

        First the part a request would read within the jump budget (the cached head and the
        lines nearest the cursor, `fit_prompt`), at once: the first key there then reads only
        itself. With a rewrite model, the whole prompt follows at once and that model's warm-up
        for the place after it; else the whole prompt follows after `FULL_READ_AFTER_S` more
        of idleness, so a key typed meanwhile does not find a half-read window. Any stream
        cancels the read at its next batch, keeping what was read; a newer prefill replaces
        it.

        `preempt` (a cursor rest): a stream still generating for another place (the user
        moved on) is stopped for it. Never waits; returns the running read, or None when a
        request runs (its end resumes the rewrite's warm-up) or the model is not loaded."""
        engine, worker = self._loader.engine, self._worker
        if engine is None or worker.executor is None:
            return None
        template = self._loader.template
        prompt = render_completion(context, template, "").prompt
        refiner = self._refiner.engine
        if refiner is not None:  # the rewrite model's prompt for the same place: warmed after
            rewrite_ctx = shaped(context, self._rates.shape_of(self._refiner.name))
            rewrite = render_rewrite(rewrite_ctx, self._refiner.template).text
            refiner_markers = MARKERS.get(self._refiner.template, ())
            self._warm_rewrite = lambda: refiner.tokenize(rewrite, refiner_markers)
        self._rest_here = False
        running = worker.current
        if running is not None:
            # The warm-up waits for that request (`resume`), unless the user left its place.
            if not preempt:
                return None
            if same_place(worker.current_prompt, prompt):
                # The user rests where the last key's answer is still written: the rewrite's
                # read starts as soon as it ends, not after a pause.
                self._rest_here = True
                return None
            running.cancel.set()  # its request was answered; the rest of it is for a place left
            worker.current = None
        markers = MARKERS.get(template, ())
        worker.touch()
        return self.read(lambda: engine.tokenize(prompt, markers), "prefill", cut_first=True)

    def resume(self) -> None:
        """A request ended and the model is free: a rewrite warm-up it stopped resumes after
        `RESUME_AFTER_S` more of idleness (any request or read cancels the wait), at once
        when the user rested at its place while it ran."""
        worker = self._worker
        at_once, self._rest_here = self._rest_here, False
        if self._warm_rewrite is None or self._refiner.engine is None or worker.busy:
            return
        delay = 0.0 if at_once else RESUME_AFTER_S
        worker.full_read = asyncio.get_running_loop().call_later(delay, self._resume_now)

    def _resume_now(self) -> None:
        worker, warm = self._worker, self._warm_rewrite
        worker.full_read = None
        if warm is not None and worker.current is None and worker.background is None:
            self._warm(warm)

    def _warm(self, warm: Tokens) -> None:
        self.warm_runs += 1
        self.read(warm, "rewrite warm-up", strong=True)

    def read_ahead(self, tokens: list[int]) -> None:
        """Read the whole prompt whose cut an answer came from: the next key finds it."""
        self.read_ahead_runs += 1
        self.read(lambda: tokens, "read-ahead")

    def read(
        self, tokens: Tokens, what: str, *, cut_first: bool = False, strong: bool = False
    ) -> asyncio.Future[None] | None:
        """Queue a prompt read on the model's thread; cancelled by the next stream or read.
        `cut_first`: read the budget's cut of it now, the whole of it after a further pause.
        `strong`: into the rewrite model's cache (the last read of an idle spell)."""
        engine = self._refiner.engine if strong else self._loader.engine
        executor = self._worker.executor
        if engine is None or executor is None:
            return None
        batch = abortable_batch(self._rates, self._refiner.name) if strong else TYPING_READ_BATCH
        from lsp_assist.providers.llama_engine import Job

        self._worker.stop_background()
        job = Job(tokens=[], max_tokens=0, temperature=0.0, emit=lambda _t: False, keeps_batch=strong)
        self._worker.background = job
        loop = asyncio.get_running_loop()
        run = _Read(job, engine, tokens, what, batch, cut_first)

        def work() -> None:
            try:
                run.on_thread(self._cuts)
            finally:
                loop.call_soon_threadsafe(self._after_read, run, strong)

        fut = loop.run_in_executor(executor, work)
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        return fut

    def _after_read(self, run: _Read, strong: bool) -> None:
        """On the loop, once a read ended: its follow-up when nothing cancelled it."""
        job = run.job
        if not self._worker.end_background(job) or job.cancel.is_set() or job.settle.is_set():
            return  # a warm-up stopped by a request stays pending: `resume` restarts it
        if strong:
            if run.tokens is self._warm_rewrite:
                self._warm_rewrite = None  # read to its end
            self._rates.observe_read(self._refiner.name, run.evaluated, run.seconds, run.batch)
            return
        whole = run.whole
        warm = self._warm_rewrite
        if warm is not None and self._refiner.engine is not None:
            if run.what == "prefill" and whole:
                # The typing model's whole prompt first (~0.5 s): every key typed there, and
                # the first ghost text after the rest, then see the whole window, not the
                # jump budget's cut; the rewrite model's warm-up follows it.
                self.read(lambda: whole[0], WHOLE_FIRST)
            elif run.what in ("prefill", WHOLE_FIRST):
                # The typing model's window is read: warm the rewrite model's cache for the
                # same place, the long read, so a rest there reads only what changed.
                self._warm(warm)
            else:  # a read-ahead after a key's answer: more keys may follow
                self.resume()
            return
        if whole:
            later = asyncio.get_running_loop().call_later
            self._worker.full_read = later(
                FULL_READ_AFTER_S, lambda: self.read(lambda: whole[0], "read-ahead")
            )


@dataclass
class _Read:
    """One background read: `on_thread` reads `tokens()` (or their cut) into `engine`."""

    job: Any
    engine: Any
    tokens: Tokens
    what: str
    batch: int
    cut_first: bool
    whole: list[list[int]] = field(default_factory=list)  # the whole prompt, when only its cut was read
    evaluated: int = 0  # tokens read, and in how long (`RatesKeeper.observe_read`)
    seconds: float = 0.0

    def on_thread(self, cuts: CutPrompts) -> None:
        job, engine = self.job, self.engine
        if job.cancel.is_set():
            return
        toks = self.tokens()
        if self.cut_first:
            cut, seam = fit_prompt(toks, engine.cached_tokens, cuts.budget.allowed_new(), cuts.line_enders)
            if seam is not None:
                self.whole.append(toks)
                toks = cut
                cuts.seam = seam  # the first key there keeps this seam: it reads itself
        # A request stops the read midway through a batch, keeping the batches before it.
        from lsp_assist.providers.llama_engine import common_prefix

        job.todo = max(0, len(toks) - 1 - common_prefix(engine.cached_tokens, toks))
        t0 = time.perf_counter()
        n = engine.prefill(toks, job.cancel, batch=self.batch, abortable=True, settle=job.settle)
        self.evaluated, self.seconds = n, time.perf_counter() - t0
        stats_log.debug("local model: %s evaluated %d tokens", self.what, n)
