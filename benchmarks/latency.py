"""Latency benchmark: lsp-assist vs a naive baseline, both driven over real stdio like an editor.

Against a loopback fake model with a set time to first token and token rate, it measures
- server overhead on a cache miss: client-side latency minus the model's own time to the
  last token the server needed (the end of the first line);
- cache-hit and typing-through latency, and whether they made a model call;
- a typing burst (12 characters, 40 ms apart, each a didChange plus an Automatic
  inlineCompletion, the previous request cancelled as VS Code does): model calls started
  and aborted mid-stream.
The naive baseline (benchmarks/naive_server.py: no debounce, no cache, a new HTTP client
per request) runs the same scenarios in the same run. Figures are printed, not asserted.

Usage: python benchmarks/latency.py [--ttft-ms 60] [--tokens-per-s 400] [--n 25]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.rpc_client import RpcClient, server_cmd  # noqa: E402
from tests.fakes.fake_model_server import Script, split_tokens  # noqa: E402
from tests.fakes.process import FakeModelProcess  # noqa: E402

COMPLETION = "return compute_total(items, tax_rate)\n    # more lines follow\n    return None\n"


def model_time_ms(text: str, ttft_ms: float, rate: float) -> float:
    """When the fake sends the token that ends the first line (the last one a server needs)."""
    tokens = split_tokens(text)
    k = next(i for i, t in enumerate(tokens) if "\n" in t)
    return ttft_ms + (k / rate * 1000.0 if rate else 0.0)


NEWLINE_TOKEN = next(i for i, t in enumerate(split_tokens(COMPLETION)) if "\n" in t)


def measured_model_ms(fake: FakeModelProcess, first_stream: int) -> float | None:
    """The fake's own time from reading the request to writing the token that ends line 1."""
    for t_request, times in fake.stream_times[first_stream:]:  # one HTTP call, outside the timing
        if len(times) > NEWLINE_TOKEN:
            return (times[NEWLINE_TOKEN] - t_request) * 1000.0
    return None


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


def doc_text(i: int) -> str:
    return (
        f"# module {i}\n"
        "import math\n\n"
        "def compute_total(items, tax_rate):\n"
        "    subtotal = sum(item.price for item in items)\n"
        "    return subtotal * (1 + tax_rate)\n\n"
        f"def checkout_{i}(items, tax_rate):\n"
        "    \n"
    )


CURSOR = (8, 4)
PREFETCH_TOKENS = 31


async def start(kind: str, base_url: str, cache_dir: Path) -> RpcClient:
    cmd = (
        server_cmd()
        if kind == "lsp-assist"
        else [sys.executable, str(ROOT / "benchmarks" / "naive_server.py")]
    )
    env = {
        "LSP_ASSIST_CACHE_DIR": str(cache_dir),
        "LSP_ASSIST_CONFIG": str(cache_dir / "none.toml"),
        "LSP_ASSIST_POLICY": str(cache_dir / "none-policy.toml"),
        "LSP_ASSIST_LOG_LEVEL": "warning",
        "PYTHONPATH": str(ROOT),
    }
    client = await RpcClient.start(cmd, env)
    opts = {
        "tiers": {
            "fast": {
                "provider": "openai",
                "api": "completions",
                "base_url": base_url,
                "model": "fake",
                "first_token_timeout_ms": 5000,
                "total_timeout_ms": 10000,
            },
            "backup": {"provider": "offline"},
        },
        # A distinctive size so prefetch calls can be told apart in the fake's request log.
        "completion": {"prefetch_max_tokens": PREFETCH_TOKENS},
    }
    await client.initialize(cache_dir.as_uri(), opts)
    return client


def open_doc(c: RpcClient, uri: str, text: str, version: int = 1) -> None:
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )


def inline_params(uri: str, line: int, ch: int, invoked: bool = True) -> dict[str, Any]:
    return {
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": ch},
        "context": {"triggerKind": 1 if invoked else 2},
    }


