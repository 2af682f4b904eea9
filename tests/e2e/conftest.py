"""End-to-end harness: the real `lsp-assist serve` over stdio, driven like an editor."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parents[2]


def isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        LSP_ASSIST_CACHE_DIR=str(tmp_path / "cache"),
        LSP_ASSIST_CONFIG=str(tmp_path / "no-user-config.toml"),
        LSP_ASSIST_POLICY=str(tmp_path / "no-policy.toml"),
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def client_capabilities(encoding: str = "utf-16") -> types.ClientCapabilities:
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind(encoding)]),
        window=types.WindowClientCapabilities(work_done_progress=True),
        text_document=types.TextDocumentClientCapabilities(
            inline_completion=types.InlineCompletionClientCapabilities(),
            synchronization=types.TextDocumentSyncClientCapabilities(),
        ),
        workspace=types.WorkspaceClientCapabilities(configuration=False),
    )


def openai_tiers(base_url: str, api: str = "completions", **fast: Any) -> dict[str, Any]:
    tier = {
        "provider": "openai",
        "api": api,
        "base_url": base_url,
        "model": "fake-coder",
        "first_token_timeout_ms": 2000,
        "total_timeout_ms": 5000,
        **fast,
    }
    return {
        "tiers": {"fast": tier, "quality": {**tier, "max_tokens": 128}, "backup": {"provider": "offline"}}
    }


@contextlib.asynccontextmanager
async def lsp_session(
    tmp_path: Path,
    init_options: dict[str, Any] | None = None,
    *,
    env: dict[str, str] | None = None,
    capabilities: types.ClientCapabilities | None = None,
    before_initialize: Any = None,
    folders: list[Path] | None = None,
) -> AsyncIterator[LanguageClient]:
    """A started and initialized session; `folders` are the workspace folders (default: one,
    `tmp_path / "ws"`)."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    roots = folders or [workspace]
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "lsp_assist", "serve"],
        server_env=env or isolated_env(tmp_path),
    )
    client = await config.start()
    if before_initialize is not None:
        before_initialize(client)  # e.g. handlers for server-to-client requests
    try:
        client.init_result = await asyncio.wait_for(  # type: ignore[attr-defined]
            client.initialize_session(
                types.InitializeParams(
                    capabilities=capabilities or client_capabilities(),
                    initialization_options=init_options or {},
                    root_uri=roots[0].as_uri(),
                    workspace_folders=[types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in roots],
                )
            ),
            timeout=30,
        )
        yield client
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), timeout=15)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.stop(), timeout=5)


def doc_uri(tmp_path: Path, name: str) -> str:
    return (tmp_path / "ws" / name).as_uri()


def open_doc(client: LanguageClient, uri: str, text: str, language: str = "python", version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
        )
    )


async def inline(
    client: LanguageClient, uri: str, line: int, character: int, *, invoked: bool = True, timeout: float = 20
) -> types.InlineCompletionList | list[types.InlineCompletionItem] | None:
    kind = (
        types.InlineCompletionTriggerKind.Invoked if invoked else types.InlineCompletionTriggerKind.Automatic
    )
    return await asyncio.wait_for(
        client.text_document_inline_completion_async(
            types.InlineCompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
                context=types.InlineCompletionContext(trigger_kind=kind),
            )
        ),
        timeout=timeout,
    )


def texts(result: Any) -> list[str]:
    """What each item adds at the cursor: its insertText less the part its range covers (the
    characters typed since the suggestion was computed, which accepting replaces)."""
    if result is None:
        return []
    items = result.items if hasattr(result, "items") else result
    out = []
    for i in items:
        text = i.insert_text if isinstance(i.insert_text, str) else i.insert_text.value
        r = i.range
        covered = r.end.character - r.start.character if r is not None and r.start.line == r.end.line else 0
        out.append(text[covered:])
    return out
