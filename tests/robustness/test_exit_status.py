"""The exit status over real stdio, as the LSP spec asks: 0 when `exit` follows
`shutdown`, 1 when it does not."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.robustness.stdio_session import start_server


async def test_exit_without_shutdown_exits_with_status_1(tmp_path: Path) -> None:
    client, _ = await start_server(tmp_path)
    try:
        client.notify("exit", None)
        status = await asyncio.wait_for(client.proc.wait(), timeout=30)
    finally:
        await client.close()
    assert status == 1


async def test_exit_after_shutdown_exits_with_status_0(tmp_path: Path) -> None:
    client, _ = await start_server(tmp_path)
    try:
        reply = await client.call("shutdown", None, timeout=30)
        assert "result" in reply, reply
        client.notify("exit", None)
        status = await asyncio.wait_for(client.proc.wait(), timeout=30)
    finally:
        await client.close()
    assert status == 0
