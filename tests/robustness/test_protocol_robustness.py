"""Robustness over real stdio: deadlines, position encodings, request storms, fuzzed params."""

from __future__ import annotations

import asyncio
import json
import random
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lsprotocol import types

from benchmarks.rpc_client import RpcClient, server_cmd
from lsp_assist.pipeline.client_args import plain
from tests.e2e.conftest import (
    client_capabilities,
    doc_uri,
    inline,
    isolated_env,
    lsp_session,
    open_doc,
    openai_tiers,
    texts,
)
from tests.fakes.fake_model_server import FakeModelServer, Script


async def test_every_request_is_answered_within_its_deadline(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n", fault="stall")
    opts = openai_tiers(fake.base_url, first_token_timeout_ms=30000, total_timeout_ms=60000)
    opts["completion"] = {"deadline_ms": 800}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "slow.py")
        open_doc(client, uri, "def add(a, b):\n    \n")
        res = await inline(client, uri, 1, 4, timeout=10)
        assert res is not None and texts(res) == []
        # The model never sent a byte and its first-token timeout is 30 s: the 0.8 s
        # deadline answered, and the server says so.
        assert fake.stats.requests >= 1 and fake.stats.tokens_sent == 0
        reached = "inline completion: deadline of 800 ms reached; answering empty"
        assert await _logged(client, reached), [m.message for m in client.log_messages]


async def test_utf8_positions_as_neovim_negotiates_them(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="é + 1\n")
    utf8 = client_capabilities("utf-8")
    async with lsp_session(tmp_path, openai_tiers(fake.base_url), capabilities=utf8) as client:
        uri = doc_uri(tmp_path, "accents.py")
        line = 'café = "é"; x = '
        open_doc(client, uri, line + "\n")
        col = len(line.encode("utf-8"))  # a byte column: Neovim's utf-8 encoding
        res = await inline(client, uri, 0, col)
        items = res.items if hasattr(res, "items") else res
        assert items and items[0].range is not None
        assert items[0].range.start.character == col  # answered in the client's units


async def test_a_storm_of_cancelled_requests_leaves_the_server_responsive(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="value = 1\n", ttft_ms=50, tokens_per_s=100)
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "storm.py")
        open_doc(client, uri, "x = 1\n\n")
        ids = []
        replies: dict[str, Future[Any]] = {}  # pygls hands back concurrent futures
        for k in range(150):
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2 + k),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=f"x = {k}\n\n")],
                )
            )
            msg_id = f"storm-{k}"
            replies[msg_id] = client.protocol.send_request(
                types.TEXT_DOCUMENT_INLINE_COMPLETION,
                types.InlineCompletionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=1, character=0),
                    context=types.InlineCompletionContext(
                        trigger_kind=types.InlineCompletionTriggerKind.Automatic
                    ),
                ),
                msg_id=msg_id,
            )
            ids.append(msg_id)
            if k % 3:
                client.cancel_request(types.CancelParams(id=msg_id))
        await asyncio.sleep(0.5)
        res = await inline(client, uri, 1, 0, timeout=10)
        assert res is not None
        # Responsive: every request of the storm was answered (a result, or RequestCancelled
        # for a cancelled one), and the server holds no future for any of them.
        answers = asyncio.gather(*map(asyncio.wrap_future, replies.values()), return_exceptions=True)
        await asyncio.wait_for(answers, timeout=10)
        assert all(f.done() for f in replies.values())
        stats_command = types.ExecuteCommandParams(command="lspAssist.stats")
        held = plain(await asyncio.wait_for(client.workspace_execute_command_async(stats_command), 20))
        # The stats request itself is pending while it runs (as in test_leaks.py).
        assert held["protocol"]["pendingFutures"] < 10, held["protocol"]
        # No pile-up upstream: far fewer model calls than requests, and none left running.
        await asyncio.to_thread(
            fake.wait_for, lambda s: s.streams_started == s.streams_completed + s.streams_aborted, 5
        )
        stats = fake.stats
        assert stats.streams_started < 20, stats
        assert stats.streams_started == stats.streams_completed + stats.streams_aborted


async def _logged(client: Any, text: str, timeout: float = 5.0) -> bool:
    """Whether the server logs `text` to the client (window/logMessage), waiting for it."""
    for _ in range(int(timeout / 0.02)):
        if any(text in m.message for m in client.log_messages):
            return True
        await asyncio.sleep(0.02)
    return any(text in m.message for m in client.log_messages)


def _random_value(rng: random.Random, depth: int = 0) -> object:
    kinds = ["int", "str", "none", "bool", "float", "list", "dict"] if depth < 3 else ["int", "str", "none"]
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.choice([0, -1, 1, 2**31, -(2**40), 7])
    if kind == "str":
        return rng.choice(["", "file:///x.py", "\ud800", "é" * 50, "untitled:1", "a" * 2000])
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "float":
        return rng.choice([0.5, -1e308, float("1e30")])
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = [
        "textDocument",
        "position",
        "context",
        "uri",
        "line",
        "character",
        "triggerKind",
        "text",
        "version",
    ]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


async def test_fuzzed_params_never_crash_the_server(tmp_path: Path, fake: FakeModelServer) -> None:
    rng = random.Random(20261129)
    client = await RpcClient.start(server_cmd(), isolated_env(tmp_path))
    try:
        await client.initialize(tmp_path.as_uri(), openai_tiers(fake.base_url))
        methods = [
            "textDocument/inlineCompletion",
            "textDocument/didOpen",
            "textDocument/didChange",
            "textDocument/didClose",
            "workspace/executeCommand",
            "workspace/didChangeConfiguration",
        ]
        for _ in range(120):
            method = rng.choice(methods)
            params = _random_value(rng)
            if method.startswith("textDocument/did") or method.startswith("workspace/didChange"):
                client.notify(method, params)
            else:
                reply = await client.call(method, params, timeout=15)
                assert "result" in reply or reply["error"]["code"] in (-32602, -32601, -32603), reply
        # Still serving normally afterwards.
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": "file:///ok.py",
                    "languageId": "python",
                    "version": 1,
                    "text": "x = 1\n",
                }
            },
        )
        reply = await client.call(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": "file:///ok.py"},
                "position": {"line": 0, "character": 5},
                "context": {"triggerKind": 1},
            },
        )
        assert "result" in reply, json.dumps(reply)[:300]
        assert client.proc.returncode is None
    finally:
        await client.close()
