"""End-to-end quality of the embedded models on HumanEval single-line infilling.

For a seeded sample of tasks, the document is `prompt + <hole> + suffix` with the cursor
after the hole line's indentation, as an editor would show it. The real pipeline (context
engine, prompt template, local llama.cpp server, streaming post-processing) produces the
suggestion; we report exact match with the canonical line and pass@1 (the task's tests run
in a subprocess with a timeout), plus latency. Used to pick the default embedded model.

The embedded model answers within a budget and then keeps going (a partial first line
first, the full one announced with suggestionReady): "exact" scores the line the user ends
up with (the finished stream's first line), "exact@first" the first answer shown.
`--backends inprocess server` runs today's path (llama-cpp-python server, trimmed prompt)
in the same run.

Usage: python -m benchmarks.humaneval_local [--n 80] [--models gemma3-270m smollm2]
       [--backends inprocess server]
Data: ../shared/data/humaneval-infilling (MIT licence).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, arg_parser, percentile

DATA = ROOT.parent / "shared" / "data" / "humaneval-infilling" / "HumanEval-SingleLineInfilling.jsonl.gz"


def load_tasks(n: int, seed: int) -> list[dict[str, Any]]:
    with gzip.open(DATA, "rt", encoding="utf-8") as fh:
        tasks = [json.loads(line) for line in fh]
    random.Random(seed).shuffle(tasks)
    return tasks[:n]


def passes(task: dict[str, Any], line: str, indent: str) -> bool:
    program = task["prompt"] + indent + line + "\n" + task["suffix"] + "\n" + task["test"]
    program += f"\ncheck({task['entry_point']})\n"
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(program)
        path = fh.name
    try:
        r = subprocess.run([sys.executable, path], capture_output=True, timeout=10)
        return r.returncode == 0
    except subprocess.TimeoutExpired:
        return False
    finally:
        os.unlink(path)


def quality_config(
    model: str, backend: str = "inprocess", *, members: bool = True, refine: str = "", **fast: Any
) -> dict[str, Any]:
    """The embedded model on the fast tier (`fast`: more of that tier's settings) with patient
    timeouts and no cache, prefetch or enrichment: a quality run measures what the model
    writes; latency is reported, not enforced."""
    local: dict[str, Any] = {"model": model, "backend": backend, "first_token_timeout_ms": 60000}
    local["total_timeout_ms"] = 90000
    local["constrain_members"] = members
    local["refine_model"] = refine
    if "context_chars" in fast:  # the embedded model's own default (1,500) would win otherwise
        local["context_chars"] = fast["context_chars"]
    return {
        "tiers": {"fast": {"provider": "local", **fast}},
        "local": local,
        "cache": {"enabled": False},
        "completion": {"prefetch": False, "enrichment": False, "deadline_ms": 120000},
        "governance": {"breaker": {"failure_threshold": 1000}},
    }


async def final_first_line(
    rt: Any, res: Any, path: Path, text: str, line: int, col: int, version: int
) -> str:
    """The first line the user ends up with. When the answer `res` was a partial line (the
    embedded model's answer budget), the stream goes on and `suggestionReady` makes the
    editor ask again at the same place: wait for the stream, then ask again (the
    typing-through memory answers with the finished line). An answer from a prompt cut to
    the jump budget is followed by a refinement on the whole prompt (registered when the
    first stream ends, announced with `suggestionReady` too): wait for it also."""
    from lsp_assist.cli.session import complete_text

    got: str = res.text.split("\n", 1)[0].rstrip()
    if rt.engine is None:
        return got
    launcher, uri = rt.engine.launcher, "file://" + str(path)
    waited = False
    while True:
        flight = launcher.live_stream(uri)
        if flight is None or flight.done:
            flight = launcher.refining(uri)
        if (flight is None or flight.done) and launcher.refine_waiting(uri):
            waited = True  # the refine model starts after the user's rest
            await asyncio.sleep(0.05)
            continue
        if flight is None or flight.done:
            break
        waited = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(flight.final), 60)
    if res.complete and not waited:
        return got
    final = await complete_text(rt, path, text, line, col, version=version)
    again: str = final.text.split("\n", 1)[0].rstrip()
    return again or got


async def run_model(
    model: str,
    tasks: list[dict[str, Any]],
    cache_dir: Path,
    backend: str = "inprocess",
    members: bool = True,
    keep_open: bool = False,
    refine: str = "",
) -> dict[str, Any]:
    from lsp_assist.cli.session import complete_text
    from lsp_assist.server import build_runtime

    os.environ["LSP_ASSIST_CACHE_DIR"] = str(cache_dir / f"{model}-{backend}")
    rt = build_runtime([], quality_config(model, backend, members=members, refine=refine))
    t0 = time.perf_counter()
    await rt.warm()
    load_s = time.perf_counter() - t0
    await _members_ready(rt, members)
    refiner = False
    for provider in rt.local_models():
        ready = getattr(provider, "refiner_ready", None)
        refiner = refiner or (ready is not None and await ready())
    if refine and not refiner:
        print(f"refine model {refine!r} did not load: see the log (LSP_ASSIST_BENCH_LOG=1)")
    exact = passed = empty = exact_first = 0
    ttft: list[float] = []
    total: list[float] = []
    final_s: list[float] = []  # request to the line the user ends up with
    try:
        for i, task in enumerate(tasks):
            hole = task["canonical_solution"].rstrip("\n")
            indent = hole[: len(hole) - len(hole.lstrip())]
            text = task["prompt"] + indent + "\n" + task["suffix"]
            line_no = task["prompt"].count("\n")
            path = cache_dir / f"task_{i}.py"
            asked = time.perf_counter()
            res = await complete_text(rt, path, text, line_no, len(indent), version=i + 1)
            shown = res.text.split("\n", 1)[0].rstrip()
            exact_first += int(shown.strip() == hole.strip())
            got = await final_first_line(rt, res, path, text, line_no, len(indent), i + 1)
            final_s.append(time.perf_counter() - asked)
            if not keep_open:  # each task alone: earlier tasks' files are not open tabs
                rt.store.close("file://" + str(path))
            if not got:
                empty += 1
            exact += int(got.strip() == hole.strip())
            passed += int(bool(got) and passes(task, got, indent))
            if "ttft" in res.stages:
                ttft.append(res.stages["ttft"])
            total.append(res.stages.get("total", 0.0))
    finally:
        await rt.aclose()
    n = len(tasks)
    return {
        "model": f"{model} {backend}" + ("" if members else " free") + (" +refine" if refiner else ""),
        "n": n,
        "exact": exact / n,
        "exact_first": exact_first / n,
        "pass": passed / n,
        "empty": empty / n,
        "load_s": load_s,
        "ttft_p50": statistics.median(ttft) if ttft else float("nan"),
        "total_p50": statistics.median(total) if total else float("nan"),
        "total_p95": percentile(total, 95),
        "final_p50": statistics.median(final_s) if final_s else float("nan"),
    }


async def _members_ready(rt: Any, members: bool) -> None:
    """With the member constraint on, wait for the vocabulary index (read after the load),
    so that every task runs with it."""
    if not members:
        return
    for provider in rt.local_models():
        ready = getattr(provider, "members_ready", None)
        if ready is not None:
            await ready()


async def main() -> int:
    if os.environ.get("LSP_ASSIST_BENCH_LOG"):
        import logging

        logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    ap = arg_parser(__doc__)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--models", nargs="+", default=["gemma3-270m", "smollm2"])
    ap.add_argument("--backends", nargs="+", default=["inprocess"])
    ap.add_argument(
        "--members",
        nargs="+",
        choices=["on", "off"],
        default=["on"],
        help="local.constrain_members (both: on off)",
    )
    ap.add_argument(
        "--refine",
        nargs="+",
        default=[""],
        help="local.refine_model per run (\"\": none, auto: the coder when installed); e.g. --refine '' auto",
    )
    ap.add_argument(
        "--keep-open",
        action="store_true",
        help="leave each task's file open (before 2026-12-03: later tasks saw earlier ones as open tabs)",
    )
    args = ap.parse_args()
    if not DATA.exists():
        print(f"data not found: {DATA}")
        return 1
    tasks = load_tasks(args.n, args.seed)
    results = []
    with tempfile.TemporaryDirectory() as td:
        for model in args.models:
            for backend in args.backends:
                for members in args.members:
                    for refine in args.refine:
                        results.append(
                            await run_model(
                                model, tasks, Path(td), backend, members == "on", args.keep_open, refine
                            )
                        )
    print(f"HumanEval single-line infilling, {args.n} tasks (seed {args.seed}), through the full pipeline")
    print(
        f"{'model':<24}{'exact':>8}{'exact@first':>12}{'pass@1':>8}{'empty':>8}{'load s':>8}{'ttft p50':>10}"
        f"{'total p50':>11}"
        f"{'total p95':>11}"
        f"{'final p50':>11}"
    )
    for r in results:
        print(
            f"{r['model']:<24}{r['exact']:>8.1%}{r['exact_first']:>12.1%}{r['pass']:>8.1%}{r['empty']:>8.1%}"
            f"{r['load_s']:>8.1f}"
            f"{r['ttft_p50']:>9.0f}ms{r['total_p50']:>9.0f}ms{r['total_p95']:>9.0f}ms"
            f"{r['final_p50']:>10.1f}s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
