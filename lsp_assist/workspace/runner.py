"""Run one build in the indexer process, from the server's event loop, without blocking it.

`run_build` starts `python -m lsp_assist.workspace.indexer` (the same interpreter and
import path as the server), writes the options as one JSON line to its stdin, and reads its
JSON lines as they come (asyncio pipes: no thread, no GIL held while it works). Progress
lines go to `on_progress`, log lines to this process's log, the last line is the result.
Cancelling the call (the server shutting down) terminates the process; the indexer also
stops on its own when its parent is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lsp_assist.workspace.indexer import BuildOptions

log = logging.getLogger(__name__)

#: The folder that holds the `lsp_assist` package, first on the indexer's import path.
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
MAX_LINE = 1 << 20
STDERR_TAIL = 20


def _env() -> dict[str, str]:
    env = dict(os.environ)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = _PACKAGE_PARENT + (os.pathsep + old if old else "")
    return env


async def run_build(opts: BuildOptions, on_progress: Callable[[str, int, int], None]) -> dict[str, Any]:
    """The indexer's result summary (`BuildResult.summary`), or {"error": why}."""
    proc = await _spawn()
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    tail: deque[str] = deque(maxlen=STDERR_TAIL)
    errors = asyncio.get_running_loop().create_task(_drain(proc.stderr, tail))
    result: dict[str, Any] | None = None
    try:
        proc.stdin.write((json.dumps(asdict(opts)) + "\n").encode())
        await proc.stdin.drain()
        proc.stdin.close()
        async for raw in proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if "stage" in msg:
                on_progress(str(msg["stage"]), int(msg.get("n", 0)), int(msg.get("total", 0)))
            elif "log" in msg:
                log.log(logging.getLevelName(str(msg["log"])), "indexer: %s", msg.get("message", ""))
            elif "result" in msg:
                result = dict(msg["result"])
        await proc.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5.0)
        raise
    finally:
        await errors
    if result is None:
        why = tail[-1] if tail else f"exit status {proc.returncode}"
        log.warning("workspace indexer failed: %s", why)
        return {"error": why}
    return result


async def _spawn() -> asyncio.subprocess.Process:
    """Start the indexer process. A cancellation of the build while it starts waits for the
    start to end, then kills the process: CPython 3.11's subprocess transport, cancelled
    while it connects the pipes, waits forever for pipes that never connected. (The
    process-wide cancellation at the end of `asyncio.run` reaches the start itself; the
    server avoids it by starting no build after `shutdown`: service.py `close`.)"""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lsp_assist.workspace.indexer",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_env(),
            limit=MAX_LINE,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            proc = await asyncio.wait_for(asyncio.shield(spawn), 5.0)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.wait_for(proc.wait(), 5.0)
        raise


async def _drain(stream: asyncio.StreamReader, tail: deque[str]) -> None:
    async for raw in stream:
        tail.append(raw.decode("utf-8", "replace").rstrip()[:300])
