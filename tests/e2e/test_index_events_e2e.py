"""The workspace index follows file events over real stdio (`workspace/didChangeWatchedFiles`)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.e2e.conftest import client_capabilities, doc_uri, inline, lsp_session, open_doc, openai_tiers
from tests.fakes.fake_model_server import FakeModelServer, Script, prompt_of

LATER = "def settle_invoice(invoice_id: int, amount_cents: int) -> bool:\n    return True\n"
USER = "from billing import settle_invoice\n\nok = settle_invoice("
DEFINITION = "def settle_invoice(invoice_id: int, amount_cents: int)"


def _watching() -> types.ClientCapabilities:
    caps = client_capabilities()
    caps.workspace = types.WorkspaceClientCapabilities(
        configuration=False,
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
    )
    return caps


async def test_a_created_file_reaches_cross_file_context_through_a_file_event(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "other.py").write_text("def unrelated():\n    pass\n")
    fake.default = Script(text="1, 2)\n")
    registrations: list[types.RegistrationParams] = []
    registered = asyncio.Event()

    def handlers(client: Any) -> None:
        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            registrations.append(params)
            registered.set()

    async with lsp_session(
        tmp_path, openai_tiers(fake.base_url), capabilities=_watching(), before_initialize=handlers
    ) as client:
        summary: Any = await asyncio.wait_for(
            client.workspace_execute_command_async(types.ExecuteCommandParams(command="lspAssist.warmCache")),
            timeout=60,
        )
        assert summary["files"] == 1
        await asyncio.wait_for(registered.wait(), timeout=10)
        methods = [r.method for p in registrations for r in p.registrations]
        assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES in methods

        (ws / "billing.py").write_text(LATER)  # written by another tool: never opened
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=(ws / "billing.py").as_uri(), type=types.FileChangeType.Created)]
            )
        )
        found = False
        deadline = time.monotonic() + 15
        attempt = 0
        while not found and time.monotonic() < deadline:
            await asyncio.sleep(0.3)
            # A new document each time: a repeated request may be answered from the cache.
            attempt += 1
            uri = doc_uri(tmp_path, f"main{attempt}.py")
            open_doc(client, uri, USER)
            await inline(client, uri, 2, len("ok = settle_invoice("))
            found = any(DEFINITION in prompt_of(r.body) for r in fake.model_requests())
        assert found, "the created file never reached a prompt"
