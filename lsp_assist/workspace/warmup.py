"""Warmup: everything that makes the first suggestion as fast as the hundredth.

`run_warmup` (the `lspAssist.warmCache` command and `lsp-assist warmup`):
1. builds or refreshes the workspace index (the indexer process) and feeds cross-file context;
2. opens and keeps alive each tier's connection, and starts the local model (`Runtime.warm`);
3. for the embedded model, primes its prompt cache with a tiny request on an open document;
4. only when `workspace.precompute` is on, within the `warmup` quota, precomputes
   suggestions at likely positions (the end) of recently changed files (git history when
   available, else modification time) into the suggestion cache, under exactly the key
   the request path computes, so the first request there is a cache hit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from lsp_assist.config.schema import Config
from lsp_assist.documents.store import Document, DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.errors import LspAssistError, PolicyError, QuotaExceeded
from lsp_assist.pipeline.engine import CompletionEngine
from lsp_assist.pipeline.launcher import StreamSpec
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import CompletionRequest, Target
from lsp_assist.providers.base import Provider
from lsp_assist.workspace.service import WorkspaceService

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 3.0


class WarmupHost(Protocol):
    """What warmup needs of the running server (`lsp_assist.server.Runtime`)."""

    config: Config
    store: DocumentStore
    workspace: WorkspaceService
    providers: dict[str, Provider]

    @property
    def engine(self) -> CompletionEngine | None: ...

    async def warm(self) -> None: ...


async def run_warmup(
    runtime: WarmupHost, progress: Callable[[str], None] | None = None, *, connections: bool = True
) -> dict[str, Any]:
    """Warm everything; returns a JSON-able summary. Never raises for a partial failure.

    `connections=False` (the CLI, whose process ends right after) skips opening connections
    and starting the local model unless precompute needs them.
    """
    t0 = time.perf_counter()
    report = progress or (lambda _m: None)
    summary: dict[str, Any] = {}
    if runtime.config.workspace.index:
        report("indexing the workspace")
        summary.update(await runtime.workspace.refresh(progress=report))
    else:
        summary["index"] = "disabled (workspace.index = false)"
    if connections:
        report("opening connections")
        await runtime.warm()
        summary["connections"] = len({id(p) for p in runtime.providers.values()})
        summary["primed"] = await prime_local_model(runtime)
    if runtime.config.workspace.precompute:
        report("precomputing suggestions in recently changed files")
        pre = await precompute(runtime)
        summary.update(pre)
    else:
        summary["precomputed"] = 0
    if runtime.engine is not None:
        summary["cache_bytes"] = runtime.engine.c.cache.volume_bytes() + int(summary.get("index_bytes", 0))
    summary["total_seconds"] = round(time.perf_counter() - t0, 3)
    report("done")
    return summary


async def prime_local_model(runtime: WarmupHost) -> bool:
    """One tiny completion on an open document, so llama.cpp caches that prompt prefix."""
    engine = runtime.engine
    provider = runtime.providers.get("fast")
    if engine is None or provider is None or provider.name != "local":
        return False
    for doc in runtime.store.documents():
        if engine.prompts.excluded(doc.snapshot()) is not None:
            continue
        last = max(0, doc.line_count - 1)
        cursor = Cursor(last, len(doc.line(last)))
        try:
            await engine.complete(CompletionRequest(uri=doc.uri, cursor=cursor, invoked=True))
        except Exception as exc:  # best effort
            log.info("priming the local model failed: %s", exc)
            return False
        return True
    return False


def recent_files(runtime: WarmupHost, limit: int) -> list[str]:
    """Indexed files changed recently: `git log` order when git answers, else newest mtime."""
    out: list[str] = []
    ws = runtime.workspace
    for root in ws.stores:
        for rel in _git_recent(root):
            path = os.path.join(root, rel)
            if path not in out and ws.has_path(path):
                out.append(path)
    if not out:
        out.extend(ws.recent_paths(limit))
    return out[:limit]


def _git_recent(root: str) -> list[str]:
    try:
        proc = subprocess.run(
            ["git", "-C", root, "log", "--name-only", "-n", "20", "--pretty=format:"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return list(dict.fromkeys(line.strip() for line in proc.stdout.splitlines() if line.strip()))


def likely_cursors(doc: Document) -> list[Cursor]:
    """Where a returning author types first: the end of the file."""
    last = max(0, doc.line_count - 1)
    return [Cursor(last, len(doc.line(last)))]


async def precompute(runtime: WarmupHost) -> dict[str, Any]:
    """Fill the suggestion cache at likely positions; stops at the limit or the quota."""
    engine = runtime.engine
    cfg = runtime.config
    limit = max(0, cfg.workspace.precompute_limit)
    provider = runtime.providers.get("fast")
    if engine is None or provider is None or limit == 0:
        return {"precomputed": 0}
    prompts = engine.prompts
    open_paths = {d.path for d in runtime.store.documents()}
    paths = await asyncio.to_thread(recent_files, runtime, limit)
    done = skipped = 0
    stopped: str | None = None
    for path in paths:
        if done >= limit:
            break
        if path in open_paths or prompts.governance.excluded(path) is not None:
            skipped += 1
            continue
        try:
            text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8", errors="replace")
        except OSError:
            skipped += 1
            continue
        language = await asyncio.to_thread(runtime.workspace.language_of, path) or "plaintext"
        doc = Document(Path(path).as_uri(), language, 0, text, path)
        for cursor in likely_cursors(doc):
            if done >= limit:
                break
            # Exactly the prompt (and key) the request path builds at this position.
            prompt = prompts.for_document(doc, cursor, "fast")
            if engine.answers.cached(prompt.key) is not None:
                skipped += 1
                continue
            target = engine.prompts.target(doc.snapshot(), cursor)
            try:
                text_out = await _generate(engine, target, prompt)
            except QuotaExceeded as exc:
                stopped = f"warmup quota reached ({exc})"
                break
            except (PolicyError, LspAssistError) as exc:
                stopped = f"precompute stopped: {exc}"
                break
            if text_out:
                done += 1
        if stopped:
            break
    out: dict[str, Any] = {"precomputed": done, "precompute_skipped": skipped}
    if stopped:
        out["precompute_stopped"] = stopped
    return out


async def _generate(engine: CompletionEngine, target: Target, prompt: Prompt) -> str:
    """One model call for the `warmup` feature through the request path's launcher: the
    same request shape and governance; the answer lands in the cache under `prompt.key`.
    Background work: it never takes the local model's only slot from a waited-for stream."""
    spec = StreamSpec(target, prompt, feature="warmup", live=False, speculative=True, remember=False)
    flight = await engine.launcher.launch(spec)
    try:
        result = await asyncio.shield(flight.final)
    except asyncio.CancelledError:
        engine.launcher.abort(flight)
        raise
    if result.error is not None:
        log.info("precompute: model call failed (%s)", type(result.error).__name__)
        return ""
    return "" if result.aborted else result.text
