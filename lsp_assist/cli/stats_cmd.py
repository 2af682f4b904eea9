"""`lsp-assist stats`: latency percentiles per stage and outcome from the recorded requests,
and what users kept of the suggestions (acceptance and retention, from the audit log)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from lsp_assist.config.loader import load_config, resolve_cache_dir
from lsp_assist.telemetry.stats import STATS_FILE, format_report, load_records, summarize
from lsp_assist.telemetry.usage import (
    HEADLINE_CHECKPOINT,
    build_report,
    format_figure,
    read_records,
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("stats", help="latency stages (p50/p95/p99), outcomes, waste, hit rate, acceptance")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def _audit(cfg: Any, cache_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The audit log's path and the model prices (for cost per retained character)."""
    from lsp_assist.governance.guard import default_audit_path
    from lsp_assist.governance.settings import parse_settings

    settings, _ = parse_settings(cfg.governance)
    path = Path(settings.audit.path).expanduser() if settings.audit.path else default_audit_path(cache_dir)
    return path, dict(settings.prices)


def acceptance_lines(figures: dict[str, Any]) -> list[str]:
    """The suggestion figures in a few lines (`lsp-assist usage` has them per group)."""
    if not figures.get("shown") and not figures.get("accepted_chars"):
        return ["suggestions: no editor events recorded yet"]
    f = {k: format_figure(k, v) for k, v in figures.items() if not isinstance(v, dict)}
    kept = figures["retained_chars"]
    rate = figures["retention_rate"]
    return [
        f"suggestions shown: {f['shown']}   accepted: {f['accepted']} ({f['acceptance_rate']})"
        f"   whole/partial/dismissed/typed over: {f['accepted_whole']}/{f['accepted_partial']}"
        f"/{f['dismissed']}/{f['typed_over']}",
        f"accepted chars: {f['accepted_chars']}   retained 30s/2m/10m: "
        + "/".join(
            f"{kept[cp]} ({format_figure('acceptance_rate', rate[cp])})" for cp in ("30s", "2m", "10m")
        ),
        f"per model call: {f['accepted_chars_per_call']} accepted, {f['retained_chars_per_call']} retained"
        f" ({HEADLINE_CHECKPOINT})   per 1k prompt tokens: {f['accepted_chars_per_1k_prompt_tokens']}"
        f" accepted, {f['retained_chars_per_1k_prompt_tokens']} retained"
        f"   cost per retained char: {f['cost_per_retained_char']}",
    ]


def run(args: argparse.Namespace) -> int:
    cfg = load_config().config
    cache_dir = resolve_cache_dir(cfg)
    path = cache_dir / STATS_FILE
    records, accepted, wasted = load_records(path)
    rep = summarize(records, accepted=accepted, wasted=wasted)
    audit, prices = _audit(cfg, cache_dir)
    calls, _ = read_records([audit])
    figures = build_report(calls, prices).overall.acceptance()
    if args.json:
        print(json.dumps({**rep, "suggestions": figures}, default=str))
    else:
        print(f"stats from {path}")
        print(format_report(rep))
        print("")
        print(f"suggestions from {audit}")
        print("\n".join(acceptance_lines(figures)))
    return 0
