"""A minimal JSON-RPC/LSP client over a subprocess's stdio, for benchmarks.

It adds as little as possible to the measured latency: frames are written and parsed by
hand, responses are matched to futures by id, notifications are kept in a list.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


class RpcClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self.notifications: list[tuple[str, Any]] = []
        # time.monotonic() when each request was written and its response parsed (the same
        # clock as the fake model's request log: CLOCK_MONOTONIC is system-wide on Linux).
        self.sent_at: dict[int | str, float] = {}
        self.received_at: dict[int | str, float] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, cmd: list[str], env: dict[str, str] | None = None) -> RpcClient:
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        return cls(proc)

    def _write(self, msg: dict[str, Any]) -> None:
        data = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = await out.readline()
                if not line:
                    return
                if line.startswith(b"Content-Length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n"):
                    break
            data = await out.readexactly(length)
            t_recv = time.monotonic()
            msg = json.loads(data)
            if "id" in msg and ("result" in msg or "error" in msg):
                self.received_at[msg["id"]] = t_recv
                fut = self._pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
            elif "method" in msg and "id" in msg:  # a server->client request: accept it
                self._write({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif "method" in msg:
                self.notifications.append((msg["method"], msg.get("params")))

    def request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        msg_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        self.sent_at[msg_id] = time.monotonic()
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def call(self, method: str, params: Any, timeout: float = 30) -> Any:
        _, fut = self.request(method, params)
        return await asyncio.wait_for(fut, timeout)

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def cancel(self, msg_id: int) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    async def initialize(self, root_uri: str, init_options: dict[str, Any]) -> Any:
        res = await self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "textDocument": {"inlineCompletion": {}},
                },
                "initializationOptions": init_options,
            },
        )
        self.notify("initialized", {})
        return res

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.call("shutdown", None, timeout=10)
            self.notify("exit", None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), timeout=5)
        if self.proc.returncode is None:
            self.proc.kill()
        self._reader.cancel()


def server_cmd() -> list[str]:
    return [sys.executable, "-m", "lsp_assist", "serve"]


def server_at(root: Path) -> list[str]:
    """`lsp-assist serve` from the checkout at `root` (first on the path, before the cwd):
    a baseline checkout beside this one, in the same run."""
    if root.resolve() == Path(__file__).resolve().parents[1]:
        return server_cmd()
    code = f"import sys\nsys.path.insert(0, {str(root)!r})\nfrom lsp_assist.cli.main import main\n"
    return [sys.executable, "-c", code + "main(['serve'])"]
