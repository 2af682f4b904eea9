"""Capacity benchmark: the planner's report for 10, 50 and 200 simulated developers against a
fake model with a concurrency cap, a calibration of the in-process developer against real
stdio servers, and the shared-quota overhead per request (Redis round trip on loopback).

1. Calibration (same typists, same seeds): 3 developers on the in-process servers the
   planner uses vs 3 real `lsp-assist serve` processes over stdio; model calls per keystroke
   and suggestions shown per keystroke, both counted by the fake model and the typists.
2. `lsp-assist capacity`'s own report for 10, 50 and 200 developers typing for --duration
   seconds each, against the fake model in its own process (--cap concurrent streams,
   --ttft-ms to first token, --tokens-per-s), with the knee.
3. Shared-quota overhead: admission with the team store in a real redis-server vs the local
   store (p50/p95 per call), and the latency of a cache-miss request end to end with and
   without the store (interleaved, same run).

Usage: flock -x /tmp/lsp-cpu.lock python -m benchmarks.capacity [--duration 20] [--cap 8]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, FakeModelProcess, Script, percentile
from benchmarks.rpc_client import RpcClient, server_cmd
from lsp_assist.capacity.report import format_report
from lsp_assist.capacity.sim import (
    InProcessEditor,
    Workload,
    auto_workers,
    build_developer_runtime,
    endpoint_options,
    run_level,
)
from lsp_assist.capacity.typist import Typist, TypistCounts
from lsp_assist.domain import Cursor
from lsp_assist.governance.record import CallRecord
from lsp_assist.pipeline.request import CompletionRequest
from tests.fakes.redis_server import RedisServer, redis_binary

ANSWER = 'return compute_total(items, rate)\n    log.info("total %s", total)\n    return total\n'


class StdioEditor:
    """A typist's editor connected to a real `lsp-assist serve` over stdio (VS Code-like)."""

    def __init__(self, client: RpcClient) -> None:
        self.c = client

    async def open(self, uri: str, text: str) -> None:
        self.c.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )

    def edit(self, uri: str, version: int, line: int, col: int, end_col: int, text: str) -> None:
        rng = {"start": {"line": line, "character": col}, "end": {"line": line, "character": end_col}}
        self.c.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": rng, "text": text}],
            },
        )

    async def complete(self, uri: str, line: int, col: int) -> str:
        msg_id, fut = self.c.request(
            "textDocument/inlineCompletion",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": col},
             "context": {"triggerKind": 2}},
        )  # fmt: skip
        try:
            resp = await asyncio.wait_for(fut, 15)
        except asyncio.CancelledError:
            self.c.cancel(msg_id)
            raise
        res = resp.get("result") or {}
        items = res.get("items", []) if isinstance(res, dict) else res
        return str(items[0]["insertText"]) if items else ""

    async def close(self) -> None:
        await self.c.close()


async def typists_run(editors: list[Any], seconds: float, seed: int) -> list[TypistCounts]:
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    ts = [Typist(e, f"file:///cal/dev{i}/h.py", seed * 100_003 + i) for i, e in enumerate(editors)]
    await asyncio.gather(*(t.run(until) for t in ts))
    return [t.counts for t in ts]


async def calibrate(fake: FakeModelProcess, tmp: Path, seconds: float) -> None:
    opts = endpoint_options(fake.base_url, "fake")
    rows = []
    for kind in ("in-process", "stdio"):
        before = fake.stats.streams_started
        editors: list[Any] = []
        for i in range(3):
            d = tmp / f"cal-{kind}-{i}"
            d.mkdir(parents=True)
            o = {**opts, "cache": {"dir": str(d)}}
            if kind == "in-process":
                editors.append(InProcessEditor(build_developer_runtime(o)))
            else:
                env = {"LSP_ASSIST_CACHE_DIR": str(d), "LSP_ASSIST_CONFIG": str(d / "none.toml"),
                       "LSP_ASSIST_POLICY": str(d / "none.toml"), "LSP_ASSIST_LOG_LEVEL": "error",
                       "PYTHONPATH": str(ROOT)}  # fmt: skip
                client = await RpcClient.start(server_cmd(), env)
                await client.initialize(d.as_uri(), o)
                editors.append(StdioEditor(client))
        counts = await typists_run(editors, seconds, seed=7)
        await asyncio.sleep(0.5)
        calls = fake.stats.streams_started - before
        keys = sum(c.keystrokes for c in counts)
        shown = sum(c.shown for c in counts)
        rows.append((kind, keys, calls, shown))
        for e in editors:
            await e.close()
    print(f"calibration, 3 developers x {seconds:.0f} s, same typists and seeds:")
    print(f"  {'server':<11} {'keystrokes':>10} {'model calls':>11} {'per key':>8} {'shown/key':>9}")
    for kind, keys, calls, shown in rows:
        print(
            f"  {kind:<11} {keys:>10} {calls:>11} {calls / max(1, keys):>8.2f} {shown / max(1, keys):>9.2f}"
        )


