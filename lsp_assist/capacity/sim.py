"""N simulated developers, each with its own in-process server, against one endpoint.

Each developer gets a full `Runtime` (document store, scheduler with the adaptive
debounce, suggestion cache, typing-through index, in-flight streams, prefetch, governance)
built from the same configuration a real `lsp-assist serve` would use, with the fast tier
pointed at the endpoint; only the stdio transport is left out (benchmarks/capacity.py
measures that the in-process developer makes the same calls as a real stdio server).

What the fleet must serve is measured from the pipeline's own records: every model call's
governance record (start, end, time to first token, tokens in and out, outcome) and every
request's stats record (outcome, latency). The simulator also measures its own event-loop
lag: when it is high the simulator, not the endpoint, is the bottleneck, and it says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import random
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsp_assist.capacity.typist import TypingModel, Typist, TypistCounts
from lsp_assist.config.loader import ConfigLayers
from lsp_assist.documents.store import TextChange
from lsp_assist.domain import Cursor
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.server import Runtime
from lsp_assist.telemetry.stats import RequestRecord, percentile

SAVED = ("cache", "typing_through", "attached")
CHARS_PER_TOKEN = 3.5


@dataclass
class CallSample:
    start: float
    end: float
    ttft_ms: float | None
    tokens_in: int
    tokens_out: int
    outcome: str
    error: str | None
    fallback: bool


@dataclass
class LoadCollector:
    calls: list[CallSample] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    model_latency_ms: list[float] = field(default_factory=list)
    lag_ms: list[float] = field(default_factory=list)

    def on_call(self, record: Mapping[str, object]) -> None:
        now = time.monotonic()
        stages = record.get("stages_ms")
        st: Mapping[str, Any] = stages if isinstance(stages, Mapping) else {}
        total = float(st.get("total") or 0.0)
        ttft = st.get("ttft")
        self.calls.append(
            CallSample(
                start=now - total / 1000.0,
                end=now,
                ttft_ms=float(ttft) if isinstance(ttft, (int, float)) else None,
                # An aborted stream reports no usage; its prompt was still read: estimate it.
                tokens_in=int(record.get("prompt_tokens") or 0)  # type: ignore[call-overload]
                or round(int(record.get("request_bytes") or 0) / CHARS_PER_TOKEN),  # type: ignore[call-overload]
                tokens_out=int(record.get("completion_tokens") or 0),  # type: ignore[call-overload]
                outcome=str(record.get("outcome") or ""),
                error=str(record["error_class"]) if record.get("error_class") else None,
                fallback=bool(record.get("fallback_from")),
            )
        )

    def on_request(self, rec: RequestRecord) -> None:
        self.outcomes[rec.outcome] = self.outcomes.get(rec.outcome, 0) + 1
        if rec.outcome == "model":
            self.model_latency_ms.append(float(rec.stages.get("total", 0.0)))

    async def watch_lag(self, until: float, every: float = 0.05) -> None:
        loop = asyncio.get_running_loop()
        while loop.time() < until:
            t0 = loop.time()
            await asyncio.sleep(every)
            self.lag_ms.append(max(0.0, (loop.time() - t0 - every) * 1000.0))


class InProcessEditor:
    """One developer's editor connected to its own in-process server (a `Runtime`)."""

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    async def open(self, uri: str, text: str) -> None:
        self.rt.store.open(uri, "python", 1, text, None)

    def edit(self, uri: str, version: int, line: int, col: int, end_col: int, text: str) -> None:
        self.rt.store.change(uri, version, [TextChange(Cursor(line, col), Cursor(line, end_col), text)])
        if self.rt.engine is not None:
            self.rt.engine.note_change(uri)

    async def complete(self, uri: str, line: int, col: int) -> str:
        assert self.rt.engine is not None
        s = await self.rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(line, col)))
        return s.text

    async def close(self) -> None:
        await self.rt.aclose()


def endpoint_options(
    endpoint: str, model: str, *, api: str = "completions", api_key_env: str = "", cache_dir: str = ""
) -> dict[str, Any]:
    tier = {
        "provider": "openai",
        "api": api,
        "base_url": endpoint,
        "model": model,
        "api_key_env": api_key_env,
    }
    return {
        "tiers": {"fast": tier, "quality": {**tier, "max_tokens": 128}, "backup": {"provider": "offline"}},
        "cache": {"dir": cache_dir},
        "workspace": {"index": False},
        "governance": {"audit": {"enabled": False}},
    }


def build_developer_runtime(options: Mapping[str, Any]) -> Runtime:
    """A server as `serve` builds it, from these settings only (no user files, no team store)."""
    layers = ConfigLayers(init_options=dict(options))
    rt = Runtime(layers, [])
    rt.build(layers.build())
    if rt.governance is not None and rt.governance.team is not None:
        # An admin policy may pin a team store: simulated developers must not spend the
        # team's real quotas. The per-machine limits apply to them instead.
        rt.governance.team = None
    return rt


