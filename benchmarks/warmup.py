"""Warmup benchmark: the workspace index on a real code base, and the first suggestion of a fresh server.

1. Index build on a workspace no one here wrote: a copy of the Python standard library
   (`sysconfig.get_paths()["stdlib"]`, copied so one file can be touched): cold build time,
   files, symbols and index size; reload with nothing changed; incremental re-run after
   touching one file.
2. First-suggestion latency of a fresh `lsp-assist serve` (over stdio, `RpcClient`) against
   the fake model in its own process (time to first token `--ttft-ms`), each scenario in a
   new server process `--n` times:
   - cold: the request right after `initialized` (connections still opening, no index);
   - warm: after `lspAssist.warmCache` (warm connection, index loaded);
   - precompute: warmup with `workspace.precompute` on, request at the precomputed position.
   For each: latency, whether the model was called, and whether a definition from a file
   that is not open (`ledger.py`) reached the prompt the fake received (cross-file context).
Figures are printed, not asserted.

Usage: python -m benchmarks.warmup [--ttft-ms 80] [--n 5] [--stdlib PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import FakeModelProcess, Script, prompt_of
from benchmarks.rpc_client import RpcClient, server_cmd
from lsp_assist.workspace.index import WorkspaceIndex

LEDGER = (
    "class Ledger:\n    entries: list[int]\n\n\n"
    "def reconcile_accounts(ledger: Ledger, tolerance_cents: int) -> bool:\n"
    "    return abs(sum(ledger.entries)) <= tolerance_cents\n"
)
MAIN = "from ledger import Ledger, reconcile_accounts\n\n\ndef check(book: Ledger) -> bool:\n    return "
RECENT = "from ledger import reconcile_accounts\n\n\ndef audit(book):\n    ok = reconcile_accounts("
DEFINITION = "def reconcile_accounts(ledger: Ledger, tolerance_cents: int)"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# ---------------------------------------------------------------------------------- index


def bench_index(stdlib: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "stdlib"
        t = time.perf_counter()
        shutil.copytree(
            stdlib,
            work,
            ignore=shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc", "*.so"),
            symlinks=True,
        )
        copy_s = time.perf_counter() - t
        cache = Path(tmp) / "cache"
        cold = WorkspaceIndex(str(work), cache)
        r1 = cold.refresh()
        t = time.perf_counter()
        size = cold.save()
        save_s = time.perf_counter() - t
        reload = WorkspaceIndex(str(work), cache)
        r2 = reload.refresh()
        victim = work / "json" / "decoder.py"
        st = victim.stat()
        victim.write_text(victim.read_text() + "\n\ndef added_by_benchmark():\n    pass\n")
        os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        r3 = reload.refresh()
        t = time.perf_counter()
        reload.save()
        save2_s = time.perf_counter() - t
        print(f"== workspace index: copy of {stdlib} ({copy_s:.1f} s to copy)")
        print(
            f"cold build      {r1.seconds:7.2f} s  files={r1.files} symbols={r1.symbols} "
            f"errors={r1.errors} index={size / 1e6:.1f} MB (save {save_s * 1000:.0f} ms)"
        )
        print(f"reload, no edit {r2.seconds:7.2f} s  re-read={r2.reread} loaded={r2.loaded}")
        print(
            f"one file edited {r3.seconds:7.2f} s  re-read={r3.reread} re-parsed={r3.reparsed} "
            f"(save {save2_s * 1000:.0f} ms)"
        )


# ---------------------------------------------------------------------------------- server


def make_workspace(base: Path) -> Path:
    ws = base / "ws"
    ws.mkdir(parents=True)
    (ws / "ledger.py").write_text(LEDGER)
    (ws / "main.py").write_text(MAIN)
    (ws / "recent.py").write_text(RECENT)
    now = time.time_ns()
    os.utime(ws / "ledger.py", ns=(now, now - 10**10))
    os.utime(ws / "main.py", ns=(now, now - 10**10))
    os.utime(ws / "recent.py", ns=(now, now))  # the most recently changed file
    return ws


def model_bodies(fake: FakeModelProcess) -> list[dict[str, Any]]:
    rows = httpx.get(fake.origin + "/_control/requests", timeout=10).json()["requests"]
    return [r["body"] or {} for r in rows if str(r["path"]).endswith("completions")]


async def first_request(fake: FakeModelProcess, base: Path, scenario: str) -> dict[str, Any]:
    ws = make_workspace(base)
    fake.reset()
    tier = {
        "provider": "openai",
        "base_url": fake.base_url,
        "model": "fake-coder",
        "first_token_timeout_ms": 3000,
        "total_timeout_ms": 6000,
    }
    options: dict[str, Any] = {
        "tiers": {"fast": tier, "quality": tier, "backup": {"provider": "offline"}},
        "completion": {"prefetch": False, "enrichment": False},
    }
    if scenario == "precompute":
        options["workspace"] = {"precompute": True, "precompute_limit": 2}
    env = {
        "LSP_ASSIST_CACHE_DIR": str(base / "cache"),
        "LSP_ASSIST_CONFIG": str(base / "none.toml"),
        "LSP_ASSIST_POLICY": str(base / "none.toml"),
    }
    client = await RpcClient.start(server_cmd(), env=env)
    try:
        await client.initialize(ws.as_uri(), options)
        warm_s = 0.0
        summary: dict[str, Any] = {}
        if scenario != "cold":
            t = time.perf_counter()
            resp = await client.call(
                "workspace/executeCommand", {"command": "lspAssist.warmCache", "arguments": []}, timeout=60
            )
            warm_s = time.perf_counter() - t
            summary = resp.get("result") or {}
        target = ws / ("recent.py" if scenario == "precompute" else "main.py")
        text = target.read_text()
        lines = text.split("\n")
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": target.as_uri(), "languageId": "python", "version": 1, "text": text}},
        )
        before = len(model_bodies(fake))
        t = time.perf_counter()
        resp = await client.call(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": target.as_uri()},
                "position": {"line": len(lines) - 1, "character": len(lines[-1])},
                "context": {"triggerKind": 1},
            },
        )
        latency_ms = (time.perf_counter() - t) * 1000.0
        items = (resp.get("result") or {}).get("items") or []
        bodies = model_bodies(fake)
        called = len(bodies) > before
        prompts = [prompt_of(b) for b in bodies]
        return {
            "latency_ms": latency_ms,
            "model_called": called,
            "cross_file": any(DEFINITION in p for p in prompts),
            "answered": bool(items),
            "warm_s": warm_s,
            "precomputed": summary.get("precomputed", 0),
        }
    finally:
        await client.close()


async def bench_server(ttft_ms: float, n: int) -> None:
    print(f"\n== first suggestion in a fresh server (fake model, ttft {ttft_ms:.0f} ms, n={n} per row)")
    head = ("scenario", "median ms", "min ms", "model calls", "cross-file", "warmup s")
    print(f"{head[0]:<11} {head[1]:>10} {head[2]:>8} {head[3]:>12} {head[4]:>11} {head[5]:>9}")
    with FakeModelProcess() as fake:
        fake.set_default(Script(text="reconcile_accounts(book, 0)\n", ttft_ms=ttft_ms))
        for scenario in ("cold", "warm", "precompute"):
            rows = []
            for i in range(n):
                with tempfile.TemporaryDirectory() as tmp:
                    rows.append(await first_request(fake, Path(tmp) / f"run{i}", scenario))
            lat = [r["latency_ms"] for r in rows]
            print(
                f"{scenario:<11} {_median(lat):10.1f} {min(lat):8.1f} "
                f"{sum(r['model_called'] for r in rows):>7}/{n:<4} "
                f"{sum(r['cross_file'] for r in rows):>6}/{n:<4} "
                f"{_median([r['warm_s'] for r in rows]):9.2f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ttft-ms", type=float, default=80.0)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--stdlib", default=sysconfig.get_paths()["stdlib"])
    ap.add_argument("--skip-index", action="store_true")
    args = ap.parse_args()
    if not args.skip_index:
        bench_index(Path(args.stdlib))
    asyncio.run(bench_server(args.ttft_ms, args.n))


if __name__ == "__main__":
    main()