def first_text(resp: dict[str, Any]) -> str:
    res = resp.get("result") or {}
    items = res.get("items", res) if isinstance(res, dict) else res
    return items[0]["insertText"] if items else ""


async def timed_inline(c: RpcClient, uri: str, line: int, ch: int, invoked: bool = True) -> tuple[float, str]:
    t0 = time.perf_counter()
    resp = await c.call("textDocument/inlineCompletion", inline_params(uri, line, ch, invoked))
    return (time.perf_counter() - t0) * 1000.0, first_text(resp)


async def scenario(kind: str, fake: FakeModelProcess, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    fake.reset()
    fake.set_default(Script(text=COMPLETION, ttft_ms=args.ttft_ms, tokens_per_s=args.tokens_per_s))
    c = await start(kind, fake.base_url, tmp / kind)
    try:
        # Warm-up request (connection, imports) not counted.
        open_doc(c, "file:///bench/warm.py", doc_text(999))
        await timed_inline(c, "file:///bench/warm.py", *CURSOR)
        model_ms = model_time_ms(COMPLETION, args.ttft_ms, args.tokens_per_s)

        # 1. cache misses: every document differs, so nothing can be reused.
        # 2. typing-through: then type the first character of the suggestion on screen.
        miss: list[float] = []
        model_measured: list[float] = []
        tt: list[float] = []
        tt_calls = 0
        for i in range(args.n):
            uri = f"file:///bench/miss_{i}.py"
            open_doc(c, uri, doc_text(i))
            n_streams = len(fake.stream_times)
            ms, text = await timed_inline(c, uri, *CURSOR)
            assert text.startswith("return compute_total"), (kind, text)
            miss.append(ms)
            measured = measured_model_ms(fake, n_streams)
            model_measured.append(measured if measured is not None else model_ms)
            calls_before = fake.stats.streams_started
            c.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": 2},
                    "contentChanges": [
                        {
                            "range": {
                                "start": {"line": 8, "character": 4},
                                "end": {"line": 8, "character": 4},
                            },
                            "text": "r",
                        }
                    ],
                },
            )
            ms, text = await timed_inline(c, uri, 8, 5)
            tt.append(ms)
            tt_calls += fake.stats.streams_started - calls_before
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            await asyncio.sleep(0.15)  # let background work (enrichment, prefetch) settle
        out["miss_ms"] = miss
        out["overhead_ms"] = [m - mm for m, mm in zip(miss, model_measured, strict=True)]
        out["model_measured_ms"] = model_measured
        out["model_ms"] = model_ms
        out["typing_ms"] = tt
        out["typing_model_calls"] = tt_calls

        # 3. cache hits: reopen documents seen before (a buffer reopened, or a new session).
        calls_before = fake.stats.streams_started
        hit: list[float] = []
        for i in range(args.n):
            uri = f"file:///bench/miss_{i}.py"
            open_doc(c, uri, doc_text(i), version=3)
            ms, _ = await timed_inline(c, uri, *CURSOR)
            hit.append(ms)
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        out["hit_ms"] = hit
        out["hit_model_calls"] = fake.stats.streams_started - calls_before

        # 4. typing burst: 12 keystrokes, 40 ms apart, previous request cancelled each time.
        await asyncio.sleep(0.3)
        before = fake.stats
        n_requests_before = len(fake.model_bodies())
        uri = "file:///bench/burst.py"
        base = doc_text(500)
        open_doc(c, uri, base)
        word = "total = items"
        pending: tuple[int, asyncio.Future[Any]] | None = None
        for k in range(12):
            if pending is not None:
                c.cancel(pending[0])
            c.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": 2 + k},
                    "contentChanges": [
                        {
                            "range": {
                                "start": {"line": 8, "character": 4 + k},
                                "end": {"line": 8, "character": 4 + k},
                            },
                            "text": word[k],
                        }
                    ],
                },
            )
            pending = c.request("textDocument/inlineCompletion", inline_params(uri, 8, 5 + k, invoked=False))
            await asyncio.sleep(0.04)
        assert pending is not None
        await asyncio.wait_for(pending[1], 20)
        await asyncio.sleep(0.5)  # let aborted streams be noticed by the fake server
        after = fake.stats
        bodies = fake.model_bodies()[n_requests_before:]
        prefetch = sum(1 for b in bodies if b.get("max_tokens") == PREFETCH_TOKENS)
        out["burst_prefetch"] = prefetch
        out["burst_started"] = after.streams_started - before.streams_started - prefetch
        out["burst_aborted"] = after.streams_aborted - before.streams_aborted
        out["burst_left"] = (
            (after.streams_started - before.streams_started)
            - (after.streams_completed - before.streams_completed)
            - out["burst_aborted"]
        )
        out["burst_tokens_at_abort"] = sum(after.tokens_at_abort[len(before.tokens_at_abort) :])
        if kind == "lsp-assist":
            resp = await c.call("workspace/executeCommand", {"command": "lspAssist.stats", "arguments": []})
            out["server_report"] = (resp.get("result") or {}).get("report") or str(resp)
    finally:
        await c.close()
    return out


