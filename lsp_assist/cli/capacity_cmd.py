"""`lsp-assist capacity`: how much model fleet N developers need, by simulating them typing."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from lsp_assist.capacity.report import format_report
from lsp_assist.capacity.sim import (
    LevelReport,
    Workload,
    auto_workers,
    endpoint_options,
    find_knee,
    run_level,
)
from lsp_assist.logs import setup_logging


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "capacity",
        help="simulate N developers typing against an endpoint: req/s, tokens/s, streams, latency, the knee",
    )
    p.add_argument(
        "--endpoint", required=True, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1"
    )
    p.add_argument("--model", default="default", help="model name sent to the endpoint")
    p.add_argument("--api", default="completions", choices=("completions", "chat"))
    p.add_argument("--api-key-env", default="", help="NAME of the environment variable holding the key")
    p.add_argument("--developers", default="1,2,5,10,20", help="comma-separated load levels")
    p.add_argument("--until-knee", action="store_true", help="stop at the first level past the knee")
    p.add_argument("--duration", type=float, default=20.0, help="seconds of typing per level")
    p.add_argument("--concurrency-limit", type=int, default=None, help="the endpoint's known limit")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=0, help="simulating processes (0: one per core from 30 on)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


async def simulate(args: argparse.Namespace) -> list[LevelReport]:
    opts = endpoint_options(args.endpoint, args.model, api=args.api, api_key_env=args.api_key_env)
    levels: list[LevelReport] = []
    for n in [int(x) for x in str(args.developers).split(",") if x.strip()]:
        workers = args.workers or auto_workers(n)
        levels.append(await run_level(n, Workload(args.duration, opts, seed=args.seed), workers=workers))
        if args.until_knee and find_knee(levels, args.concurrency_limit) is not None:
            break
    return levels


def run(args: argparse.Namespace) -> int:
    # Each simulated server would log its own fallbacks; the report says what matters.
    setup_logging(args.log_level or "error", args.log_file)
    levels = asyncio.run(simulate(args))
    if args.json:
        knee = find_knee(levels, args.concurrency_limit)
        print(json.dumps({"levels": [lv.as_dict() for lv in levels], "knee": knee and knee.developers}))
    else:
        print(format_report(levels, args.concurrency_limit))
    return 0
