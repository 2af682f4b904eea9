"""The real server over stdio for robustness tests: started with offline tiers, stderr kept
in a file, raw bytes written past the client's framing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchmarks.rpc_client import RpcClient, server_cmd
from tests.e2e.conftest import isolated_env

# No model at all: these tests are about the stream, and must not load or call one.
OFFLINE = {"tiers": {name: {"provider": "offline"} for name in ("fast", "quality", "backup")}}


async def start_server(tmp_path: Path) -> tuple[RpcClient, Path]:
    """The real server over stdio, initialized; its stderr goes to a file the test reads."""
    err = tmp_path / "stderr.log"
    with err.open("wb") as fh:
        proc = await asyncio.create_subprocess_exec(
            *server_cmd(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=fh,
            env=isolated_env(tmp_path),
        )
    client = RpcClient(proc)
    await client.initialize(tmp_path.as_uri(), OFFLINE)
    return client, err


def write_raw(client: RpcClient, data: bytes) -> None:
    assert client.proc.stdin is not None
    client.proc.stdin.write(data)


async def assert_still_serving(client: RpcClient) -> None:
    """A document is opened and a completion request is answered (a generous timeout)."""
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": "file:///ok.py", "languageId": "python", "version": 1, "text": "x = 1\n"}},
    )
    reply = await client.call(
        "textDocument/inlineCompletion",
        {
            "textDocument": {"uri": "file:///ok.py"},
            "position": {"line": 0, "character": 5},
            "context": {"triggerKind": 1},
        },
        timeout=30,
    )
    assert "result" in reply, reply


def log_messages(client: RpcClient) -> str:
    return "\n".join(
        str(params.get("message", ""))
        for method, params in client.notifications
        if method == "window/logMessage" and isinstance(params, dict)
    )
