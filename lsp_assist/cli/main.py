"""The `lsp-assist` command line: serve, complete, demo, doctor, stats, context, usage, warmup,
capacity."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from lsp_assist import __version__

# Subcommands that live in their own modules: each has add_parser(subparsers) and run(args).
_MODULES = (
    "lsp_assist.cli.serve_cmd",
    "lsp_assist.cli.complete_cmd",
    "lsp_assist.cli.demo_cmd",
    "lsp_assist.cli.doctor_cmd",
    "lsp_assist.cli.stats_cmd",
    "lsp_assist.cli.context_cmd",
    "lsp_assist.cli.usage_cmd",
    "lsp_assist.cli.warmup_cmd",
    "lsp_assist.cli.capacity_cmd",
    "lsp_assist.cli.bench_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lsp-assist",
        description="Low-latency LLM inline completions (ghost text) as a language server.",
    )
    parser.add_argument("--version", action="version", version=f"lsp-assist {__version__}")
    parser.add_argument("--log-level", default=None, help="debug | info | warning | error")
    parser.add_argument("--log-file", default=None, help="log to this file instead of stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:  # a subcommand whose optional parts are missing
            if exc.name and exc.name.startswith("lsp_assist"):
                continue
            raise
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.command is None:
        args = parser.parse_args(["serve", *(argv or sys.argv[1:])])
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return 2
    try:
        return int(run(args))
    except KeyboardInterrupt:
        return 130
