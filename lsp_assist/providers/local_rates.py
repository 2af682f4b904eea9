"""`RatesKeeper`: each embedded engine's speed on this machine (`model_rates`), taken from
the per-machine cache, else estimated and then measured once the model has idled."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
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


class RatesKeeper:
    """`rates` by model name; `in_use(engine)` tells whether an engine is still loaded."""

    def __init__(self, settings: LocalSettings, worker: ModelWorker, in_use: Callable[[Any], bool]) -> None:
        self._settings = settings
        self._worker = worker
        self._in_use = in_use
        self._cache = RatesCache(settings.cache_dir)
        self.rates: dict[str, ModelRates] = {}
        self._measures: set[asyncio.Task[None]] = set()

    def of(self, model: str) -> ModelRates:
        """`model`'s measured (else estimated) rates."""
        return self.rates.get(model) or prior_rates(1_000_000_000, self._settings.threads()[1])

    def batch(self, model: str, budget_s: float) -> int:
        """The prompt batch `model` reads within `budget_s` at its measured (else estimated) rates."""
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
                await asyncio.to_thread(self._cache.put, key, rates)
                log.info(
                    "local model %s measured: reads %.0f prompt tokens/s, writes %.1f tokens/s",
                    name,
                    rates.prompt_tps,
                    rates.gen_tps,
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
