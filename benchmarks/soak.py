"""Soak: thousands of completion requests with edits and cancellations; RSS every 1,000.

    .venv/bin/python -m benchmarks.soak [--requests 10000] [--every 1000] [--no-baseline]
    .venv/bin/python -m benchmarks.soak --documents 20 --requests 30000 [--seed 1] [--root PATH]

The real `lsp-assist serve` over stdio against the loopback fake model (its own
process). The quality tier is offline, so the embedded model (hundreds of MB, loaded at
startup) stays out of the figures. Every `--every` requests the server's RSS (/proc), the
handler futures pygls holds and the bytes its bounded caches hold (`lspAssist.stats`) are
sampled.

One document (the default): each step is a didChange (typing, and every 25 steps a
full-text reset so the document stays small, with a new first line every 100 steps so the
text keeps changing; the last 8 keystrokes of each 25 diverge from any suggestion, so they
need the model) and an Automatic inlineCompletion; every third request is cancelled right
after it is sent, as VS Code cancels on the next keystroke; the others are awaited.
Baseline, in the same run: the same load against a server with the pygls future-leak
workaround switched off (`AssistProtocol.forget_done_futures = False`, set by a wrapper
before the server starts). Target: RSS growth after the first 1,000 requests < 5 MB.

`--documents N` (N > 1, issue 23's long session): N real files (standard-library modules,
20-120 KB each) copied into the workspace and opened; each episode picks a document and a
row at random, opens a fresh line there (indented like the row), types a line taken from
another file one character at a time with a request after each keystroke (every third
cancelled), then deletes the line again, so the positions keep changing and the documents
keep their size. Target: RSS after all requests <= RSS after a third of them + 5 MB.
`--root` runs the server from another checkout (the same session's baseline).

Measured (20 documents, seed 1, one session): main at 6edf1cf, 10,000 requests: RSS 154.7
MB at 1,000, 169.2 at 3,000, 179.9 at 10,000, still rising. With every memo bounded in
bytes, 30,000 requests: 138.3 MB at 1,000, 149.2 at 10,000, 150.3 at 20,000, 151.2 at
30,000 (+2.0 MB over the last 20,000; the memos' total 23.3 MB from 9,000 on).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, FakeModelProcess, Script
from benchmarks.rpc_client import RpcClient, server_at, server_cmd

LEAKY = [
    sys.executable,
    "-c",
    "from lsp_assist.protocol.server import AssistProtocol\n"
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


@dataclass
class Sample:
    requests: int
    rss_kb: int
    pending: int  # handler futures pygls holds
    cache_bytes: int  # what the server's bounded caches hold (-1: not reported)
    memory: dict[str, int]  # per cache (`lspAssist.stats` "memory"), {} when not reported


class Load:
    """One server under load: counts requests and samples it every `every` of them."""

    def __init__(self, client: RpcClient, fake: FakeModelProcess, every: int) -> None:
        self.client = client
        self.fake = fake
        self.every = every
        self.samples: list[Sample] = []
        self.sent = self.answered = self.cancelled = self.nonempty = 0
        self.model_calls = 0
        self.memory: dict[str, Any] = {}

    async def complete(self, uri: str, line: int, ch: int) -> None:
        """One Automatic request; every third is cancelled right after it is sent."""
        self.sent += 1
        msg_id, fut = self.client.request("textDocument/inlineCompletion", params(uri, line, ch))
        if self.sent % 3 == 0:
            self.client.cancel(msg_id)
            self.cancelled += 1
            fut.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)
        else:
            resp = await asyncio.wait_for(fut, 30)
            self.answered += 1
            result = resp.get("result") or {}
            self.nonempty += bool(result.get("items") if isinstance(result, dict) else result)
        if self.sent % self.every == 0:
            await self.sample()

    async def sample(self) -> None:
        await asyncio.sleep(0.2)  # let cancelled requests and streams settle
        stats = await self.client.call("workspace/executeCommand", {"command": "lspAssist.stats"})
        result = stats["result"]
        pending = int(result.get("protocol", {}).get("pendingFutures", -1))
        self.memory = result.get("memory", {})
        cache_bytes = int(self.memory.get("total", -1))
        self.samples.append(
            Sample(self.sent, rss_kb(self.client.proc.pid), pending, cache_bytes, self.memory)
        )
        # The fake model keeps every request it served: counted, then dropped, so its own
        # memory stays flat over a long soak.
        self.model_calls += self.fake.stats.requests
        self.fake.reset()


async def start_server(cmd: list[str], fake: FakeModelProcess, cache: Path, root: Path = ROOT) -> RpcClient:
    env = {
        "LSP_ASSIST_CACHE_DIR": str(cache / "cache"),
        "LSP_ASSIST_CONFIG": str(cache / "none.toml"),
        "LSP_ASSIST_POLICY": str(cache / "none-policy.toml"),
        "LSP_ASSIST_LOG_LEVEL": "warning",
        "PYTHONPATH": str(root),
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
    await client.initialize((cache / "ws").as_uri(), {"tiers": tiers})
    return client


async def soak(name: str, cmd: list[str], fake: FakeModelProcess, n: int, every: int) -> list[Sample]:
    """One document typed on and reset (see the module docstring)."""
    fake.reset()
    with tempfile.TemporaryDirectory() as d:
        cache = Path(d)
        (cache / "ws").mkdir()
        client = await start_server(cmd, fake, cache)
        load = Load(client, fake, every)
        uri = (cache / "ws" / "soak.py").as_uri()
        text = HEADER.format(0) + "    "
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
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
            await load.complete(uri, 4, col)
        elapsed = time.perf_counter() - t0
        await client.close()
    return report(name, load, elapsed)


def corpus_files(count: int, rng: random.Random) -> list[Path]:
    """`count` standard-library modules of 20-120 KB (real code, on every machine)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p
        for p in stdlib.glob("*.py")
        if 20_000 <= p.stat().st_size <= 120_000 and not p.name.startswith("_sysconfigdata")
    )
    return rng.sample(files, min(count, len(files)))


