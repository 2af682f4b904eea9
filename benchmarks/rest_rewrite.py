"""When the code model's rewrite reaches the screen after a typing rest, and what it read.

A focused cut of `quality_over_time.py`'s typing scenario, for the rewrite alone: per
checkout one `lsp-assist serve` with no configuration (Gemma types, the code model rewrites
at rest), warmed up, then at each position the user reads the freshly opened line for 2 s,
types its start at 80 ms a key and rests. Printed per position: when the first ghost text
and the rewrite (the first later answer whose first line differs) were on screen after the
rest, the rewrite model's own figures from the server's debug log (prompt tokens, how
many it had to read at the rest, its time to the first token), and whether the line on
screen was the developer's at 2 s and when the watch ended (`--show`: the line wanted and
every line shown, with when). Checkouts alternate per position, so both see the same
machine load.

    .venv/bin/python -m benchmarks.rest_rewrite --checkout base=/tmp/base --checkout new=. \\
        [--positions 6] [--seed 1] [--corpus stdlib] [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import re
import shutil
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.context_recall import corpus_loaders
from benchmarks.quality_over_time import (
    CONFIGS,
    MODELS_DIR,
    Place,
    extra_bufts_fault,
    pick_places,
    score,
    shim_dir,
    type_at,
    wait_idle,
    warm_up,
    write_workspace,
)
from benchmarks.quality_over_time import server as start_server

_REFINE = re.compile(r"refine model: prompt (\d+) tokens, evaluated (\d+) in (\d+) ms")
# first ghost, rewrite on screen (s after the rest), the rewrite's reads, the warm-up's tokens,
# and whether the line on screen was the developer's at 2 s and when the watch ended.
Row = tuple[float | None, float | None, list[tuple[int, int, int]], int, bool, bool]
_WARM = re.compile(r"rewrite warm-up evaluated (\d+) tokens")


def _log_tail(log: Path, start: int) -> tuple[str, int]:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "", start
    return text[start:], len(text)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}s"


async def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    corpora: dict[str, dict[str, dict[str, str]]] = {}
    places: list[Place] = []
    for name, load in corpus_loaders(args.corpus or ["stdlib"]).items():
        corpora[name] = load()
        places += pick_places(name, corpora[name], args.positions + 1, rng)
    warm, places = places[-1], places[: args.positions]
    fault = extra_bufts_fault(args.python, args.models_dir)
    results: dict[str, list[Row]] = {}
    with tempfile.TemporaryDirectory(prefix="lsp-rest-") as td:
        async with contextlib.AsyncExitStack() as stack:
            await _positions(args, Path(td), stack, places, warm, corpora, fault, results)
        if args.logs is not None:  # the servers' debug logs, for a closer look
            args.logs.mkdir(parents=True, exist_ok=True)
            for name in args.checkouts:
                shutil.copy(Path(td) / name / "server.log", args.logs / f"{name}.log")
    print("\n== the rewrite on screen after the rest")
    for name, rows in results.items():
        got = [r[1] for r in rows if r[1] is not None]
        p50 = statistics.median(got) if got else None
        read = [r[2][-1][1] for r in rows if r[2]]
        first = [r[0] for r in rows if r[0] is not None]
        print(
            f"{name:5}: rewrite on screen {len(got)} of {len(rows)}, p50 {_fmt(p50)};"
            f" first ghost p50 {_fmt(statistics.median(first) if first else None)};"
            f" the rewrite's last read p50 {statistics.median(read) if read else '-'} tokens;"
            f" exact at 2 s {sum(r[4] for r in rows)}, at {args.observe:.1f} s {sum(r[5] for r in rows)}"
        )
    return 0


async def _positions(
    args: argparse.Namespace,
    tmp: Path,
    stack: contextlib.AsyncExitStack,
    places: list[Place],
    warm: Place,
    corpora: dict[str, dict[str, dict[str, str]]],
    fault: bool,
    results: dict[str, list[Row]],
) -> None:
    today = next(c for c in CONFIGS if c.key == "today")
    ws = tmp / "workspace"
    args.shim = shim_dir(tmp) if fault else None
    write_workspace(ws, [*places, warm], corpora)
    servers: dict[str, Any] = {}
    marks: dict[str, int] = {}
    for name, path in args.checkouts.items():
        cfg = replace(today, label=name, checkout=name)
        srv = await stack.enter_async_context(start_server(cfg, path, ws, tmp / name, args))
        await warm_up(srv, warm)
        servers[name], marks[name] = srv, 0
        _, marks[name] = _log_tail(srv.log, 0)
    for place in places:
        for name, srv in servers.items():
            tl = await type_at(srv, place, uri_tag=name, observe_s=args.observe)
            await wait_idle(srv.client.proc.pid, 60.0, window_s=0.5)  # the other server waits idle
            tail, marks[name] = _log_tail(srv.log, marks[name])
            reads = [(int(a), int(b), int(c)) for a, b, c in _REFINE.findall(tail)]
            warmed = sum(int(n) for n in _WARM.findall(tail))
            first, rewrite = tl.first(), tl.rewrite()
            exact = (score(tl.at(2.0), place.rest).exact, score(tl.at(args.observe), place.rest).exact)
            row = (first[0] if first else None, rewrite[0] if rewrite else None, reads, warmed, *exact)
            results.setdefault(name, []).append(row)
            if args.show:
                seen = " | ".join(f"{t:.2f}s {x!r}" for t, x in tl.shown)
                print(f"      wanted {place.rest!r}; shown {seen}", flush=True)
            print(
                f"{name:5} {place.rel}:{place.row + 1} typed {len(place.typed):2}: first"
                f" {_fmt(row[0])} rewrite {_fmt(row[1])}; warm-up read {warmed};"
                f" rewrite reads (prompt, read, ms) {reads}; exact at 2 s {exact[0]}, at the end {exact[1]}",
                flush=True,
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkout", action="append", default=[], help="NAME=PATH")
    ap.add_argument("--corpus", action="append", default=None)
    ap.add_argument("--positions", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--observe", type=float, default=6.5)
    ap.add_argument("--models-dir", type=Path, default=MODELS_DIR)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--logs", type=Path, default=None, help="copy the servers' debug logs here")
    ap.add_argument("--show", action="store_true", help="print each line wanted and what was on screen when")
    args = ap.parse_args()
    args.log_level = "debug"
    args.keep_logs = None  # `server()` of quality_over_time: --logs copies them here instead
    args.checkouts = {}
    for spec in args.checkout:
        name, _, path = spec.partition("=")
        args.checkouts[name] = Path(path).resolve()
    return asyncio.run(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