@dataclass
class LevelReport:
    developers: int
    duration_s: float
    keystrokes: int
    requests: int
    model_calls: int
    peak_rps: float
    mean_rps: float
    tokens_in_per_s: float
    tokens_out_per_s: float
    peak_tokens_out_per_s: float
    peak_streams: int
    mean_streams: float
    ttft_p50_ms: float
    ttft_p95_ms: float
    latency_p50_ms: float
    latency_p95_ms: float
    saved: dict[str, int]
    debounced: int
    errors: int
    fallbacks: int
    shown: int
    accepted: int
    loop_lag_p95_ms: float

    @property
    def error_rate(self) -> float:
        return self.errors / self.model_calls if self.model_calls else 0.0

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["error_rate"] = round(self.error_rate, 4)
        return d


def _per_second(samples: list[tuple[float, float]], t0: float, duration: float) -> tuple[float, float]:
    """(peak over 1 s windows, mean) of summed values at times."""
    if duration <= 0:
        return 0.0, 0.0
    buckets = [0.0] * max(1, int(duration) + 1)
    total = 0.0
    for t, v in samples:
        i = int(t - t0)
        if 0 <= i < len(buckets):
            buckets[i] += v
            total += v
    full = buckets[: max(1, int(duration))]
    return max(full), total / duration


def _concurrency(calls: list[CallSample], t0: float, t1: float) -> tuple[int, float]:
    events: list[tuple[float, int]] = []
    for c in calls:
        events.append((max(c.start, t0), 1))
        events.append((min(c.end, t1), -1))
    events.sort()
    cur = peak = 0
    area = 0.0
    last = t0
    for t, d in events:
        area += cur * max(0.0, t - last)
        last = t
        cur += d
        peak = max(peak, cur)
    return peak, area / (t1 - t0) if t1 > t0 else 0.0


@dataclass
class RawLevel:
    """What one simulating process measured (picklable, merged across worker processes)."""

    collector: LoadCollector
    counts: list[TypistCounts]
    t0: float  # time.monotonic(): one clock for every process on the machine
    t1: float


def summarize(developers: int, raw: RawLevel) -> LevelReport:
    t0, t1, col, counts = raw.t0, raw.t1, raw.collector, raw.counts
    duration = t1 - t0
    calls = [c for c in col.calls if c.start >= t0 - 1.0]
    peak_rps, mean_rps = _per_second([(c.start, 1.0) for c in calls], t0, duration)
    _, tin = _per_second([(c.end, float(c.tokens_in)) for c in calls], t0, duration)
    pk_out, tout = _per_second([(c.end, float(c.tokens_out)) for c in calls], t0, duration)
    peak_streams, mean_streams = _concurrency(calls, t0, t1)
    ttfts = [c.ttft_ms for c in calls if c.ttft_ms is not None]
    return LevelReport(
        developers=developers,
        duration_s=round(duration, 1),
        keystrokes=sum(c.keystrokes for c in counts),
        requests=sum(c.requests for c in counts),
        model_calls=len(calls),
        peak_rps=peak_rps,
        mean_rps=mean_rps,
        tokens_in_per_s=tin,
        tokens_out_per_s=tout,
        peak_tokens_out_per_s=pk_out,
        peak_streams=peak_streams,
        mean_streams=mean_streams,
        ttft_p50_ms=percentile(ttfts, 50),
        ttft_p95_ms=percentile(ttfts, 95),
        latency_p50_ms=percentile(col.model_latency_ms, 50),
        latency_p95_ms=percentile(col.model_latency_ms, 95),
        saved={k: col.outcomes.get(k, 0) for k in SAVED},
        debounced=col.outcomes.get("cancelled", 0),
        errors=sum(1 for c in calls if c.error),
        fallbacks=sum(1 for c in calls if c.fallback),
        shown=sum(c.shown for c in counts),
        accepted=sum(c.accepted for c in counts),
        loop_lag_p95_ms=percentile(col.lag_ms, 95),
    )


@dataclass(frozen=True)
class Workload:
    """What every simulated developer of a load level does, and where its server keeps its
    cache (a temporary folder when `cache_root` is None)."""

    duration_s: float
    options: Mapping[str, Any]
    seed: int = 1
    typing: TypingModel | None = None
    cache_root: Path | None = None


