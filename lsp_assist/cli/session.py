"""Run the real pipeline in-process for the CLI (complete, demo): same Runtime as the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsp_assist.cli.positions import language_of
from lsp_assist.domain import Cursor, Suggestion
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.server import Runtime, build_runtime


def open_runtime(workspace: Path | None = None, overrides: dict[str, Any] | None = None) -> Runtime:
    return build_runtime([workspace] if workspace else [], overrides)


async def complete_text(
    rt: Runtime, path: Path, text: str, line: int, col: int, *, version: int = 1, tier: str = "fast"
) -> Suggestion:
    """Open `text` as `path` (absolute) and complete at the 0-based code-point position."""
    uri = "file://" + str(path)
    if rt.store.get(uri) is not None:
        rt.store.close(uri)
    rt.store.open(uri, language_of(path), version, text, str(path))
    assert rt.engine is not None
    return await rt.engine.complete(
        CompletionRequest(uri=uri, cursor=Cursor(line, col), invoked=True, tier=tier)
    )
