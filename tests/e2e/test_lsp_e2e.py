"""The server over real stdio, against a loopback fake OpenAI-compatible model server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from tests.e2e.conftest import doc_uri, inline, lsp_session, open_doc, openai_tiers, texts
from tests.fakes.fake_model_server import FakeModelServer, Script

SOURCE = "def add(a, b):\n    \n"


@pytest.mark.parametrize("api", ["completions", "chat"])
async def test_inline_completion_streams_from_the_model(
    tmp_path: Path, fake: FakeModelServer, api: str
) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=5)
    async with lsp_session(tmp_path, openai_tiers(fake.base_url, api=api)) as client:
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        res = await inline(client, uri, 1, 4)
        assert texts(res) == ["return a + b"]
        reqs = fake.model_requests()
        assert reqs, "the fake model server got no request"
        path = reqs[-1].path
        assert path.endswith("/chat/completions" if api == "chat" else "/completions")
        body = reqs[-1].body or {}
        assert body.get("stream") is True
        if api == "completions":
            assert "def add(a, b):" in str(body.get("prompt", ""))


async def test_capabilities_and_incremental_edit(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n")
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        caps = client.init_result.capabilities  # type: ignore[attr-defined]
        assert caps.inline_completion_provider is not None
        sync = caps.text_document_sync
        kind = sync.change if isinstance(sync, types.TextDocumentSyncOptions) else sync
        assert kind == types.TextDocumentSyncKind.Incremental
        assert caps.execute_command_provider is not None
        assert "lspAssist.escalate" in caps.execute_command_provider.commands

        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        assert texts(await inline(client, uri, 1, 4)) == ["return a + b"]

        # Type "ret" incrementally, then ask again: the answer continues what was typed.
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=1, character=4), end=types.Position(line=1, character=4)
                        ),
                        text="ret",
                    )
                ],
            )
        )
        res = await inline(client, uri, 1, 7)
        assert texts(res) == ["urn a + b"]


async def test_cancel_request_aborts_the_model_stream(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=30000)
    async with lsp_session(
        tmp_path, openai_tiers(fake.base_url, first_token_timeout_ms=20000, total_timeout_ms=30000)
    ) as client:
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        params = types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=1, character=4),
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked),
        )
        fut = asyncio.wrap_future(
            client.protocol.send_request(types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id="slow-1")
        )
        assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_started >= 1, 10)
        client.cancel_request(types.CancelParams(id="slow-1"))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(fut, timeout=10)
        # A cancelled request that nobody else waits for closes its HTTP stream.
        assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_aborted >= 1, 10)


async def test_escalate_command_and_next_request_uses_it(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n")
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        fake.push(Script(text="total = a + b\n    return total\n"))
        out = await asyncio.wait_for(
            client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="lspAssist.escalate", arguments=[uri, {"line": 1, "character": 4}]
                )
            ),
            timeout=20,
        )
        assert out["tier"] == "quality"
        assert out["text"].startswith("total = a + b")
        res = await inline(client, uri, 1, 4)
        assert texts(res)[0].startswith("total = a + b")


async def test_stats_command_reports_stages(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n")
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        await inline(client, uri, 1, 4)
        out = await asyncio.wait_for(
            client.workspace_execute_command_async(types.ExecuteCommandParams(command="lspAssist.stats")),
            timeout=10,
        )
        assert "ttft" in out["report"]
        assert out["summary"]["requests"] >= 1


async def test_shutdown_and_exit_end_the_process_cleanly(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n")
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        assert texts(await inline(client, uri, 1, 4)) == ["return a + b"]
        await asyncio.wait_for(client.shutdown_session(), timeout=15)
        proc = client._server  # type: ignore[attr-defined]
        assert proc is not None
        await asyncio.wait_for(proc.wait(), timeout=10)
        assert proc.returncode == 0  # exit after shutdown is a clean exit
