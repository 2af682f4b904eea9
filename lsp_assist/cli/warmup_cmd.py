"""`lsp-assist warmup [PATH]`: build the workspace index (and precompute, when enabled) ahead of time.

The index and the suggestion cache live under `cache.dir`, so a server started later on
the same workspace loads them instead of scanning from scratch. A one-line progress bar
goes to stderr (only when stderr is a terminal, or with --progress); the summary (files,
symbols, time, cache size) goes to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from lsp_assist.cli.session import ONE_SHOT
from lsp_assist.server import build_runtime
from lsp_assist.workspace.warmup import run_warmup

_COUNTS = re.compile(r"(\d+)/(\d+)")
BAR_WIDTH = 28


def add_parser(sub: Any) -> None:
    p = sub.add_parser("warmup", help="index the workspace (and precompute suggestions) ahead of time")
    p.add_argument("path", nargs="?", default=".", help="workspace folder (default: the current one)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--progress", action="store_true", help="draw the progress bar even when not a terminal")
    p.set_defaults(run=run)


class ProgressBar:
    """`[#####.....] 120/1794 indexing ws` redrawn in place on one line of `out`."""

    def __init__(self, out: TextIO, enabled: bool) -> None:
        self.out = out
        self.enabled = enabled
        self.width = 0
        self.filled = 0  # kept for the steps without counts: "done" must not look empty

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        m = _COUNTS.search(message)
        if m and int(m.group(2)) > 0:
            done, total = int(m.group(1)), int(m.group(2))
            self.filled = min(BAR_WIDTH, BAR_WIDTH * done // total)
        elif message == "done":
            self.filled = BAR_WIDTH
        line = f"[{'#' * self.filled}{'.' * (BAR_WIDTH - self.filled)}] {message}"
        line = line[:100]
        self.out.write("\r" + line.ljust(self.width))
        self.out.flush()
        self.width = len(line)

    def close(self) -> None:
        if self.enabled and self.width:
            self.out.write("\r" + " " * self.width + "\r")
            self.out.flush()


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


async def _warm(root: Path, bar: ProgressBar) -> dict[str, Any]:
    rt = build_runtime([root], ONE_SHOT)
    try:
        for err in rt.errors:
            print(f"lsp-assist warmup: configuration: {err}", file=sys.stderr)
        return await run_warmup(rt, bar, connections=rt.config.workspace.precompute)
    finally:
        await rt.aclose()


def run(args: argparse.Namespace) -> int:
    root = Path(args.path).expanduser()
    if not root.is_dir():
        print(f"lsp-assist warmup: {root} is not a folder", file=sys.stderr)
        return 2
    root = root.resolve()
    bar = ProgressBar(sys.stderr, args.progress or sys.stderr.isatty())
    t0 = time.perf_counter()
    try:
        summary = asyncio.run(_warm(root, bar))
    finally:
        bar.close()
    elapsed = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"root": str(root), **summary, "wall_seconds": round(elapsed, 3)}))
        return 0
    print(f"workspace  {root}")
    if "index" in summary:
        print(f"index      {summary['index']}")
    else:
        print(
            f"files      {summary.get('files', 0)} ({summary.get('reread', 0)} re-read, "
            f"{summary.get('reused', 0)} copied from files with the same bytes, "
            f"{summary.get('removed', 0)} removed)"
        )
        print(f"symbols    {summary.get('symbols', 0)}")
    print(f"time       {elapsed:.2f} s")
    print(f"cache size {_size(int(summary.get('cache_bytes', summary.get('index_bytes', 0))))}")
    if summary.get("precomputed"):
        print(f"precomputed {summary['precomputed']} suggestions")
    for key in ("stopped", "rebuilt_corrupt", "precompute_stopped"):
        if summary.get(key):
            print(f"note       {summary[key]}")
    return 0