async def simulate(indices: Sequence[int], work: Workload, *, start_at: float | None = None) -> RawLevel:
    """Developers `indices` type for `work.duration_s` s (from `start_at`, a time.monotonic())."""
    duration_s, options, seed = work.duration_s, work.options, work.seed
    model = work.typing or TypingModel()
    col = LoadCollector()
    editors: list[InProcessEditor] = []
    with contextlib.ExitStack() as stack:
        root = work.cache_root or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="lsp-capacity-"))
        )
        for i in indices:
            opts = {**options, "cache": {**dict(options.get("cache") or {}), "dir": str(root / f"dev{i}")}}
            rt = build_developer_runtime(opts)
            if rt.governance is not None:
                rt.governance.call_observers.append(col.on_call)
            if rt.stats is not None:
                rt.stats.observers.append(col.on_request)
            editors.append(InProcessEditor(rt))
        loop = asyncio.get_running_loop()  # its clock is time.monotonic()
        if start_at is not None:
            await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        rng = random.Random(seed * 7919 + (indices[0] if indices else 0))
        t0 = loop.time()
        until = t0 + duration_s
        typists = [
            Typist(e, f"file:///capacity/dev{i}/handler.py", seed * 100_003 + i, model)
            for i, e in zip(indices, editors, strict=True)
        ]

        async def start(t: Typist) -> None:
            await asyncio.sleep(rng.random() * min(1.0, duration_s / 4))  # staggered, not in lockstep
            await t.run(until)

        mono0 = time.monotonic()
        lag = loop.create_task(col.watch_lag(until))
        await asyncio.gather(*(start(t) for t in typists))
        await lag
        mono1 = time.monotonic()
        await asyncio.sleep(0.2)  # streams that were answered in the last moments report in
        for e in editors:
            with contextlib.suppress(Exception):
                await e.close()
    return RawLevel(col, [t.counts for t in typists], mono0, mono1)


def _worker(args: tuple[list[int], Workload, float]) -> RawLevel:
    indices, work, start_at = args
    from lsp_assist.logs import setup_logging

    setup_logging("error", None)
    return asyncio.run(simulate(indices, work, start_at=start_at))


def _merge(raws: list[RawLevel]) -> RawLevel:
    col = LoadCollector()
    counts: list[TypistCounts] = []
    for r in raws:
        col.calls += r.collector.calls
        col.model_latency_ms += r.collector.model_latency_ms
        col.lag_ms += r.collector.lag_ms
        for k, v in r.collector.outcomes.items():
            col.outcomes[k] = col.outcomes.get(k, 0) + v
        counts += r.counts
    return RawLevel(col, counts, min(r.t0 for r in raws), max(r.t1 for r in raws))


async def run_level(developers: int, work: Workload, *, workers: int = 1) -> LevelReport:
    """Simulate `developers` doing `work`; every server is closed after.

    `workers` > 1 spreads the developers over that many processes (one event loop each), so
    the simulator itself does not become the bottleneck at a few hundred developers.
    """
    workers = max(1, min(workers, developers))
    if workers == 1:
        return summarize(developers, await simulate(range(developers), work))
    with contextlib.ExitStack() as stack:
        root = work.cache_root or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="lsp-capacity-"))
        )
        shared = replace(work, options=dict(work.options), cache_root=root)
        # Every worker builds its servers first, then all start typing together.
        start_at = time.monotonic() + 2.0 + 0.03 * developers
        jobs = [(list(range(w, developers, workers)), shared, start_at) for w in range(workers)]
        ctx = multiprocessing.get_context("spawn")
        loop = asyncio.get_running_loop()
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            raws = await asyncio.gather(*(loop.run_in_executor(pool, _worker, j) for j in jobs))
    return summarize(developers, _merge(list(raws)))


def auto_workers(developers: int) -> int:
    """One process below 30 developers; beyond, one per core (the endpoint is elsewhere)."""
    return 1 if developers < 30 else max(1, os.cpu_count() or 1)


def find_knee(levels: list[LevelReport], concurrency_limit: int | None = None) -> LevelReport | None:
    """The first load level where the endpoint is saturated: p95 time to first token more than
    doubles against the lightest level, calls start failing (>5 %), or the mean number of
    concurrent streams (queued ones included) reaches the endpoint's known concurrency limit."""
    if not levels:
        return None
    base = levels[0].ttft_p95_ms
    for lv in levels[1:] if len(levels) > 1 else levels:
        slow = base == base and lv.ttft_p95_ms == lv.ttft_p95_ms and lv.ttft_p95_ms > 2.0 * base + 20.0
        capped = concurrency_limit is not None and lv.mean_streams >= concurrency_limit
        if slow or lv.error_rate > 0.05 or capped:
            return lv
    return None


__all__ = [
    "InProcessEditor", "LevelReport", "LoadCollector", "RawLevel", "Workload", "auto_workers",
    "endpoint_options", "find_knee", "run_level", "simulate",
]  # fmt: skip
