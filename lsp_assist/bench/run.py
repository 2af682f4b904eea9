"""One bench run: the loopback model started once, each server in turn started from its recipe
in a temp dir of its own, the scenarios played, the server ended, the table printed."""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lsp_assist.bench.client import LspClient
from lsp_assist.bench.documents import COMPLETION, NEWLINE_TOKEN, TOKENS
from lsp_assist.bench.figures import Floor
from lsp_assist.bench.model import ModelProcess, Script
from lsp_assist.bench.recipes import Recipe
from lsp_assist.bench.scenarios import Session, play, warm_up
from lsp_assist.bench.table import ServerResult, format_table

STDERR_TAIL = 600  # characters of a failed server's stderr shown


@dataclass
class Settings:
    n: int = 10  # trials per scenario
    bursts: int = 4
    ttft_ms: float = 120.0
    tokens_per_s: float = 125.0


async def bench_server(recipe: Recipe, model: ModelProcess, settings: Settings) -> tuple[ServerResult, Floor]:
    """The scenarios against one server; the model's own times while it ran."""
    result = ServerResult(recipe.name, recipe.request, api=recipe.api)
    model.reset()
    with tempfile.TemporaryDirectory(prefix=f"lsp-assist-bench-{recipe.name}-") as td:
        home = Path(td)
        cmd, env, init = recipe.build(model.base_url, home)
        stderr = home / "stderr.log"
        try:
            client = await LspClient.start(cmd, env, stderr)
        except OSError as exc:
            result.why_not = f"could not start {cmd[0]!r}: {exc}"
            return result, Floor()
        try:
            await client.initialize((home / "workspace").as_uri(), init)
            session = Session(client, recipe, model)
            if not await warm_up(session):
                result.why_not = "no suggestion while warming up" + _tail(stderr)
                return result, Floor()
            result.figures = await play(session, settings.n, settings.bursts)
        except (TimeoutError, asyncio.TimeoutError, ConnectionError) as exc:
            result.why_not = f"{type(exc).__name__} {exc}".strip() + _tail(stderr)
            return result, Floor()
        finally:
            await client.close()
        records = model.records()
        result.called = tuple(sorted({r.api for r in records}))
        return result, Floor.of(records)


def _tail(stderr: Path) -> str:
    try:
        text = stderr.read_text(errors="replace").strip()
    except OSError:
        return ""
    return f"; its stderr ends: {text[-STDERR_TAIL:]}" if text else ""


def header(settings: Settings) -> str:
    return (
        f"lsp-assist bench: loopback model (127.0.0.1), time to first token {settings.ttft_ms:.0f} ms,"
        f" {settings.tokens_per_s:.0f} tokens/s, {TOKENS} tokens, the first line ends at token"
        f" {NEWLINE_TOKEN + 1}; {settings.n} trials per scenario, {settings.bursts} bursts of 12 keys"
    )


async def bench(recipes: list[Recipe], settings: Settings, skipped: list[ServerResult]) -> str:
    """Every recipe in turn against one loopback model; the table (the `skipped` servers
    listed under it with why)."""
    script = Script(COMPLETION, settings.ttft_ms, settings.tokens_per_s)
    results: list[ServerResult] = []
    floor = Floor(expected_full=script.token_at_s(TOKENS - 1) * 1000.0)
    with ModelProcess(script) as model:
        for recipe in recipes:
            result, seen = await bench_server(recipe, model, settings)
            results.append(result)
            floor.extend(seen)
    return format_table(results + skipped, floor, header(settings))