def typed_lines(texts: list[list[str]]) -> list[str]:
    """Lines worth typing: ASCII code lines of 12+ characters (stripped, cut to 40)."""
    out = []
    for lines in texts:
        for line in lines:
            s = line.strip()
            if len(s) >= 12 and s.isascii() and not s.startswith("#"):
                out.append(s[:40])
    return out


async def soak_spread(
    name: str,
    cmd: list[str],
    fake: FakeModelProcess,
    n: int,
    every: int,
    documents: int,
    seed: int,
    root: Path = ROOT,
) -> list[Sample]:
    """Episodes of typing a fresh line at random rows of `documents` files (see the module)."""
    fake.reset()
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as d:
        cache = Path(d)
        ws = cache / "ws"
        ws.mkdir()
        docs: list[tuple[str, list[str]]] = []
        for src in corpus_files(documents, rng):
            text = src.read_text(encoding="utf-8")
            (ws / src.name).write_text(text, encoding="utf-8")
            docs.append(((ws / src.name).as_uri(), text.split("\n")))
        pool = typed_lines([lines for _, lines in docs])
        client = await start_server(cmd, fake, cache, root)
        load = Load(client, fake, every)
        versions = dict.fromkeys((uri for uri, _ in docs), 1)
        for uri, lines in docs:
            text = "\n".join(lines)
            client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )

        def change(uri: str, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
            versions[uri] += 1
            rng_ = {
                "start": {"line": start[0], "character": start[1]},
                "end": {"line": end[0], "character": end[1]},
            }
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": versions[uri]},
                    "contentChanges": [{"range": rng_, "text": text}],
                },
            )

        t0 = time.perf_counter()
        while load.sent < n:
            uri, lines = rng.choice(docs)
            row = rng.randrange(1, max(2, len(lines) - 1))
            above = lines[row - 1]
            indent = above[: len(above) - len(above.lstrip(" "))]
            typed = rng.choice(pool)[: min(n - load.sent, rng.randint(6, 24))]
            change(uri, (row, 0), (row, 0), indent + "\n")  # a fresh line at `row`
            col = len(indent)
            for ch in typed:
                change(uri, (row, col), (row, col), ch)
                col += 1
                await load.complete(uri, row, col)
            change(uri, (row, 0), (row + 1, 0), "")  # gone again: the file keeps its size
        elapsed = time.perf_counter() - t0
        await client.close()
    return report(name, load, elapsed)


def report(name: str, load: Load, elapsed: float) -> list[Sample]:
    n = load.sent
    print(
        f"\n{name}: {n} requests ({load.answered} awaited, {load.nonempty} with a suggestion; "
        f"{load.cancelled} cancelled), {load.model_calls} model calls, in {elapsed:.0f} s "
        f"({n / elapsed:.0f} requests/s)"
    )
    s = load.samples
    if not s:
        return s
    first = s[0].rss_kb
    print(f"   {'requests':>8}  {'RSS MB':>7}  {'vs first':>8}  {'pygls futures':>13}  {'caches MB':>9}")
    for x in s:
        caches = f"{x.cache_bytes / 2**20:9.1f}" if x.cache_bytes >= 0 else f"{'-':>9}"
        print(
            f"   {x.requests:8d}  {x.rss_kb / 1024:7.1f}  {(x.rss_kb - first) / 1024:+8.1f}  "
            f"{x.pending:13d}  {caches}"
        )
    if load.memory:
        sizes = ", ".join(
            f"{k} {v / 2**20:.2f}"
            for k, v in sorted(load.memory.items())
            if isinstance(v, int) and k != "total"
        )
        print(f"   caches at the end (MB): {sizes}")
    return s


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=1000)
    ap.add_argument("--documents", type=int, default=1, help="more than 1: issue 23's long session")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server runs")
    args = ap.parse_args()
    with FakeModelProcess(quiet=True) as fake:
        fake.set_default(Script(text="    return subtotal * (1 + tax_rate)\n", ttft_ms=2))
        if args.documents > 1:
            s = await soak_spread(
                f"lsp-assist, {args.documents} documents",
                server_at(args.root),
                fake,
                args.requests,
                args.every,
                args.documents,
                args.seed,
                args.root,
            )
            third = min(s, key=lambda x: abs(x.requests - args.requests // 3))
            growth = (s[-1].rss_kb - third.rss_kb) / 1024
            print(
                f"\nRSS after {s[-1].requests} - RSS after {third.requests}: {growth:+.1f} MB "
                f"(target <= +5 MB: {'met' if growth <= 5 else 'NOT met'})"
            )
            return
        ours = await soak("lsp-assist", server_cmd(), fake, args.requests, args.every)
        results = {"lsp-assist": ours}
        if not args.no_baseline:
            results["workaround off"] = await soak(
                "workaround off (pygls 2.1.1 as shipped)", LEAKY, fake, args.requests, args.every
            )
    print("\nRSS growth after the first sample (target < 5 MB):")
    for name, s in results.items():
        growth = (s[-1].rss_kb - s[0].rss_kb) / 1024
        per_k = growth / max(1, (s[-1].requests - s[0].requests) / 1000)
        print(
            f"   {name:<16} {growth:+6.1f} MB  ({per_k:+.2f} MB per 1,000 requests; "
            f"pygls futures {s[0].pending} -> {s[-1].pending})"
        )


if __name__ == "__main__":
    asyncio.run(main())
