"""`RatesKeeper`: each embedded engine's speed on this machine (`model_rates`), taken from
the per-machine cache, else estimated and then measured once the model has idled, and then
kept in line with what the model's own reads show (`observe_read`).

Why the last: the measurement waits for a quiet machine, and a machine busy from the start
(an editor opening beside a build, or this project's own benchmarks beside other work)
never gives one, so the code model's rewrite ran on the prior estimate, about twice its
real reading rate on two cores: prompts sized for 2 s of reading took 4, a warm-up's batch
took longer than the user read, and a key threw all of it away. A busy machine halves the
rate a quiet one measured, too. The batches and the rest's allowance follow the reads'
smoothed rate (`of`); the rewrite prompt's size follows it only when it leaves a band
around the rate that sized it (`shape_of`, `SHAPE_BAND`): a prompt whose shape changed
between the warm-up and the rest reads its whole window again, and on a loaded machine the
reads' rate wobbles between 16 and 33 tokens/s from one read to the next.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from lsp_assist.providers.local_shared import LocalSettings
from lsp_assist.providers.local_worker import ModelWorker
from lsp_assist.providers.model_rates import (
    QUIET_CORES,
    ModelRates,
    RatesCache,
    busy_cores,
    measure,
    model_id,
    prior_rates,
    rates_key,
)

log = logging.getLogger("lsp_assist.providers.local")

# A model is measured (`model_rates.measure`) once nothing has used it for this long.
MEASURE_IDLE_S = 2.0
MEASURE_TRIES = 30
# Reads of at least this many tokens tell the prompt rate (fewer are mostly the pass).
LIVE_MIN_TOKENS = 16
LIVE_SMOOTHING = 0.3  # weight of the newest read in the smoothed rate
# The rate that sizes the rewrite's prompt follows the smoothed one only when this far from
# it, either way (a 1.25x band moved it every 20-60 s on a loaded machine).
SHAPE_BAND = 1.5


class RatesKeeper:
    """`rates` by model name; `in_use(engine)` tells whether an engine is still loaded."""

    def __init__(self, settings: LocalSettings, worker: ModelWorker, in_use: Callable[[Any], bool]) -> None:
        self._settings = settings
        self._worker = worker
        self._in_use = in_use
        self._cache = RatesCache(settings.cache_dir)
        self.rates: dict[str, ModelRates] = {}
        self._measures: set[asyncio.Task[None]] = set()
        self._smoothed: dict[str, float] = {}  # prompt tokens/s of arithmetic, from reads
        self._shape: dict[str, float] = {}  # the rate that sizes the rewrite's prompt, once moved

    def _base(self, model: str) -> ModelRates:
        return self.rates.get(model) or prior_rates(1_000_000_000, self._settings.threads()[1])

    def of(self, model: str) -> ModelRates:
        """`model`'s measured (else estimated) rates, with the prompt rate its reads show
        (`observe_read`): what batches and the rest's allowance are sized from."""
        rates = self._base(model)
        seen = self._smoothed.get(model)
        return rates if seen is None else replace(rates, compute_tps=seen)

    def shape_of(self, model: str) -> ModelRates:
        """The rates the rewrite's prompt is sized from (`rewrite_prompt.shaped`): those of
        `of`, moved only out of `SHAPE_BAND` (see the module docstring)."""
        rates = self._base(model)
        shape = self._shape.get(model)
        return rates if shape is None else replace(rates, compute_tps=shape)

    def observe_read(self, model: str, tokens: int, seconds: float, batch: int) -> None:
        """`model` read `tokens` prompt tokens in decode calls of `batch` in `seconds` (a
        rewrite to its first token, or a whole warm-up read): its arithmetic rate, the passes
        over the weights taken out, smoothed (`of`); the prompt's size follows out of the
        band (`shape_of`). Call on the event loop."""
        if tokens < LIVE_MIN_TOKENS or seconds <= 0:
            return
        current = self.of(model)
        arithmetic_s = seconds - math.ceil(tokens / max(1, batch)) * current.rest_pass_s
        if arithmetic_s <= 0:
            return  # the passes alone took longer: the pass estimate is off, not the rate
        seen = tokens / arithmetic_s
        before = self._smoothed.get(model)
        smoothed = seen if before is None else (1 - LIVE_SMOOTHING) * before + LIVE_SMOOTHING * seen
        self._smoothed[model] = smoothed
        shape = self.shape_of(model).compute_tps
        if smoothed > shape * SHAPE_BAND or smoothed < shape / SHAPE_BAND:
            self._shape[model] = smoothed
            log.info(
                "local model %s: its reads show %.0f prompt tokens/s of arithmetic (was %.0f): "
                "the rewrite's prompt is sized to it",
                model,
                smoothed,
                shape,
            )

    def batch(self, model: str, budget_s: float) -> int:
        """The prompt batch `model` reads within `budget_s` at its rates (`of`)."""
        return self.of(model).batch_for(budget_s)

    def note_loaded(self, name: str, path: Path, engine: Any) -> None:
        """Take `engine`'s rates from the cache, else estimate them and measure it once the
        model has been idle for MEASURE_IDLE_S (never while a request runs)."""
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        most = self._settings.threads()[1]
        key = rates_key(model_id(name, size), most)
        cached = self._cache.get(key)
        self.rates[name] = cached or prior_rates(size or 1_000_000_000, most)
        if cached is None:
            task = asyncio.get_running_loop().create_task(self._measure_when_idle(name, engine, key))
            self._measures.add(task)
            task.add_done_callback(self._measures.discard)

    def cancel(self) -> None:
        for task in list(self._measures):
            task.cancel()

    def _measure(self, engine: Any, cancel: threading.Event) -> ModelRates | None:
        """`model_rates.measure` with the typing threads set: it times one generation
        thread and then every prompt thread (on the worker thread)."""
        gen, most = self._settings.threads()
        engine.set_threads(gen, most)
        return measure(engine, cancel)

    async def _measure_when_idle(self, name: str, engine: Any, key: str) -> None:
        """Measure `engine` on the worker thread as background work: any stream cancels it,
        and it is tried again after the next idle spell (MEASURE_TRIES at most)."""
        for _ in range(MEASURE_TRIES):
            await asyncio.sleep(MEASURE_IDLE_S)
            worker = self._worker
            if not worker.idle_for(MEASURE_IDLE_S) or worker.executor is None or not self._in_use(engine):
                continue
            # Other work on the cores (a build, a test run) would slow the figures that are
            # kept for good: measure only on a quiet machine.
            if await asyncio.to_thread(busy_cores) > QUIET_CORES:
                continue
            rates = await self._measure_once(engine, worker.executor)
            if rates is not None:
                self.rates[name] = rates
                self._smoothed.pop(name, None)  # a quiet measurement: the reads start afresh
                self._shape.pop(name, None)
                await asyncio.to_thread(self._cache.put, key, rates)
                log.info(
                    "local model %s measured: reads %.0f prompt tokens/s, writes %.1f tokens/s "
                    "(%.1f on every idle core)",
                    name,
                    rates.prompt_tps,
                    rates.gen_tps,
                    1.0 / rates.rest_pass_s,
                )
                return

    async def _measure_once(self, engine: Any, executor: Any) -> ModelRates | None:
        """One measurement on the worker thread, held as its background read."""
        from lsp_assist.providers.llama_engine import Job

        job = Job(tokens=[], max_tokens=0, temperature=0.0, emit=lambda _t: False)
        self._worker.background = job
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(executor, self._measure, engine, job.cancel)
        finally:
            self._worker.end_background(job)
