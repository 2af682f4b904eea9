"""`lsp-assist complete FILE:LINE:COL`: one suggestion on stdout, its latency stages on stderr."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from lsp_assist.cli.positions import parse_location
from lsp_assist.logs import setup_logging

#: Nothing refines or extends a one-shot answer (the command exits), so it reads its whole
#: prompt and prints the whole line: the jump budget's cut prompt and the answer budget's
#: partial line exist for an editor, where the rest follows. Cut, `complete` at
#: json/decoder.py's `return ` read 44 tokens and answered `1`. The user waits for this one
#: answer: a cold read of the code model's whole prompt (~4 s here) is not a timeout.
WHOLE_PROMPT: dict[str, Any] = {
    "local": {
        "prompt_budget_ms": 0,
        "answer_budget_ms": 0,
        "first_token_timeout_ms": 30_000,
        "total_timeout_ms": 60_000,
    },
    "completion": {"deadline_ms": 90_000},
}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("complete", help="print the suggestion at FILE:LINE:COL (1-based)")
    p.add_argument("location", type=parse_location, metavar="FILE:LINE:COL")
    p.add_argument("--tier", default="fast", choices=("fast", "quality", "backup"))
    p.add_argument("--json", action="store_true", help="one JSON object with the text and the stages")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_level or "warning", args.log_file)
    path, line, col = args.location
    path = path.resolve()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        print(f"lsp-assist: cannot read {path}: {exc}", file=sys.stderr)
        return 1
    return asyncio.run(_run(args, path, text, line, col))


async def _run(args: argparse.Namespace, path: Any, text: str, line: int, col: int) -> int:
    from lsp_assist.cli.session import complete_at, open_runtime, open_text, wait_for_model

    rt = open_runtime(path.parent, WHOLE_PROMPT)
    try:
        await wait_for_model(rt, tier=args.tier)  # loads that tier's model, no other
        result = await complete_at(rt, open_text(rt, path, text), line, col, tier=args.tier)
    finally:
        await rt.aclose()
    stages = {k: round(v, 2) for k, v in result.stages.items()}
    if args.json:
        print(
            json.dumps(
                {
                    "text": result.text,
                    "outcome": result.outcome.value,
                    "tier": result.tier,
                    "provider": result.provider,
                    "model": result.model,
                    "stages_ms": stages,
                }
            )
        )
    else:
        sys.stdout.write(result.text + ("\n" if result.text and not result.text.endswith("\n") else ""))
        sys.stdout.flush()
        parts = " ".join(f"{k}={v:.1f}ms" for k, v in stages.items())
        print(f"[{result.outcome.value} via {result.tier}/{result.provider or '-'}] {parts}", file=sys.stderr)
    return 0
