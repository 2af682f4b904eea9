"""Measure the installed local models that have no measured rates yet (`lsp-assist doctor`).

The server measures a model only once it has loaded it for a role and the model sits idle
(`LocalProvider`), so a model no role has used yet keeps its estimated rates. `doctor`
is where a user asks what this machine can do: it loads each unmeasured model for a
moment (~1.5 s for the 1.1 GB code model), times it with `model_rates.measure` and keeps
the figures, so the next server start assigns roles from measured speed. Only on a quiet
machine: figures taken beside a build would be kept as this machine's speed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

from lsp_assist.config.schema import LocalConfig
from lsp_assist.providers.model_rates import (
    QUIET_CORES,
    ModelRates,
    RatesCache,
    busy_cores,
    measure,
    model_id,
    rates_key,
)
from lsp_assist.providers.roles import Candidate, prompt_threads_for

log = logging.getLogger(__name__)

#: A context just large enough for the measurement's prompt (`model_rates.MEASURE_BATCH`).
PROBE_CTX = 256


def _probe(path: Path, local: LocalConfig) -> ModelRates | None:
    from lsp_assist.providers.llama_engine import LlamaEngine

    threads = local.threads if local.threads > 0 else 1
    engine = LlamaEngine(
        path, n_ctx=PROBE_CTX, threads=threads, batch_threads=prompt_threads_for(local), repack=False
    )
    try:
        return measure(engine, threading.Event())
    finally:
        engine.close()


async def measure_missing(
    candidates: list[Candidate], local: LocalConfig, cache_dir: Path, rates: RatesCache
) -> dict[str, str]:
    """Measure each candidate whose rates are estimated; {name: problem} for those that
    could not be (not installed properly, failed to load). Runs off the event loop."""
    from lsp_assist.providers.models import resolve_model

    problems: dict[str, str] = {}
    threads = prompt_threads_for(local)
    for cand in candidates:
        if cand.rates.measured:
            continue
        busy = await asyncio.to_thread(busy_cores, 1.0)
        if busy > QUIET_CORES:
            # Figures taken beside other work would be kept as this machine's speed.
            problems[cand.name] = f"not measured: other work keeps {busy:.1f} cores busy; try again later"
            continue
        try:
            path = await asyncio.to_thread(resolve_model, cand.name, cache_dir)
            measured = await asyncio.to_thread(_probe, path, local)
        except Exception as exc:  # a broken model file must not stop the report
            problems[cand.name] = f"{type(exc).__name__}: {exc}"
            continue
        if measured is None:
            problems[cand.name] = "not measured: cut short, or other work ran meanwhile; try again later"
            continue
        size = path.stat().st_size
        name = cand.name if not cand.name.endswith(".gguf") else str(path)
        await asyncio.to_thread(rates.put, rates_key(model_id(name, size), threads), measured)
    return problems


__all__ = ["PROBE_CTX", "measure_missing"]
