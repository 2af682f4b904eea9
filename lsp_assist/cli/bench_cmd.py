"""`lsp-assist bench`: the standard latency scenarios against lsp-assist, tabby-agent and any
language server given, one loopback model, the figures side by side (docs/bench.md).

The bench itself (asyncio, the model, the client) is imported when the command runs, not
when the parser is built: every `lsp-assist serve` builds it.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from lsp_assist.bench.recipes import (
    APIS,
    REQUESTS,
    Recipe,
    custom_recipe,
    find_tabby_agent,
    lsp_assist_recipe,
    tabby_agent_recipe,
)

BUILT_IN = ("lsp-assist", "tabby-agent")
MAX_N = 200  # bounded: a run never plays more trials than this per scenario


class _ForLastServer(argparse.Action):
    """--api, --request, --init-options: a setting of the --server given just before."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: str | None = None
    ) -> None:
        servers: list[dict[str, str]] = getattr(ns, "server", None) or []
        if not servers:
            parser.error(f"{opt} applies to the --server before it; give --server NAME=COMMAND first")
        servers[-1][self.dest] = str(value)


class _Server(argparse.Action):
    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: str | None = None
    ) -> None:
        servers: list[dict[str, str]] = list(getattr(ns, "server", None) or [])
        servers.append({"spec": str(value)})
        ns.server = servers


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "bench",
        help="play the standard latency scenarios against language servers, one loopback model",
        description=(
            "Cold requests, jumps, keys after a pause or a jump, cache hits, typing through,"
            " accepting and typing bursts, against lsp-assist, tabby-agent and any server given,"
            " each answer split at a loopback model (127.0.0.1) into the server's time before the"
            " model call and after the token it needed; beside them the model's own floor."
        ),
    )
    p.add_argument("--servers", default=",".join(BUILT_IN), help="built-in servers to run (comma-separated)")
    p.add_argument(
        "--server",
        action=_Server,
        default=[],
        metavar="NAME=COMMAND",
        help="another server: its stdio command; {base_url}, {origin}, {home} are filled in",
    )
    p.add_argument(
        "--api",
        action=_ForLastServer,
        choices=APIS,
        help="the model API the --server before calls (default openai)",
    )
    p.add_argument(
        "--request",
        action=_ForLastServer,
        choices=tuple(REQUESTS),
        help="what the --server before answers: inline (textDocument/inlineCompletion,"
        " the default) or completion (textDocument/completion)",
    )
    p.add_argument(
        "--init-options",
        action=_ForLastServer,
        metavar="JSON",
        help="initializationOptions for the --server before",
    )
    p.add_argument("--tabby-agent", default="", metavar="CLI_JS", help="tabby-agent's dist/cli.js")
    # The defaults are lsp_assist.bench.run.Settings' (a run of both servers: ~2 minutes).
    p.add_argument("--n", type=int, default=10, help="trials per scenario")
    p.add_argument("--bursts", type=int, default=4, help="typing bursts of 12 keys")
    p.add_argument("--ttft-ms", type=float, default=120.0, help="the model's time to first token")
    p.add_argument("--tokens-per-s", type=float, default=125.0, help="the model's token rate")
    p.set_defaults(run=run)


def recipes(args: argparse.Namespace) -> tuple[list[Recipe], list[tuple[str, str]]]:
    """The servers to run, and those asked for that cannot be: (name, why)."""
    chosen: list[Recipe] = []
    skipped: list[tuple[str, str]] = []
    for name in (n.strip() for n in str(args.servers).split(",") if n.strip()):
        if name == "lsp-assist":
            chosen.append(lsp_assist_recipe())
        elif name == "tabby-agent":
            cli = find_tabby_agent(args.tabby_agent)
            if cli is None:
                why = "not found: `npm install --prefix benchmarks/.peers tabby-agent@1.5.0` or --tabby-agent"
                skipped.append((name, why))
            else:
                chosen.append(tabby_agent_recipe(cli))
        else:
            raise ValueError(f"no built-in server {name!r} (built in: {', '.join(BUILT_IN)}); use --server")
    for spec in args.server:
        chosen.append(
            custom_recipe(
                spec["spec"],
                spec.get("api", "openai"),
                spec.get("request", "inline"),
                spec.get("init_options", ""),
            )
        )
    if not chosen and not skipped:
        raise ValueError("no server to run: --servers NAME,... or --server NAME=COMMAND")
    return chosen, skipped


def settings(args: argparse.Namespace) -> Any:
    from lsp_assist.bench.run import Settings

    for name in ("n", "bursts"):
        value = getattr(args, name)
        if not 0 <= value <= MAX_N:
            raise ValueError(f"--{name} must be 0..{MAX_N}, got {value}")
    if args.ttft_ms < 0 or args.tokens_per_s <= 0:
        raise ValueError("--ttft-ms must be >= 0 and --tokens-per-s > 0")
    return Settings(args.n, args.bursts, args.ttft_ms, args.tokens_per_s)


def run(args: argparse.Namespace) -> int:
    from lsp_assist.bench.run import bench
    from lsp_assist.bench.table import ServerResult

    try:
        chosen, skipped = recipes(args)
        chosen_settings = settings(args)
    except ValueError as exc:
        print(f"lsp-assist bench: {exc}")
        return 2
    not_run = [ServerResult(name, "", why_not=why) for name, why in skipped]
    print(asyncio.run(bench(chosen, chosen_settings, not_run)))
    return 0