def row(label: str, ours: str, naive: str) -> str:
    return f"{label:<56}{ours:>16}{naive:>18}"


def med(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ms" if values else "-"


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ttft-ms", type=float, default=60.0)
    ap.add_argument("--tokens-per-s", type=float, default=400.0)
    ap.add_argument("--n", type=int, default=25)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as td, FakeModelProcess() as fake:
        tmp = Path(td)
        ours = await scenario("lsp-assist", fake, args, tmp)
        naive = await scenario("naive", fake, args, tmp)
    print(
        f"fake model: time to first token {args.ttft_ms:.0f} ms, {args.tokens_per_s:.0f} tokens/s; "
        f"model time to the end of the first line {ours['model_ms']:.1f} ms; n={args.n}"
    )
    print(row("", "lsp-assist", "naive baseline"))
    print(row("cache miss, client latency (median)", med(ours["miss_ms"]), med(naive["miss_ms"])))
    print(row("  p95", f"{pct(ours['miss_ms'], 95):.2f} ms", f"{pct(naive['miss_ms'], 95):.2f} ms"))
    print(row("server overhead on a miss (median)", med(ours["overhead_ms"]), med(naive["overhead_ms"])))
    print(row("typing-through latency (median)", med(ours["typing_ms"]), med(naive["typing_ms"])))
    print(
        row(
            "  model calls for typing-through",
            str(ours["typing_model_calls"]),
            str(naive["typing_model_calls"]),
        )
    )
    print(row("cache hit latency (median)", med(ours["hit_ms"]), med(naive["hit_ms"])))
    print(row("  model calls for cache hits", str(ours["hit_model_calls"]), str(naive["hit_model_calls"])))
    print(row("typing burst: model calls started", str(ours["burst_started"]), str(naive["burst_started"])))
    print(
        row("  + prefetch of the next suggestion", str(ours["burst_prefetch"]), str(naive["burst_prefetch"]))
    )
    print(
        row(
            "typing burst: closed mid-stream (superseded/early stop)",
            str(ours["burst_aborted"]),
            str(naive["burst_aborted"]),
        )
    )
    print(
        row(
            "typing burst: still streaming after the burst", str(ours["burst_left"]), str(naive["burst_left"])
        )
    )
    print(
        row(
            "typing burst: tokens sent before abort",
            str(ours["burst_tokens_at_abort"]),
            str(naive["burst_tokens_at_abort"]),
        )
    )
    print()
    print("lsp-assist's own per-stage report for the run (lspAssist.stats):")
    print(ours.get("server_report", ""))
    ratio = statistics.median(naive["miss_ms"]) / statistics.median(ours["miss_ms"])
    print(f"miss latency ratio naive/lsp-assist: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
