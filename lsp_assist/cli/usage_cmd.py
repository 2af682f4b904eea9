"""`lsp-assist usage`: requests, tokens, estimated cost, error/fallback rates and latency
percentiles by feature, tier and model, read from the audit log (and its rotated backups)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lsp_assist.governance.guard import default_audit_path
from lsp_assist.governance.policy import apply_policy, load_policy
from lsp_assist.governance.settings import GovernanceSettings, parse_settings
from lsp_assist.telemetry.usage import build_report, parse_since, read_records, render_text
from lsp_assist.telemetry.usage_html import render_html


def add_parser(sub: Any) -> None:
    p = sub.add_parser("usage", help="requests, tokens, cost and latency from the audit log")
    p.add_argument("--since", help="only calls since: 7d, 24h, 30m or an ISO date (default: all)")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report with plots")
    p.add_argument("--audit", metavar="PATH", action="append", help="audit log file (repeatable)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(run=run)


def _settings_and_paths(args: argparse.Namespace) -> tuple[GovernanceSettings, list[Path]]:
    settings = GovernanceSettings()
    cache_dir: Path | None = None
    try:
        from lsp_assist.config.loader import load_config, resolve_cache_dir

        cfg = load_config().config
        settings, _ = parse_settings(cfg.governance)
        policy, _ = load_policy()
        settings, _ = apply_policy(settings, policy)
        cache_dir = resolve_cache_dir(cfg)
    except Exception as e:  # the report still works from --audit with no config
        print(f"note: configuration not loaded ({e.__class__.__name__}); prices unknown", file=sys.stderr)
    if args.audit:
        return settings, [Path(p).expanduser() for p in args.audit]
    if settings.audit.path:
        return settings, [Path(settings.audit.path).expanduser()]
    if cache_dir is None:
        return settings, []
    return settings, [default_audit_path(cache_dir)]


def run(args: argparse.Namespace, settings: GovernanceSettings | None = None) -> int:
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    loaded, paths = _settings_and_paths(args)
    settings = settings or loaded
    if not paths:
        print("error: no audit log found (use --audit PATH)", file=sys.stderr)
        return 2
    records, bad = read_records(paths, since)
    report = build_report(records, settings.prices, since, bad)
    if args.json:
        print(json.dumps(report.to_dict(), default=str))
    else:
        print(f"audit: {', '.join(str(p) for p in paths)}")
        print(render_text(report), end="")
    if args.html:
        try:
            Path(args.html).write_text(render_html(report), encoding="utf-8")
        except OSError as e:
            print(f"error: cannot write {args.html}: {e.strerror}", file=sys.stderr)
            return 1
        print(f"wrote {args.html}")
    return 0
