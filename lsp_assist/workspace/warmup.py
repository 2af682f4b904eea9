"""Warmup: everything that makes the first suggestion as fast as the hundredth.

`run_warmup` (the `lspAssist.warmCache` command and `lsp-assist warmup`):
1. builds or refreshes the workspace index (worker thread) and feeds cross-file context;
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
from typing import Any

from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, ModelRequest, PromptContext
from lsp_assist.errors import LspAssistError, PolicyError, QuotaExceeded
from lsp_assist.pipeline.request import CompletionRequest

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 3.0
CONTEXT_DEADLINE_MS = 15.0  # the same deadline as the request path, so keys agree


async def run_warmup(
    runtime: Any, progress: Callable[[str], None] | None = None, *, connections: bool = True
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


async def prime_local_model(runtime: Any) -> bool:
    """One tiny completion on an open document, so llama.cpp caches that prompt prefix."""
    engine = runtime.engine
    provider = runtime.providers.get("fast")
    if engine is None or provider is None or provider.name != "local":
        return False
    for doc in runtime.store.documents():
        if runtime.governance.boundary.excluded(doc.path) is not None:
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


def recent_files(runtime: Any, limit: int) -> list[str]:
    """Indexed files changed recently: `git log` order when git answers, else newest mtime."""
    out: list[str] = []
    for idx in runtime.workspace.indexes.values():
        for rel in _git_recent(idx.root):
            path = os.path.join(idx.root, rel)
            if path in idx.records and path not in out:
                out.append(path)
        if not out:
            out.extend(idx.recent_paths(limit))
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


async def precompute(runtime: Any) -> dict[str, Any]:
    """Fill the suggestion cache at likely positions; stops at the limit or the quota."""
    engine = runtime.engine
    cfg = runtime.config
    limit = max(0, cfg.workspace.precompute_limit)
    provider = runtime.providers.get("fast")
    if engine is None or provider is None or limit == 0:
        return {"precomputed": 0}
    c = engine.c
    tier = cfg.tier("fast")
    open_paths = {d.path for d in runtime.store.documents()}
    paths = await asyncio.to_thread(recent_files, runtime, limit)
    done = skipped = 0
    stopped: str | None = None
    for path in paths:
        if done >= limit:
            break
        if path in open_paths or c.governance.boundary.excluded(path) is not None:
            skipped += 1
            continue
        try:
            text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8", errors="replace")
        except OSError:
            skipped += 1
            continue
        rec = runtime.workspace.index_for(path).records.get(path)
        language = rec.language if rec is not None else "plaintext"
        doc = Document(Path(path).as_uri(), language, 0, text, path)
        for cursor in likely_cursors(doc):
            if done >= limit:
                break
            others = [
                d
                for d in runtime.store.documents()
                if d.uri != doc.uri and not c.governance.boundary.excluded(d.path)
            ]
            ctx = c.context.build(
                doc, cursor, tier.context_chars, others=others, deadline_ms=CONTEXT_DEADLINE_MS
            )
            ctx = c.redact_context(ctx)
            key = ctx.key("fast", provider.model)
            if c.cache.get(key) is not None:
                skipped += 1
                continue
            try:
                text_out = await _generate(runtime, ctx)
            except QuotaExceeded as exc:
                stopped = f"warmup quota reached ({exc})"
                break
            except (PolicyError, LspAssistError) as exc:
                stopped = f"precompute stopped: {exc}"
                break
            if text_out:
                c.cache.put(key, text_out)
                done += 1
        if stopped:
            break
    out: dict[str, Any] = {"precomputed": done, "precompute_skipped": skipped}
    if stopped:
        out["precompute_stopped"] = stopped
    return out


async def _generate(runtime: Any, ctx: PromptContext) -> str:
    """One model call for the `warmup` feature, shaped like the request path's."""
    engine = runtime.engine
    c = engine.c
    cfg = runtime.config
    tier = cfg.tier("fast")
    provider = c.providers["fast"]
    permit = c.governance.admit("warmup", "fast", c.provider_key("fast"))
    enrich = cfg.completion.enrichment and ctx.mode == "multi"
    budget = max(tier.max_tokens, cfg.completion.enrichment_max_tokens) if enrich else tier.max_tokens
    req = ModelRequest(
        context=ctx,
        max_tokens=budget if enrich else min(budget, ctx.max_tokens or budget),
        temperature=tier.temperature,
        stop=tuple(dict.fromkeys(ctx.stop)),
        fim_template=tier.fim_template,
        feature="warmup",
    )
    asm = c.assembler(ctx)
    usage = None
    error: BaseException | None = None
    t0 = time.perf_counter()

    async def consume() -> None:
        nonlocal usage
        async for chunk in provider.stream(req):
            if chunk.usage is not None:
                usage = chunk.usage
            if chunk.text and asm.feed(chunk.text):
                break

    outcome = "model"
    try:
        await asyncio.wait_for(consume(), timeout=tier.total_timeout_ms / 1000.0)
    except asyncio.CancelledError:
        outcome = "cancelled"
        raise
    except Exception as exc:  # a timeout or provider failure ends this one precompute
        error, outcome = exc, "error"
    finally:
        stages = {"total": (time.perf_counter() - t0) * 1000.0}
        permit.finish(
            outcome,
            usage,
            stages,
            ctx.size,
            error,
            provider.model,
            provider.endpoint_host,
            provider=provider.name,
        )
    if error is not None:
        log.info("precompute: model call failed (%s)", type(error).__name__)
        return ""
    text: str = asm.finish()
    return text
