"""How many llama.cpp threads the embedded model uses: for generating, and for reading a
prompt, chosen per request from the cores idle right now."""

from __future__ import annotations

import os

from lsp_assist.config.schema import LocalConfig
from lsp_assist.providers.model_rates import ModelRates
from lsp_assist.providers.other_load import OtherLoad


def default_threads(cpus: int | None = None) -> tuple[int, int]:
    """(generation threads, prompt threads) when `local.threads` / `local.batch_threads` are 0.

    Measured on 2 cores (`benchmarks/local_latency.py --threads`, docs/benchmarks.md): generating with 1
    thread is as fast as with 2 on an idle machine (95 vs 98 tokens/s) and 3x faster with
    one core busy (93 vs 34: llama.cpp's threads spin-wait on each other); reading a prompt
    with 2 threads is 2x faster idle (418 vs 796 ms for 380 tokens) but 2x slower loaded
    (1,466 vs 791 ms). So: 1 generation thread, and prompt threads chosen per request by
    `prompt_threads` from the load average; above 4 a 270M model stops scaling. A machine
    where more threads write faster gets them per request (`typing_threads`).
    """
    n = cpus if cpus is not None else (os.cpu_count() or 2)
    return 1, max(1, min(4, n))


_OTHERS = OtherLoad()


def _busy_cores() -> float:
    """Cores busy with other work: `OtherLoad` on Linux; else the 1-minute load average
    (macOS), which counts this process too."""
    cores = _OTHERS.cores()
    if cores is not None:
        return cores
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def prompt_threads(most: int, cpus: int | None = None, busy: float | None = None) -> int:
    """As many prompt threads as there are cores other work leaves idle, from 1 to `most`:
    a spinning llama.cpp thread on a busy core slows all the others down."""
    n = cpus if cpus is not None else (os.cpu_count() or 2)
    load = _busy_cores() if busy is None else busy
    return max(1, min(most, int(n - load + 0.5)))


#: Typing writes on every idle core when this machine's measured rates show all threads
#: writing this much faster than one (`ModelRates.rest_gen_tps` against `gen_tps`).
ALL_CORES_GAIN = 1.2


def typing_threads(configured: int, idle: int, rates: ModelRates) -> int:
    """Generation threads for a typing request: `configured` (`local.threads`) when set;
    else the `idle` cores where this machine measured more threads writing faster, and one
    thread where it did not or has not measured yet.

    Why (2026-12-07, these 2 cores, Gemma 3 270M, weights not repacked): one thread writes
    25 tokens/s and two 45, so a jump's first line of ~9 tokens took ~300 ms to write. The
    machine the one-thread default was measured on wrote 95 and 98. `idle` counts only the
    cores other work leaves (`prompt_threads`): a thread on a busy core slows every other."""
    if configured > 0:
        return configured
    return idle if writes_faster_on_all(rates) else 1


def writes_faster_on_all(rates: ModelRates) -> bool:
    """This machine measured every thread writing at least ALL_CORES_GAIN times faster."""
    return rates.measured and rates.rest_gen_tps >= ALL_CORES_GAIN * rates.gen_tps


def typing_threads_line(configured: int, most: int, rates: ModelRates) -> str:
    """What `typing_threads` chooses on a machine with `most` idle cores, and why (`doctor`)."""
    if configured > 0:
        return f"{configured} thread(s): local.threads = {configured}"
    if not rates.measured:
        return "one thread until the model's rates are measured"
    every = f"{rates.rest_gen_tps:.1f} tokens/s on {most} threads, {rates.gen_tps:.1f} on one"
    if typing_threads(configured, most, rates) > 1:
        return f"every idle core, up to {most} ({every})"
    return f"one thread ({every}: no faster)"


def configured_threads(local: LocalConfig) -> tuple[int, int]:
    """(generation, most prompt threads); configured values win over the defaults."""
    gen, batch = default_threads()
    if local.threads > 0:
        gen = local.threads
    if local.batch_threads > 0:
        batch = local.batch_threads
    return gen, batch