async def quota_overhead(fake: FakeModelProcess, tmp: Path, n: int) -> None:
    if redis_binary() is None:
        print("shared-quota overhead: skipped (redis-server is not installed)")
        return
    redis = RedisServer(tmp / "redis").start()
    try:
        base = endpoint_options(fake.base_url, "fake")
        base["completion"] = {"prefetch": False, "enrichment": False}
        limits = {"default": {"requests_per_minute": 10**7, "max_concurrent": 1000}}
        gov = {"quotas": {"completion": {"requests_per_day": 10**9}}, "rate_limits": limits}
        team = {"store": redis.url, "business_line": "bench"}
        local_rt = build_developer_runtime({**base, "governance": gov, "cache": {"dir": str(tmp / "ql")}})
        team_rt = build_developer_runtime(
            {**base, "governance": gov, "team": team, "cache": {"dir": str(tmp / "qt")}}
        )
        # 1. Admission alone.
        adm: dict[str, list[float]] = {"local": [], "team": []}
        for i in range(n * 4):
            for kind, rt in (("local", local_rt), ("team", team_rt)):
                t0 = time.perf_counter()
                p = await rt.governance.admit_async("completion", "fast", "openai:127.0.0.1:fake")
                adm[kind].append((time.perf_counter() - t0) * 1000.0)
                p.finish(CallRecord("model", model="fake"))
            if i % 50 == 0:
                await asyncio.sleep(0)  # let background releases run
        # 2. A cache miss end to end (invoked, a new document each time), interleaved.
        fake.set_default(Script(text=ANSWER, ttft_ms=0))
        e2e: dict[str, list[float]] = {"local": [], "team": []}
        for i in range(n):
            for kind, rt in (("local", local_rt), ("team", team_rt)):
                uri = f"file:///q/{kind}{i}.py"
                rt.store.open(uri, "python", 1, f"def f{i}_{kind}(items, rate):\n    \n", None)
                assert rt.engine is not None
                t0 = time.perf_counter()
                s = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 4), invoked=True))
                e2e[kind].append((time.perf_counter() - t0) * 1000.0)
                assert s.outcome.value == "model", s.outcome
        assert team_rt.governance.team is not None and team_rt.governance.team.available
        rt_trips = team_rt.governance.team.store.round_trips
        await local_rt.aclose()
        await team_rt.aclose()
    finally:
        redis.stop()
    print(f"shared-quota overhead (real redis-server on loopback; {rt_trips} store round trips):")
    for label, d in (("admission alone", adm), ("cache miss, end to end", e2e)):
        lp50, tp50 = statistics.median(d["local"]), statistics.median(d["team"])
        print(
            f"  {label:<24} local p50 {lp50:.3f} ms p95 {percentile(d['local'], 95):.3f} ms | team store p50 "
            f"{tp50:.3f} ms p95 {percentile(d['team'], 95):.3f} ms | added p50 {tp50 - lp50:+.3f} ms"
        )


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=20.0, help="seconds of typing per load level")
    ap.add_argument("--levels", default="10,50,200")
    ap.add_argument("--cap", type=int, default=8, help="the fake model's concurrency limit")
    ap.add_argument("--ttft-ms", type=float, default=150.0)
    ap.add_argument("--tokens-per-s", type=float, default=100.0)
    ap.add_argument("--calibrate-s", type=float, default=15.0)
    ap.add_argument("--workers", type=int, default=0, help="simulating processes (0: auto)")
    ap.add_argument("--n", type=int, default=200, help="cache-miss requests per store for the overhead")
    args = ap.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="lsp-capacity-bench-") as tmpd,
        FakeModelProcess("--max-concurrent", str(args.cap)) as fake,
    ):
        tmp = Path(tmpd)
        fake.set_default(Script(text=ANSWER, ttft_ms=args.ttft_ms, tokens_per_s=args.tokens_per_s))
        if args.calibrate_s > 0:
            await calibrate(fake, tmp, args.calibrate_s)
            print()
        fake.reset()
        opts = endpoint_options(fake.base_url, "fake")
        levels = []
        for n in [int(x) for x in args.levels.split(",")]:
            t0 = time.perf_counter()
            workers = args.workers or auto_workers(n)
            levels.append(
                await run_level(
                    n, Workload(args.duration, opts, seed=1, cache_root=tmp / f"lv{n}"), workers=workers
                )
            )
            st = fake.stats
            took = time.perf_counter() - t0
            print(f"  [{n} developers simulated in {took:.0f} s by {workers} process(es); fake: "
                  f"max {st.max_active} streams at once (cap {args.cap}), "
                  f"{st.queued} requests queued]")  # fmt: skip
            fake.reset()
        print(f"\nlsp-assist capacity against a fake model: cap {args.cap} concurrent streams, "
              f"{args.ttft_ms:.0f} ms to first token, {args.tokens_per_s:.0f} tokens/s per stream, "
              f"{args.duration:.0f} s of typing per level")  # fmt: skip
        print(format_report(levels, args.cap))
        print()
        await quota_overhead(fake, tmp, args.n)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
