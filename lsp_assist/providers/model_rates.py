"""How fast each local model reads and writes on this machine: measured once, then cached.

A decode call of `n` tokens costs about one pass over the weights (memory-bound: the time
of one generated token) plus `n` tokens of arithmetic (compute-bound). Two figures give the
cost of any read, in batches of any size, and of any answer:

    one token written        = 1 / gen_tps                (the pass over the weights)
    a batch of n prompt tokens = 1 / gen_tps + n / compute_tps

On two cores Gemma 3 270M measures ~53 tokens/s written and ~660 read per second of
arithmetic; Qwen2.5-Coder-1.5B ~14 and ~108. So the coder reading 48 tokens in batches of 4
spends 12 passes (0.85 s) on the weights, in batches of 12 four (0.28 s): the batch size is
chosen from these rates (`batch_for`), not guessed.

`measure` times one engine on its own worker thread (a 32-token batch and 8 single-token
decodes: ~0.5 s for the coder, and a request arriving meanwhile waits for one step);
`RatesCache` keeps the figures per model file, thread count and CPU under the cache dir, so
each machine measures each model once, when nothing else keeps its cores busy (`busy_cores`):
a measurement taken beside a build or a test run would be kept as this machine's speed.
Until then `prior_rates` estimates them from the file's size and the cores (within ~25% of
the measured figures above).
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import platform
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lsp_assist.providers.other_load import OtherLoad

log = logging.getLogger(__name__)

RATES_FILE = "model-rates.json"
#: Bytes of weights one thread streams per second while generating (13-16 GB/s measured on
#: two cores for both models: generation is bound by memory, not by the core count).
PRIOR_BANDWIDTH = 14e9
#: Prompt tokens per second of arithmetic, per thread, times the file's size in bytes (Gemma
#: 83e9, the coder 60e9 on two cores: between the two).
PRIOR_COMPUTE = 70e9
#: What one measurement reads and writes (`measure`).
MEASURE_BATCH = 32
MEASURE_WRITES = 8
#: Batches are never smaller (a pass over the weights per 1-3 tokens wastes most of the
#: read) nor larger (the prompt batch of a request).
MIN_BATCH, MAX_BATCH = 4, 128


@dataclass(frozen=True)
class ModelRates:
    """A model's speed on this machine (see the module docstring for the cost model)."""

    gen_tps: float  # tokens written per second (one pass over the weights each)
    compute_tps: float  # prompt tokens per second of arithmetic, passes over the weights aside
    measured: bool = False  # False: `prior_rates`' estimate
    # Tokens written per second with every prompt thread generating: the rewrite and the
    # escalation run while the user rests or waits, so they take the idle cores (0: unknown,
    # as `gen_tps`). Typing writes so too where it is faster (`local_threads.typing_threads`).
    rest_gen_tps: float = 0.0

    @property
    def pass_s(self) -> float:
        """Seconds of one decode call's pass over the weights (one generation thread)."""
        return 1.0 / self.gen_tps

    @property
    def rest_pass_s(self) -> float:
        """The same with every prompt thread (a prompt batch's pass; a write at rest)."""
        return 1.0 / (self.rest_gen_tps or self.gen_tps)

    def read_s(self, tokens: int, batch: int = MAX_BATCH) -> float:
        """Seconds to read `tokens` prompt tokens in batches of `batch`."""
        if tokens <= 0:
            return 0.0
        return math.ceil(tokens / max(1, batch)) * self.rest_pass_s + tokens / self.compute_tps

    def write_s(self, tokens: int, *, rest: bool = False) -> float:
        """Seconds to write `tokens` tokens (`rest`: with every idle core)."""
        return max(0, tokens) * (self.rest_pass_s if rest else self.pass_s)

    def readable(self, budget_s: float, batch: int = MAX_BATCH) -> int:
        """Prompt tokens read within `budget_s` in batches of `batch` (`read_s` inverted)."""
        per_token = self.rest_pass_s / max(1, batch) + 1.0 / self.compute_tps
        return max(0, int(budget_s / per_token))

    @property
    def prompt_tps(self) -> float:
        """Prompt tokens per second in full batches (what `llama-bench` calls pp)."""
        return MAX_BATCH / self.read_s(MAX_BATCH)

    def batch_for(self, budget_s: float) -> int:
        """The largest prompt batch one decode call reads within `budget_s` (the longest a
        key typed meanwhile may wait for it), between MIN_BATCH and MAX_BATCH."""
        room = (budget_s - self.rest_pass_s) * self.compute_tps
        return max(MIN_BATCH, min(MAX_BATCH, int(room)))


#: A measurement is kept only when other work used at most this many cores meanwhile.
QUIET_CORES = 0.3


def busy_cores(interval_s: float = 0.3) -> float:
    """Cores busy over `interval_s` (all processes; /proc/stat), else the 1-minute load
    average. Blocks for `interval_s`: call it off the event loop."""

    def sample() -> tuple[int, int] | None:
        try:
            with open("/proc/stat", encoding="ascii") as fh:
                fields = [int(x) for x in fh.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields[:8]), idle

    first = sample()
    if first is None:
        try:
            return os.getloadavg()[0]
        except OSError:
            return 0.0
    time.sleep(interval_s)
    second = sample()
    if second is None or second[0] <= first[0]:
        return 0.0
    total, idle = second[0] - first[0], second[1] - first[1]
    return (os.cpu_count() or 1) * (total - idle) / total


def prior_rates(file_bytes: int, threads: int) -> ModelRates:
    """An estimate before any measurement, from the weights' size and the prompt threads."""
    size = max(1, file_bytes)
    return ModelRates(PRIOR_BANDWIDTH / size, PRIOR_COMPUTE * max(1, threads) / size, measured=False)


