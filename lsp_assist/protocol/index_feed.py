"""The workspace index and the client: file events in, `$/progress` out.

`wire` (at `initialized`) registers for `workspace/didChangeWatchedFiles` when the client
supports dynamic registration (the handler in `documents.py` passes the paths to
`WorkspaceService.note_file_events`), and turns the background build's progress lines
into one work-done progress ("indexing ws: 1200/19000 files", with a percentage).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import Callable
from typing import Any

from lsprotocol import types

log = logging.getLogger(__name__)

WATCHER_ID = "lsp-assist-watched-files"
_COUNTS = re.compile(r"(\d+)/(\d+)")
_TASKS: set[asyncio.Task[Any]] = set()


def wire(ls: Any, progress_cls: Callable[[Any, str, str], Any]) -> None:
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[str | None] = asyncio.Queue()
    ls.rt.workspace.on_progress = events.put_nowait
    for coro in (_report(ls, events, progress_cls), register_watcher(ls)):
        task = loop.create_task(coro)
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)


def supports_watching(ls: Any) -> bool:
    caps = ls.client_capabilities
    ws = caps.workspace if caps is not None else None
    watched = ws.did_change_watched_files if ws is not None else None
    return bool(watched is not None and watched.dynamic_registration)


async def register_watcher(ls: Any) -> bool:
    """Ask the client to send file events for the whole workspace; True when it agreed."""
    if not supports_watching(ls):
        return False
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
    )
    params = types.RegistrationParams(
        registrations=[
            types.Registration(
                id=WATCHER_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
            )
        ]
    )
    try:
        await asyncio.wait_for(ls.client_register_capability_async(params), timeout=5.0)
    except Exception as exc:  # the client refused or did not answer: saves still refresh
        log.info("file events unavailable (%s); the index follows saves only", type(exc).__name__)
        return False
    return True


async def _report(
    ls: Any, events: asyncio.Queue[str | None], progress_cls: Callable[[Any, str, str], Any]
) -> None:
    """One work-done progress per background build: begun at its first line, ended at None."""
    progress: Any = None
    while True:
        message = await events.get()
        if message is None:
            if progress is not None:
                progress.end("indexed")
                progress = None
            continue
        if progress is None:
            progress = progress_cls(ls, str(uuid.uuid4()), "lsp-assist: indexing the workspace")
            await progress.begin()
        m = _COUNTS.search(message)
        percent = min(100, 100 * int(m.group(1)) // int(m.group(2))) if m and int(m.group(2)) else None
        progress.report(message, percent)
