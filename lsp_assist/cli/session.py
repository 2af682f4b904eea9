"""Run the real pipeline in-process for the CLI (complete, demo): same Runtime as the server."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from lsp_assist.cli.positions import language_of
from lsp_assist.domain import Cursor, Suggestion
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.server import Runtime, build_runtime

#: A one-shot command answers and exits: no user rests after it, so the refine model
#: (`local.refine_model`, 1.1 GB read in the background) would only delay the exit.
ONE_SHOT: dict[str, Any] = {"local": {"refine_model": ""}}


def open_runtime(workspace: Path | None = None, overrides: dict[str, Any] | None = None) -> Runtime:
    layered = dict(overrides or {})
    layered["local"] = {**ONE_SHOT["local"], **dict(layered.get("local") or {})}
    return build_runtime([workspace] if workspace else [], layered)


async def wait_for_model(rt: Runtime, *, quiet: bool = False, tier: str = "fast") -> None:
    """Wait for `tier`'s embedded model to load, with a line on stderr: a load is not a
    timeout. Only that one: another tier's model (the code model for escalations) would
    cost a one-shot command a second load and 1.1 GB it never uses."""
    models = rt.local_models([tier])
    if not models or all(m.loaded for m in models):
        return
    t0 = time.perf_counter()
    if not quiet:
        print(f"lsp-assist: loading the local model ({models[0].model})...", file=sys.stderr, flush=True)
    await rt.wait_for_models(tier=tier)
    for model in models:
        if model.loaded:
            await model.settled()
    if not quiet:
        ok = all(m.loaded for m in models)
        what = "ready" if ok else "did not load (offline engine instead)"
        print(f"lsp-assist: local model {what} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


def open_text(rt: Runtime, path: Path, text: str, *, version: int = 1) -> str:
    """Open `text` as `path` (absolute), replacing any open copy; its URI."""
    uri = "file://" + str(path)
    if rt.store.get(uri) is not None:
        rt.store.close(uri)
    rt.store.open(uri, language_of(path), version, text, str(path))
    return uri


async def complete_at(rt: Runtime, uri: str, line: int, col: int, *, tier: str = "fast") -> Suggestion:
    """An invoked completion at the 0-based code-point position of the open document `uri`."""
    assert rt.engine is not None
    return await rt.engine.complete(
        CompletionRequest(uri=uri, cursor=Cursor(line, col), invoked=True, tier=tier)
    )


async def complete_text(
    rt: Runtime, path: Path, text: str, line: int, col: int, *, version: int = 1
) -> Suggestion:
    """Open `text` as `path` (absolute) and complete at the 0-based code-point position."""
    return await complete_at(rt, open_text(rt, path, text, version=version), line, col)
