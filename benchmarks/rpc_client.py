"""The benchmarks' LSP client over a subprocess's stdio: `lsp_assist.bench.client.LspClient`
(frames by hand, responses matched to futures by id, send and parse times on
`time.monotonic()`, the fake model's clock) with the server's notifications kept in a list
and its stderr discarded.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO

from lsp_assist.bench.client import LspClient


class RpcClient(LspClient):
    def __init__(self, proc: asyncio.subprocess.Process, stderr: BinaryIO | None = None) -> None:
        self.notifications: list[tuple[str, Any]] = []
        super().__init__(proc, stderr if stderr is not None else open(os.devnull, "wb"))

    @classmethod
    async def start(cls, cmd: list[str], env: dict[str, str] | None = None) -> RpcClient:  # type: ignore[override]
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        return cls(proc)

    def _dispatch(self, msg: dict[str, Any], t_recv: float) -> None:
        if "method" in msg and "id" not in msg:
            self.notifications.append((msg["method"], msg.get("params")))
        super()._dispatch(msg, t_recv)


def server_cmd() -> list[str]:
    return [sys.executable, "-m", "lsp_assist", "serve"]


def server_at(root: Path) -> list[str]:
    """`lsp-assist serve` from the checkout at `root` (first on the path, before the cwd):
    a baseline checkout beside this one, in the same run."""
    if root.resolve() == Path(__file__).resolve().parents[1]:
        return server_cmd()
    code = f"import sys\nsys.path.insert(0, {str(root)!r})\nfrom lsp_assist.cli.main import main\n"
    return [sys.executable, "-c", code + "main(['serve'])"]
