"""An LSP client over a server process's stdio that adds as little as it can to what it times.

Frames are written and parsed by hand; each request's send and response-parse times are kept
on `time.monotonic()` (the loopback model's clock); responses are matched to futures by id;
a request from the server is answered at once with null, as an editor that supports nothing
would. The server's stderr goes to a file, shown when it fails to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any, BinaryIO

START_TIMEOUT_S = 60.0  # the initialize answer (a server's imports, a node start)
CLOSE_TIMEOUT_S = 5.0


class LspClient:
    def __init__(self, proc: asyncio.subprocess.Process, stderr: BinaryIO) -> None:
        self.proc = proc
        self._stderr = stderr
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.sent_at: dict[int, float] = {}
        self.received_at: dict[int, float] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, cmd: list[str], env: dict[str, str], stderr_path: Path) -> LspClient:
        stderr = stderr_path.open("wb")
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, **env},
        )
        return cls(proc, stderr)

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
                    self._fail_pending()
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n"):
                    break
            data = await out.readexactly(length)
            t_recv = time.monotonic()
            self._dispatch(json.loads(data), t_recv)

    def _dispatch(self, msg: dict[str, Any], t_recv: float) -> None:
        if "id" in msg and ("result" in msg or "error" in msg):
            self.received_at[msg["id"]] = t_recv
            fut = self._pending.pop(msg["id"], None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
        elif "method" in msg and "id" in msg:
            self._write({"jsonrpc": "2.0", "id": msg["id"], "result": None})

    def _fail_pending(self) -> None:
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("the server closed its stdout"))
        self._pending.clear()

    def request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        msg_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        self.sent_at[msg_id] = time.monotonic()
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def call(self, method: str, params: Any, timeout: float = 30.0) -> Any:
        _, fut = self.request(method, params)
        return await asyncio.wait_for(fut, timeout)

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def cancel(self, msg_id: int) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    async def initialize(self, root_uri: str, init_options: dict[str, Any] | None) -> None:
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "rootUri": root_uri,
            "clientInfo": {"name": "lsp-assist-bench"},
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"inlineCompletion": {}, "completion": {}},
            },
        }
        if init_options is not None:
            params["initializationOptions"] = init_options
        await self.call("initialize", params, timeout=START_TIMEOUT_S)
        self.notify("initialized", {})

    async def close(self) -> None:
        """shutdown and exit, then the process ended by its PID if it is still there."""
        with contextlib.suppress(Exception):
            await self.call("shutdown", None, timeout=CLOSE_TIMEOUT_S)
            self.notify("exit", None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), timeout=CLOSE_TIMEOUT_S)
        if self.proc.returncode is None:
            self.proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), timeout=CLOSE_TIMEOUT_S)
        self._reader.cancel()
        self._stderr.close()
