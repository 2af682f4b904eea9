"""Soak: 10,000 completion requests with edits and cancellations; RSS every 1,000.

    .venv/bin/python benchmarks/soak.py [--requests 10000] [--every 1000] [--no-baseline]

The real `lsp-assist serve` over stdio against the loopback fake model (its own
process). Each step is a didChange (typing, and every 25 steps a full-text reset so the
document stays small, with a new first line every 100 steps so the text keeps changing;
the last 8 keystrokes of each 25 diverge from any suggestion, so they need the model) and
an Automatic inlineCompletion; every third request is
cancelled right after it is sent, as VS Code cancels on the next keystroke; the others
are awaited. The quality tier is offline, so the embedded model (hundreds of MB, loaded
at startup) stays out of the figures. Every `--every` requests the server's RSS (/proc)
and the handler futures pygls holds (`lspAssist.stats`) are sampled.

Baseline, in the same run: the same load against a server with the pygls future-leak
workaround switched off (`AssistProtocol.forget_done_futures = False`, set by a wrapper
before the server starts). Target: RSS growth after the first 1,000 requests < 5 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.rpc_client import RpcClient, server_cmd  # noqa: E402
from tests.fakes.fake_model_server import Script  # noqa: E402
from tests.fakes.process import FakeModelProcess  # noqa: E402

LEAKY = [
    sys.executable,
    "-c",
    "from lsp_assist.protocol.handlers import AssistProtocol\n"
    "AssistProtocol.forget_done_futures = False\n"
    "from lsp_assist.cli.main import main\n"
    "raise SystemExit(main(['serve']))\n",
]
LINE = "total = compute_total(items, tax_rate)"
HEADER = "import math  # {}\n\n\ndef checkout(items, tax_rate):\n"


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def params(uri: str, line: int, ch: int) -> dict[str, Any]:
    return {
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": ch},
        "context": {"triggerKind": 2},
    }


async def soak(
    name: str, cmd: list[str], fake: FakeModelProcess, n: int, every: int
) -> list[tuple[int, int, int]]:
    with tempfile.TemporaryDirectory() as d:
        cache = Path(d)
        env = {
            "LSP_ASSIST_CACHE_DIR": str(cache / "cache"),
            "LSP_ASSIST_CONFIG": str(cache / "none.toml"),
            "LSP_ASSIST_POLICY": str(cache / "none-policy.toml"),
            "LSP_ASSIST_LOG_LEVEL": "warning",
            "PYTHONPATH": str(ROOT),
        }
        client = await RpcClient.start(cmd, env)
        tier = {
            "provider": "openai",
            "api": "completions",
            "base_url": fake.base_url,
            "model": "fake",
            "first_token_timeout_ms": 5000,
            "total_timeout_ms": 10000,
        }
        offline = {"provider": "offline"}
        tiers = {"fast": tier, "quality": offline, "backup": offline}
        await client.initialize(cache.as_uri(), {"tiers": tiers})
        uri = (cache / "soak.py").as_uri()
        text = HEADER.format(0) + "    "
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        samples: list[tuple[int, int, int]] = []
        answered = cancelled = nonempty = 0
        calls0 = fake.stats.requests
        t0 = time.perf_counter()
        col = 4
        for i in range(1, n + 1):
            version = i + 1
            if i % 25 == 0:  # a full-text reset keeps the document small
                col = 4
                # A new header every 100 steps: new text, so cache and typing-through
                # answer the repeats and the model the rest.
                change: dict[str, Any] = {"text": HEADER.format(i // 100) + "    "}
            else:
                # Mostly typing along the line (often typing through the suggestion on
                # screen); the last steps of each cycle diverge, so the model is asked again.
                ch = LINE[(col - 4) % len(LINE)] if i % 25 < 17 else "#q9z"[i % 4]
                pos = {"line": 4, "character": col}
                change = {"range": {"start": pos, "end": pos}, "text": ch}
                col += 1
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            )
            msg_id, fut = client.request("textDocument/inlineCompletion", params(uri, 4, col))
            if i % 3 == 0:
                client.cancel(msg_id)
                cancelled += 1
                fut.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)
            else:
                resp = await asyncio.wait_for(fut, 30)
                answered += 1
                result = resp.get("result") or {}
                nonempty += bool(result.get("items") if isinstance(result, dict) else result)
            if i % every == 0:
                await asyncio.sleep(0.2)  # let cancelled requests and streams settle
                stats = await client.call("workspace/executeCommand", {"command": "lspAssist.stats"})
                pending = int(stats["result"].get("protocol", {}).get("pendingFutures", -1))
                samples.append((i, rss_kb(client.proc.pid), pending))
        elapsed = time.perf_counter() - t0
        await client.close()
    print(
        f"\n{name}: {n} requests ({answered} awaited, {nonempty} with a suggestion; {cancelled} "
        f"cancelled), {fake.stats.requests - calls0} model calls, in {elapsed:.0f} s "
        f"({n / elapsed:.0f} requests/s)"
    )
    first = samples[0][1]
    print(f"   {'requests':>8}  {'RSS MB':>7}  {'vs first':>8}  {'pygls futures':>13}")
    for i, rss, pending in samples:
        print(f"   {i:8d}  {rss / 1024:7.1f}  {(rss - first) / 1024:+8.1f}  {pending:13d}")
    return samples


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=1000)
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    with FakeModelProcess(quiet=True) as fake:
        fake.set_default(Script(text="    return subtotal * (1 + tax_rate)\n", ttft_ms=2))
        ours = await soak("lsp-assist", server_cmd(), fake, args.requests, args.every)
        results = {"lsp-assist": ours}
        if not args.no_baseline:
            results["workaround off"] = await soak(
                "workaround off (pygls 2.1.1 as shipped)", LEAKY, fake, args.requests, args.every
            )
    print("\nRSS growth after the first sample (target < 5 MB):")
    for name, s in results.items():
        growth = (s[-1][1] - s[0][1]) / 1024
        per_k = growth / max(1, (s[-1][0] - s[0][0]) / 1000)
        print(
            f"   {name:<16} {growth:+6.1f} MB  ({per_k:+.2f} MB per 1,000 requests; "
            f"pygls futures {s[0][2]} -> {s[-1][2]})"
        )


if __name__ == "__main__":
    asyncio.run(main())
