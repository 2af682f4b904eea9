"""`BackgroundReads`: prompt reads into the embedded model's KV caches while it idles.

A prefill reads the prompt of a place the user is about to type at (like llama.vim's
ring-buffer warm-up); a read-ahead reads the whole prompt after an answer came from one cut
to the jump budget; a warm-up reads the rewrite model's prompt for the same place. Each runs
on the worker thread in small batches, so a request arriving meanwhile waits for one batch,
and any request or newer read cancels it (`ModelWorker.stop_background`).
"""

from __future__ import annotations

import asyncio
import logging
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
from lsp_assist.providers.roles import BACKGROUND_BATCH_BUDGET_S
from lsp_assist.providers.strong_model import rewrite_context

stats_log = logging.getLogger("lsp_assist.local_model")

# Prompt tokens per decode call in background reads (prefill, read-ahead, a refinement): a
# request arriving meanwhile waits for one batch (~50 ms on two cores), not for 128 tokens.
BACKGROUND_BATCH = 16
# A prefill reads the jump budget's cut of a prompt at once and the whole prompt only after
# this much more idleness: a key typed meanwhile keeps the cut's seam and reads only itself.
FULL_READ_AFTER_S = 1.0

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
        self._warm_rewrite: Tokens | None = None  # the rewrite prompt to warm
        self.read_ahead_runs = 0  # full prompts read in the background after a cut one

    def prefill(self, context: PromptContext, *, preempt: bool = False) -> asyncio.Future[None] | None:
        """Read the prompt for `context` into the KV cache in the background, when the model
        is idle: the user has started editing a line far from the last prompt, or the cursor
        rests there (`pipeline/prefill.py`), so the request that follows finds its window
        already read.

        First the part a request would read within the jump budget (the cached head and the
        lines nearest the cursor, `fit_prompt`), at once: the first key there then reads only
        itself. The whole prompt follows after `FULL_READ_AFTER_S` more of idleness, so a
        key typed meanwhile does not find a half-read window. Any stream cancels the read at
        its next 16-token batch, keeping what was read; a newer prefill replaces it.

        `preempt` (a cursor rest): a stream still generating for another place (the user
        moved on) is stopped for it. Never waits; returns the running read, or None when a
        request runs (or the model is not loaded)."""
        engine, worker = self._loader.engine, self._worker
        if engine is None or worker.executor is None:
            return None
        template = self._loader.template
        prompt = render_completion(context, template, "").prompt
        running = worker.current
        if running is not None:
            if not preempt or same_place(worker.current_prompt, prompt):
                return None
            running.cancel.set()  # its request was answered; the rest of it is for a place left
            worker.current = None
        markers = MARKERS.get(template, ())
        worker.touch()
        refiner = self._refiner.engine
        if refiner is not None:  # after the typing model's read: the rewrite model's prompt
            rewrite = render_completion(rewrite_context(context), self._refiner.template, "").prompt
            refiner_markers = MARKERS.get(self._refiner.template, ())
            self._warm_rewrite = lambda: refiner.tokenize(rewrite, refiner_markers)
        return self.read(lambda: engine.tokenize(prompt, markers), "prefill", cut_first=True)

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
        batch = (
            self._rates.batch(self._refiner.name, BACKGROUND_BATCH_BUDGET_S) if strong else BACKGROUND_BATCH
        )
        from lsp_assist.providers.llama_engine import Job

        self._worker.stop_background()
        job = Job(tokens=[], max_tokens=0, temperature=0.0, emit=lambda _t: False)
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
        if not self._worker.end_background(job) or job.cancel.is_set():
            return
        whole = run.whole
        if whole:
            later = asyncio.get_running_loop().call_later
            self._worker.full_read = later(
                FULL_READ_AFTER_S, lambda: self.read(lambda: whole[0], "read-ahead")
            )
            return
        warm, self._warm_rewrite = self._warm_rewrite, None
        if warm is not None and not strong:
            # The typing model's window is read: warm the rewrite model's cache for the
            # same place, so a rest there reads only what changed (issue 36).
            self.read(warm, "rewrite warm-up", strong=True)


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
        # Small batches: a request waits for the running one (~50 ms at 16).
        n = engine.prefill(toks, job.cancel, batch=self.batch)
        stats_log.debug("local model: %s evaluated %d tokens", self.what, n)
