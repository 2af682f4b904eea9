"""Per-message state the server must not keep: pygls' handler futures, over real stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchmarks.rpc_client import RpcClient, server_cmd
from tests.e2e.conftest import isolated_env

EDITS = 3000


async def test_didchange_notifications_leave_no_futures_behind(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    uri = (workspace / "typing.py").as_uri()
    client = await RpcClient.start(server_cmd(), env=isolated_env(tmp_path))
    try:
        await client.initialize(workspace.as_uri(), {"tiers": {"fast": {"provider": "offline"}}})
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 0\n"}},
        )
        for k in range(EDITS):
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": 2 + k},
                    "contentChanges": [
                        {
                            "range": {
                                "start": {"line": 0, "character": 4},
                                "end": {"line": 0, "character": 5},
                            },
                            "text": str(k % 10),
                        }
                    ],
                },
            )
            if k % 500 == 0:
                # An async user handler behind a built-in generator one (pygls records both).
                client.notify("workspace/didChangeConfiguration", {"settings": {}})
                await asyncio.sleep(0)
        out = await client.call(
            "workspace/executeCommand", {"command": "lspAssist.stats", "arguments": []}, timeout=60
        )
        pending = out["result"]["protocol"]["pendingFutures"]
        # The stats request itself is pending while it runs; 3,000 edits must not add up.
        assert 0 <= pending < 10, f"{pending} futures held after {EDITS} didChange notifications"
    finally:
        await client.close()
