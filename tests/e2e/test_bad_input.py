"""Bad input over real stdio: every request gets a normal (possibly empty) result."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from benchmarks.rpc_client import RpcClient, server_cmd
from tests.e2e.conftest import doc_uri, inline, isolated_env, lsp_session, open_doc, openai_tiers, texts
from tests.fakes.fake_model_server import FakeModelServer, Script


async def _still_serving(client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    uri = doc_uri(tmp_path, "alive.py")
    open_doc(client, uri, "x = 1\n")
    res = await inline(client, uri, 0, 5)
    assert res is not None


async def test_bad_positions_and_documents(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="value\n")
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        # A document that was never opened.
        res = await inline(client, doc_uri(tmp_path, "never-opened.py"), 0, 0)
        assert texts(res) == []
        # A position past the end of the file.
        uri = doc_uri(tmp_path, "short.py")
        open_doc(client, uri, "a = 1\n")
        res = await inline(client, uri, 50, 80)
        assert res is not None
        # A position inside a surrogate pair (UTF-16 column 6 splits the emoji).
        uri2 = doc_uri(tmp_path, "emoji.py")
        open_doc(client, uri2, 's = "😀😀"\n')
        res = await inline(client, uri2, 0, 6)
        assert res is not None
        # An empty file.
        uri3 = doc_uri(tmp_path, "empty.py")
        open_doc(client, uri3, "")
        res = await inline(client, uri3, 0, 0)
        assert res is not None
        # A 5 MB file: answered (from the offline floor or empty), never an error.
        big = "def f1(x):\n    return x + 1\n" * 180_000
        assert len(big) > 5_000_000
        uri4 = doc_uri(tmp_path, "big.py")
        open_doc(client, uri4, big)
        res = await inline(client, uri4, 100_000, 4, timeout=30)
        assert res is not None
        await _still_serving(client, tmp_path)


async def test_ill_typed_params_get_invalid_params(tmp_path: Path, fake: FakeModelServer) -> None:
    client = await RpcClient.start(server_cmd(), isolated_env(tmp_path))
    try:
        await client.initialize(tmp_path.as_uri(), openai_tiers(fake.base_url))
        resp = await client.call(
            "textDocument/inlineCompletion",
            {"textDocument": {"uri": 5}, "position": "nowhere", "context": {}},
        )
        assert resp["error"]["code"] == -32602  # InvalidParams, not silence or an internal error
        # A malformed frame body (not JSON) is logged and skipped; the server keeps serving.
        assert client.proc.stdin is not None
        body = b'{"jsonrpc": "2.0", "id": 99, "method": "textDocument/inlineCompletion", "params": '
        client.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        client.notify("no/such/notification", [1])
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": "file:///x.py",
                    "languageId": "python",
                    "version": 1,
                    "text": "x = 1\n",
                }
            },
        )
        resp = await client.call(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": "file:///x.py"},
                "position": {"line": 0, "character": 5},
                "context": {"triggerKind": 1},
            },
        )
        assert "result" in resp
    finally:
        await client.close()


async def test_unknown_config_keys_are_reported(tmp_path: Path, fake: FakeModelServer) -> None:
    opts = openai_tiers(fake.base_url)
    opts["no_such_section"] = {"x": 1}
    opts["tiers"]["fast"]["max_tokenz"] = 3
    async with lsp_session(tmp_path, opts) as client:
        await asyncio.sleep(0.3)
        messages = " ".join(m.message for m in client.messages)
        assert "no_such_section" in messages
        assert "tiers.fast.max_tokenz" in messages
        await _still_serving(client, tmp_path)


@pytest.mark.parametrize("fault", ["unreachable", "http500", "cut", "malformed"])
async def test_failing_model_degrades_to_a_normal_result(
    tmp_path: Path, fake: FakeModelServer, fault: str
) -> None:
    if fault == "unreachable":
        base = "http://127.0.0.1:9/v1"  # discard port: connection refused
    else:
        fake.default = Script(text="return a + b\n", fault=fault)
        base = fake.base_url
    async with lsp_session(tmp_path, openai_tiers(base)) as client:
        uri = doc_uri(tmp_path, "calc.py")
        # The offline floor can continue this line from the other occurrence in the file.
        open_doc(client, uri, "total = compute_total(items)\n\ntotal = comp")
        res = await inline(client, uri, 2, 12)
        assert res is not None
        assert texts(res) in ([], ["ute_total(items)"])
        await _still_serving(client, tmp_path)


async def test_untitled_buffers_get_suggestions_other_pathless_uris_do_not(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False}  # count only the requests this test makes
    async with lsp_session(tmp_path, opts) as client:
        open_doc(client, "untitled:Untitled-1", "def add(a, b):\n    \n")
        assert texts(await inline(client, "untitled:Untitled-1", 1, 4)) == ["return a + b"]
        calls = len(fake.model_requests())
        open_doc(client, "git:/repo/.env?ref=HEAD", "def add(a, b):\n    \n")
        assert texts(await inline(client, "git:/repo/.env?ref=HEAD", 1, 4)) == []
        assert len(fake.model_requests()) == calls


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_stdin_that_the_loop_cannot_watch_is_read_or_ends_cleanly(tmp_path: Path) -> None:
    """stdin as /dev/null or a regular file (a misconfigured editor, a script): the server
    reads it to the end and exits, instead of a traceback from asyncio and a hung process."""
    env = isolated_env(tmp_path)
    with open(os.devnull, "rb") as devnull:
        done = subprocess.run(server_cmd(), stdin=devnull, env=env, capture_output=True, timeout=30)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2000:]

    script = tmp_path / "session.jsonrpc"
    init = {"processId": None, "rootUri": None, "capabilities": {}}
    script.write_bytes(
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        + _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    )  # then end of file, as when the editor is gone
    with script.open("rb") as stdin:
        done = subprocess.run(server_cmd(), stdin=stdin, env=env, capture_output=True, timeout=30)
    assert b'"id": 1' in done.stdout.replace(b'"id":1', b'"id": 1'), done.stdout[-2000:]
    assert b"inlineCompletionProvider" in done.stdout
    assert b"Traceback" not in done.stderr, done.stderr[-2000:]
