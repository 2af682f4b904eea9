"""Long lines: typing at the end of a one-line minified file of ~2 MB, over real stdio.

    .venv/bin/python -m benchmarks.long_line [--sizes 1900000,2100000] [--keys 12]
                                             [--gap-ms 300] [--root PATH]

The real `lsp-assist serve` against the loopback fake model (its own process), with the
quality and backup tiers offline. The file is real code minified: this repository's VS Code
extension sources (TypeScript) with comments and line breaks removed, concatenated (names
numbered per copy) to the size asked. Each key is a didChange typing one character at the
end of the line and an Automatic inlineCompletion, awaited, after a pause of `--gap-ms` (so
the adaptive debounce waits its minimum, 10 ms); the figure is the client's time from the
didChange written to the response parsed (the fake model answers at once, so it is the
server's own work and that debounce). Sizes: under `completion.max_document_bytes` (2,000,000) the
fast tier is asked; over it the offline rules answer. `--root` runs the server from another
checkout (the same session's baseline: `--root /path/to/main`).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, FakeModelProcess, Script
from benchmarks.rpc_client import RpcClient, server_at

SOURCES = ROOT / "editors" / "vscode" / "src"


def minified(size: int) -> str:
    """One line of `size` characters of real code with comments and line breaks removed."""
    parts = []
    for path in sorted(SOURCES.glob("*.ts")):
        text = re.sub(r"/\*.*?\*/", " ", path.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r"(?m)^\s*//.*$", " ", text)
        parts.append(re.sub(r"\s+", " ", text).strip())
    bundle = ";".join(parts)
    out: list[str] = []
    total = 0
    copy = 0
    while total < size:
        piece = re.sub(r"\bfunction (\w+)", rf"function \1_{copy}", bundle) + ";"
        out.append(piece)
        total += len(piece)
        copy += 1
    return "".join(out)[:size]


async def run(size: int, keys: int, gap_s: float, fake: FakeModelProcess, root: Path) -> list[float]:
    """Milliseconds per key (didChange written -> response parsed)."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ws = tmp / "ws"
        ws.mkdir()
        env = {
            "LSP_ASSIST_CACHE_DIR": str(tmp / "cache"),
            "LSP_ASSIST_CONFIG": str(tmp / "none.toml"),
            "LSP_ASSIST_POLICY": str(tmp / "none-policy.toml"),
            "LSP_ASSIST_LOG_LEVEL": "warning",
            "PYTHONPATH": str(root),
        }
        client = await RpcClient.start(server_at(root), env)
        tier = {"provider": "openai", "api": "completions", "base_url": fake.base_url, "model": "fake"}
        offline = {"provider": "offline"}
        await client.initialize(ws.as_uri(), {"tiers": {"fast": tier, "quality": offline, "backup": offline}})
        text = minified(size)
        path = ws / "bundle.min.js"
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "javascript", "version": 1, "text": text}},
        )
        col = len(text)  # ASCII: UTF-16 columns are characters
        times: list[float] = []
        for k in range(keys):
            await asyncio.sleep(gap_s)  # a pause: the debounce is its minimum (10 ms)
            pos = {"line": 0, "character": col}
            t0 = time.perf_counter()
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": 2 + k},
                    "contentChanges": [{"range": {"start": pos, "end": pos}, "text": "xyz"[k % 3]}],
                },
            )
            col += 1
            params: dict[str, Any] = {
                "textDocument": {"uri": uri},
                "position": {"line": 0, "character": col},
                "context": {"triggerKind": 2},
            }
            await client.call("textDocument/inlineCompletion", params, timeout=60)
            times.append((time.perf_counter() - t0) * 1000)
        await client.close()
    return times


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1900000,2100000")
    ap.add_argument("--keys", type=int, default=12)
    ap.add_argument("--gap-ms", type=int, default=300, help="pause before each key")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server runs")
    args = ap.parse_args()
    with FakeModelProcess(quiet=True) as fake:
        fake.set_default(Script(text="return value;", ttft_ms=1))
        print(f"server from {args.root}")
        for size in (int(s) for s in args.sizes.split(",")):
            before = fake.stats.requests
            times = await run(size, args.keys, args.gap_ms / 1000, fake, args.root)
            calls = fake.stats.requests - before
            first, rest = times[0], times[1:]
            print(
                f"   {size / 1e6:.1f} MB line: first key {first:7.1f} ms; next {len(rest)} keys median "
                f"{statistics.median(rest):7.1f} ms, max {max(rest):7.1f} ms ({calls} fake-model requests)"
            )


if __name__ == "__main__":
    asyncio.run(main())
