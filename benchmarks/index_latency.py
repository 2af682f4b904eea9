"""Editor scenarios while the workspace index builds, beside the same scenarios idle (issue 27).

The scenarios of `benchmarks/latency.py` (`single_requests`): a cache miss split into the
server's time before the model call and after the needed token, typing-through, a cache hit
and the client latency of a miss (its p90 is the "cold p90"). They run over real stdio
against the loopback fake model, with the workspace root at the 19k-file tree of
`benchmarks/workspace_index.py`:
- idle: the index built beforehand (`lsp-assist warmup`), so the server's start-up refresh
  finds nothing to do;
- while indexing: a fresh cache, so the build starts at `initialized` (about 30-50 s on
  2 cores) and runs through every measured request.

Usage: flock -x /tmp/lsp-cpu.lock python -m benchmarks.index_latency [--n 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, FakeModelProcess, arg_parser, percentile
from benchmarks.latency import lsp_peer, single_requests
from benchmarks.workspace_index import WORK, make_19k


def _warmup(root: Path, cache: Path) -> float:
    env = dict(os.environ)
    env.update(
        LSP_ASSIST_CACHE_DIR=str(cache),
        LSP_ASSIST_CONFIG=str(cache / "none.toml"),
        LSP_ASSIST_POLICY=str(cache / "none-policy.toml"),
        PYTHONPATH=str(ROOT),
    )
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lsp_assist", "warmup", str(root)], env=env, check=True,
                   stdout=subprocess.DEVNULL, timeout=600)  # fmt: skip
    return time.perf_counter() - t


async def scenario(
    root: Path, cache: Path, fake: FakeModelProcess, args: argparse.Namespace
) -> dict[str, Any]:
    peer = lsp_peer("lsp-assist", fake.base_url, cache, {"invoked_choices": 1})
    # `single_requests` serves `tmp / peer.name`: that name is a link to the tree.
    tmp = Path(tempfile.mkdtemp(dir=WORK))
    (tmp / peer.name).symlink_to(root, target_is_directory=True)
    t = time.perf_counter()
    out = await single_requests(peer, fake, args, tmp)
    out["seconds"] = time.perf_counter() - t
    return out


def _fmt(values: list[float], q: float) -> str:
    return f"{percentile(values, q):.2f}" if values else "-"


async def main() -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--ttft-ms", type=float, default=120.0)
    ap.add_argument("--tokens-per-s", type=float, default=125.0)
    args = ap.parse_args()
    root = make_19k(WORK)
    built = Path(tempfile.mkdtemp(prefix="idx-lat-built-", dir=WORK))
    fresh = Path(tempfile.mkdtemp(prefix="idx-lat-fresh-", dir=WORK))
    warm_s = await asyncio.to_thread(_warmup, root, built)
    print(f"index built beforehand by `lsp-assist warmup` in {warm_s:.1f} s")
    with FakeModelProcess() as fake:
        idle = await scenario(root, built, fake, args)
        during = await scenario(root, fresh, fake, args)
    print(
        f"scenarios while indexing ran {during['seconds']:.1f} s from the server's start"
        " (the build takes longer)"
    )
    print(f"\n{'(ms)':44} {'idle':>8} {'while indexing':>15} {'difference':>11}")
    rows = [
        ("server time before the model call, p50", "before", 50),
        ("server time before the model call, p90", "before", 90),
        ("cache hit, p50", "hit", 50),
        ("typing-through, p50", "typing", 50),
        ("cache miss, client latency, p50", "miss", 50),
        ("cache miss, client latency, p90 (cold p90)", "miss", 90),
    ]
    for label, key, q in rows:
        a, b = idle[key], during[key]
        diff = percentile(b, q) - percentile(a, q) if a and b else float("nan")
        print(f"{label:44} {_fmt(a, q):>8} {_fmt(b, q):>15} {diff:>+11.2f}")
    print(f"\nmodel calls for typing-through / cache hits while indexing: {during['typing_calls']} / "
          f"{during['hit_calls']} (idle: {idle['typing_calls']} / {idle['hit_calls']})")  # fmt: skip
    print("targets: within 2 ms of idle (before the call, hit, typing-through); cold p90 within 10%")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
