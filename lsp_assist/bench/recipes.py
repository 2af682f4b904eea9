"""How to start each server against the loopback model: a `Recipe` per server.

A recipe is a command, its environment, the request it speaks (`inline`:
textDocument/inlineCompletion, `completion`: textDocument/completion), the model API it
calls (`openai` or `tabby`) and optional initializationOptions. Built in: lsp-assist itself
and tabby-agent (npm). Any other server: `--server NAME=COMMAND`, where the command may say
`{base_url}` (http://127.0.0.1:PORT/v1), `{origin}` (http://127.0.0.1:PORT) and `{home}` (a
fresh temp dir, also its HOME); the same values are in its environment as
LSP_ASSIST_BENCH_BASE_URL, LSP_ASSIST_BENCH_ORIGIN and HOME.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REQUESTS = {"inline": "textDocument/inlineCompletion", "completion": "textDocument/completion"}
APIS = ("openai", "tabby")
TABBY_CLI = Path("node_modules") / "tabby-agent" / "dist" / "cli.js"
PREFETCH_TOKENS = 31  # lsp-assist's prefetch calls, told apart by this max_tokens


@dataclass
class Recipe:
    name: str
    api: str = "openai"
    request: str = "inline"
    # (model base URL, a fresh temp dir) -> (command, environment, initializationOptions)
    build: Callable[[str, Path], tuple[list[str], dict[str, str], dict[str, Any] | None]] = field(
        default=lambda base_url, home: ([], {}, None)
    )
    # Marks a model request the server made for no request of the editor's (a prefetch), by
    # its body: counted apart in the model calls.
    background: Callable[[dict[str, Any]], bool] = field(default=lambda body: False)

    @property
    def method(self) -> str:
        return REQUESTS[self.request]


def lsp_assist_recipe() -> Recipe:
    """This lsp-assist (`python -m lsp_assist serve`), its fast tier on the loopback model
    (OpenAI /v1/completions), nothing else configured; debounce off, one item per answer
    (as tabby-agent gives: the server's own time, not the wait for more choices)."""

    def build(base_url: str, home: Path) -> tuple[list[str], dict[str, str], dict[str, Any] | None]:
        config = home / "config.toml"
        config.write_text(
            "[tiers.fast]\n"
            'provider = "openai"\napi = "completions"\n'
            f'base_url = "{base_url}"\nmodel = "bench-loopback"\n'
            "first_token_timeout_ms = 5000\ntotal_timeout_ms = 10000\n\n"
            '[tiers.quality]\nprovider = "offline"\n\n[tiers.backup]\nprovider = "offline"\n\n'
            "[completion]\ndebounce_min_ms = 0\ndebounce_max_ms = 0\ninvoked_choices = 1\n"
            f"prefetch_max_tokens = {PREFETCH_TOKENS}\n"
        )
        env = {
            "LSP_ASSIST_CONFIG": str(config),
            "LSP_ASSIST_CACHE_DIR": str(home / "cache"),
            "LSP_ASSIST_POLICY": str(home / "no-policy.toml"),
            "LSP_ASSIST_LOG_LEVEL": "warning",
        }
        return [sys.executable, "-m", "lsp_assist", "serve"], env, None

    def prefetch(body: dict[str, Any]) -> bool:
        return body.get("max_tokens") == PREFETCH_TOKENS

    return Recipe("lsp-assist", "openai", "inline", build, prefetch)


def find_tabby_agent(explicit: str = "") -> Path | None:
    """tabby-agent's dist/cli.js: the path given, else $LSP_ASSIST_TABBY_AGENT, else an
    install in ./benchmarks/.peers or ./.peers (`npm install --prefix DIR tabby-agent@1.5.0`),
    else the global npm install."""
    for given in (explicit, os.environ.get("LSP_ASSIST_TABBY_AGENT", "")):
        if given:
            return Path(given) if Path(given).is_file() else None
    for prefix in (Path("benchmarks") / ".peers", Path(".peers")):
        if (prefix / TABBY_CLI).is_file():
            return (prefix / TABBY_CLI).resolve()
    on_path = shutil.which("tabby-agent")
    if on_path is not None:
        return Path(on_path).resolve()
    npm = shutil.which("npm")
    if npm is None:
        return None
    try:
        root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    cli = Path(root.strip()) / "tabby-agent" / "dist" / "cli.js"
    return cli if root.strip() and cli.is_file() else None


def tabby_agent_recipe(cli: Path) -> Recipe:
    """tabby-agent (`node dist/cli.js --lsp --stdio`), HOME a temp dir whose
    ~/.tabby-client/agent/config.toml points it at the loopback Tabby API, debounce 0 ms."""

    def build(base_url: str, home: Path) -> tuple[list[str], dict[str, str], dict[str, Any] | None]:
        conf = home / ".tabby-client" / "agent"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "config.toml").write_text(
            f'[server]\nendpoint = "{base_url.removesuffix("/v1")}"\n\n'
            '[completion.debounce]\nmode = "fixed"\ninterval = 0\n\n'
            "[anonymousUsageTracking]\ndisable = true\n"
        )
        node = shutil.which("node") or "node"
        return [node, str(cli), "--lsp", "--stdio"], {"HOME": str(home)}, None

    return Recipe("tabby-agent", "tabby", "completion", build)


def custom_recipe(spec: str, api: str = "openai", request: str = "inline", init: str = "") -> Recipe:
    """`NAME=COMMAND` from the command line: the command split as a shell would, with
    {base_url}, {origin} and {home} filled in; `init` a JSON initializationOptions (the same
    placeholders in its strings)."""
    name, sep, command = spec.partition("=")
    if not sep or not name.strip() or not command.strip():
        raise ValueError(f"--server wants NAME=COMMAND, got {spec!r}")
    if api not in APIS or request not in REQUESTS:
        raise ValueError(f"--api is one of {APIS}, --request one of {tuple(REQUESTS)}")
    if init:
        json.loads(_fill(init, {"base_url": "", "origin": "", "home": ""}))  # a ValueError now, not mid-run

    def build(base_url: str, home: Path) -> tuple[list[str], dict[str, str], dict[str, Any] | None]:
        values = {"base_url": base_url, "origin": base_url.removesuffix("/v1"), "home": str(home)}
        cmd = [_fill(part, values) for part in shlex.split(command)]
        env = {
            "HOME": str(home),
            "LSP_ASSIST_BENCH_BASE_URL": values["base_url"],
            "LSP_ASSIST_BENCH_ORIGIN": values["origin"],
        }
        options = json.loads(_fill(init, values)) if init else None
        return cmd, env, options

    return Recipe(name.strip(), api, request, build)


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text
