"""How many llama.cpp threads the embedded model uses: for generating, and for reading a
prompt, chosen per request from the cores idle right now."""

from __future__ import annotations

import os

from lsp_assist.config.schema import LocalConfig


def default_threads(cpus: int | None = None) -> tuple[int, int]:
    """(generation threads, prompt threads) when `local.threads` / `local.batch_threads` are 0.

    Measured on 2 cores (`benchmarks/local_latency.py --threads`, docs/benchmarks.md): generating with 1
    thread is as fast as with 2 on an idle machine (95 vs 98 tokens/s) and 3x faster with
    one core busy (93 vs 34: llama.cpp's threads spin-wait on each other); reading a prompt
    with 2 threads is 2x faster idle (418 vs 796 ms for 380 tokens) but 2x slower loaded
    (1,466 vs 791 ms). So: 1 generation thread, and prompt threads chosen per request by
    `prompt_threads` from the load average; above 4 a 270M model stops scaling.
    """
    n = cpus if cpus is not None else (os.cpu_count() or 2)
    return 1, max(1, min(4, n))


def _busy_cores() -> float:
    """Cores busy with other work right now: runnable tasks from /proc/loadavg (an instant
    count, minus the thread asking), else the 1-minute load average (macOS)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            running = int(fh.read().split()[3].split("/")[0])
        return float(max(0, running - 1))
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def prompt_threads(most: int, cpus: int | None = None, busy: float | None = None) -> int:
    """As many prompt threads as there are idle cores, from 1 to `most`: a spinning
    llama.cpp thread on a busy core slows all the others down."""
    n = cpus if cpus is not None else (os.cpu_count() or 2)
    load = _busy_cores() if busy is None else busy
    return max(1, min(most, int(n - load + 0.5)))


def configured_threads(local: LocalConfig) -> tuple[int, int]:
    """(generation, most prompt threads); configured values win over the defaults."""
    gen, batch = default_threads()
    if local.threads > 0:
        gen = local.threads
    if local.batch_threads > 0:
        batch = local.batch_threads
    return gen, batch
