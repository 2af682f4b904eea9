"""`lsp-assist stats`: latency percentiles per stage and outcome from the recorded requests."""

from __future__ import annotations

import argparse
import json
from typing import Any

from lsp_assist.config.loader import load_config, resolve_cache_dir
from lsp_assist.telemetry.stats import STATS_FILE, format_report, load_records, summarize


def add_parser(sub: Any) -> None:
    p = sub.add_parser("stats", help="latency stages (p50/p95/p99), outcomes, waste and hit rate")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    cfg = load_config().config
    path = resolve_cache_dir(cfg) / STATS_FILE
    records, accepted, wasted = load_records(path)
    rep = summarize(records, accepted=accepted, wasted=wasted)
    if args.json:
        print(json.dumps(rep, default=str))
    else:
        print(f"stats from {path}")
        print(format_report(rep))
    return 0