def cpu_name() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what `platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def model_id(name: str, file_bytes: int = 0) -> str:
    """What identifies a model's file: a built-in's name (its package pins the file), or a
    GGUF file's name and size."""
    key = name.strip().lower()
    key = {"qwen-coder": "qwen2.5-coder-1.5b", "gemma": "gemma3-270m", "gemma3": "gemma3-270m"}.get(key, key)
    if key.endswith(".gguf"):
        return f"{Path(key).name}:{file_bytes}"
    return key


def rates_key(model: str, threads: int) -> str:
    """The cache key: the model (`model_id`), the prompt threads and the CPU."""
    return f"{model}:{threads}:{os.cpu_count() or 0}x{cpu_name()}"


class RatesCache:
    """Measured rates by `rates_key`, in one JSON file (written atomically)."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.path = cache_dir / RATES_FILE if cache_dir is not None else None
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> ModelRates | None:
        entry = self._read().get(key)
        if not isinstance(entry, dict):
            return None
        try:
            gen, compute = float(entry["gen_tps"]), float(entry["compute_tps"])
            rest = float(entry.get("rest_gen_tps", 0.0))
        except (KeyError, TypeError, ValueError):
            return None
        if not all(x > 0 and math.isfinite(x) for x in (gen, compute)) or not math.isfinite(rest):
            return None
        return ModelRates(gen, compute, measured=True, rest_gen_tps=max(0.0, rest))

    def put(self, key: str, rates: ModelRates) -> None:
        """Keep `rates` for `key`; a second measurement keeps the faster figure of each:
        other work on the machine only ever slows a measurement down."""
        if self.path is None:
            return
        with self._lock:
            data = self._read()
            old = self.get(key)
            if old is not None:
                rates = ModelRates(
                    max(old.gen_tps, rates.gen_tps),
                    max(old.compute_tps, rates.compute_tps),
                    True,
                    max(old.rest_gen_tps, rates.rest_gen_tps),
                )
            data[key] = {**asdict(rates), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
                os.replace(tmp, self.path)
            except OSError as exc:
                log.debug("cannot keep the measured model rates: %s", exc)


def measure(engine: Any, cancel: threading.Event, others: OtherLoad | None = None) -> ModelRates | None:
    """Time `engine` (a `LlamaEngine`, on its own thread) with its threads as set: one
    MEASURE_BATCH-token read, MEASURE_WRITES single-token decodes with its generation
    threads, and as many with every prompt thread generating. None when cancelled (a request
    came: measure later) or when other processes kept more than QUIET_CORES busy meanwhile
    (`others`: a quiet machine before the measurement is no promise for its second: a
    neighbour that woke during the every-core writes was kept as Gemma writing 29 tokens/s
    on two threads where it writes 45, and typing stayed on one thread). The engine's cache
    is cleared: the next request reads from the start."""
    others = others if others is not None else OtherLoad()
    others.cores()  # the window starts
    rates = _timed(engine, cancel)
    busy = others.cores()
    if rates is not None and busy is not None and busy > QUIET_CORES:
        log.info("a speed measurement was dropped: other work kept %.1f cores busy meanwhile", busy)
        return None
    return rates


def _timed(engine: Any, cancel: threading.Event) -> ModelRates | None:
    """`measure`'s timings, whatever else ran meanwhile."""
    text = _SAMPLE * 4
    need = MEASURE_BATCH + 2 * MEASURE_WRITES + 1
    tokens = engine.tokenize(text)[:need]
    if len(tokens) < need:
        return None
    gen, most = engine.threads, engine.batch_threads
    engine.reset()
    try:
        engine.decode_timed(tokens[:1])  # the first call warms up buffers; not counted
        t0 = time.perf_counter()
        engine.decode_timed(tokens[1 : 1 + MEASURE_BATCH])
        batch_s = time.perf_counter() - t0
        writes = iter(tokens[1 + MEASURE_BATCH :])
        one = _passes(engine, writes, cancel)
        if one is None:
            return None
        every: float | None = one
        if most != gen:
            engine.set_threads(most, most)
            every = _passes(engine, writes, cancel)
        if every is None:
            return None
    finally:
        if (engine.threads, engine.batch_threads) != (gen, most):
            engine.set_threads(gen, most)
        engine.reset()
    # A batch's pass over the weights runs on the prompt threads.
    arithmetic = max(batch_s - every, 1e-6)
    return ModelRates(1.0 / one, MEASURE_BATCH / arithmetic, measured=True, rest_gen_tps=1.0 / every)


def _passes(engine: Any, tokens: Any, cancel: threading.Event) -> float | None:
    """The median seconds of MEASURE_WRITES single-token decodes (one slow step is noise)."""
    times: list[float] = []
    for tok in itertools.islice(tokens, MEASURE_WRITES):
        if cancel.is_set():
            return None
        t1 = time.perf_counter()
        engine.decode_timed([tok])
        times.append(time.perf_counter() - t1)
    return sorted(times)[len(times) // 2] if times else None


_SAMPLE = '''import os
from pathlib import Path


def read_lines(path: Path, limit: int = 100) -> list[str]:
    """The first `limit` lines of a text file, without their line ends."""
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\\n") for _, line in zip(range(limit), fh)]
'''


__all__ = [
    "QUIET_CORES",
    "ModelRates",
    "RatesCache",
    "busy_cores",
    "cpu_name",
    "measure",
    "model_id",
    "prior_rates",
    "rates_key",
]
