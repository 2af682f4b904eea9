"""The session's lifecycle: `initialize`, `initialized`, configuration changes, `shutdown`,
and what follows a rebuild of the runtime (rewiring the engine, warming up, reporting
configuration problems once).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

from lsprotocol import types

from lsp_assist.config.loader import unwrap_client_settings
from lsp_assist.pipeline.client_args import uri_path
from lsp_assist.protocol import completion, convert, index_feed, logsink
from lsp_assist.protocol.progress import WorkDone
from lsp_assist.protocol.server import AssistServer, background
from lsp_assist.providers.base import LoadEvent
from lsp_assist.workspace.service import settle_long_lived_heap

log = logging.getLogger(__name__)

_PROBLEMS = "configuration problems (running on defaults for these): "


def register(server: AssistServer) -> None:
    """Add the lifecycle handlers to `server`."""
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(types.SHUTDOWN)(shutdown)


def initialize(ls: AssistServer, params: types.InitializeParams) -> None:
    ls.encoding = convert.encoding_name(ls.workspace.position_encoding)
    ls.runtime.workspace_roots = workspace_roots(params)
    ls.runtime.layers.init_options = unwrap_client_settings(params.initialization_options or {})
    ls.runtime.build()
    # The embedded model loads while the client finishes its handshake (progress is
    # reported from `initialized`, when the client may receive requests).
    try:
        ls.runtime.start_model_load()
    except Exception as exc:
        log.warning("local model: cannot start loading: %s", exc)
    # Breaker transitions (open, half-open, closed) update the status bar at once.
    ls.runtime.listeners.breaker_change = lambda name, old, new: ls.status()
    # A team store outage changes what limits apply: say so once, not only in the log.
    ls.runtime.listeners.team_store_change = lambda message, up: _team_store_changed(ls, message, up)


async def initialized(ls: AssistServer, params: types.InitializedParams) -> None:
    # From now on log lines reach the client as logMessage with their level (editors file
    # a server's stderr under errors).
    ls.log_handler = logsink.attach(ls.log_to_client)
    if ls.rt.errors:
        ls.show(_PROBLEMS + "; ".join(ls.rt.errors[:5]))
    completion.wire_engine(ls)
    _wire_load_progress(ls)
    index_feed.wire(ls, WorkDone)
    ls.status()
    # Everything allocated so far (lsprotocol/cattrs machinery, grammars, config) lives
    # as long as the process: move it out of the collector's way, so collections on the
    # request path only walk young objects.
    settle_long_lived_heap()
    # Open connections / start the local model without delaying anything else.
    background(ls.rt.warm())


async def did_change_configuration(ls: AssistServer, params: types.DidChangeConfigurationParams) -> None:
    ls.rt.layers.client = unwrap_client_settings(params.settings)
    errors = ls.rt.build()  # the new engine has the listeners `completion.wire_engine` set
    await ls.rt.retire_old()
    if errors:
        ls.show(_PROBLEMS + "; ".join(errors[:5]))
    ls.status()
    background(ls.rt.warm())


async def shutdown(ls: AssistServer, params: None) -> None:
    await ls.rt.aclose()
    logsink.detach(ls.log_handler)
    ls.log_handler = None


def workspace_roots(params: types.InitializeParams) -> list[Path]:
    """The workspace folders' paths, else the root URI's."""
    roots = [p for p in (uri_path(f.uri) for f in params.workspace_folders or []) if p is not None]
    if not roots and params.root_uri:
        p = uri_path(params.root_uri)
        if p is not None:
            roots.append(p)
    return roots


def rebuilt(ls: AssistServer, errors: list[str]) -> None:
    """After a synchronous rebuild (the new engine has the runtime's listeners): close what
    it replaced, report problems and warm up in the background."""

    async def settle() -> None:
        await ls.rt.retire_old()
        if errors:
            ls.show(_PROBLEMS + "; ".join(errors[:5]))
        ls.status()
        await ls.rt.warm()

    background(settle())


def _team_store_changed(ls: AssistServer, message: str, up: bool) -> None:
    ls.show(message, types.MessageType.Info if up else types.MessageType.Warning)
    ls.status()


def _wire_load_progress(ls: AssistServer) -> None:
    """`$/progress` for loading the embedded model ("loading the local model", percent)."""
    events: asyncio.Queue[LoadEvent] = asyncio.Queue()
    state = ls.rt.listeners.load_state
    if not ls.rt.local_models():
        return
    if state is not None and not state.done:
        events.put_nowait(state)
    ls.rt.listeners.load_progress = events.put_nowait
    background(_pump_load_progress(ls, events))


async def _pump_load_progress(ls: AssistServer, events: asyncio.Queue[LoadEvent]) -> None:
    progress: WorkDone | None = None
    while True:
        event = await events.get()
        if event.error:
            ls.show(f"{event.error}; suggestions come from the offline engine meanwhile")
        if progress is None and not event.done:
            progress = WorkDone(ls, str(uuid.uuid4()), "lsp-assist: loading the local model")
            await progress.begin()
        if progress is None:
            continue
        if event.done:
            progress.end(event.error or event.message)
            progress = None
            if not event.error:
                completion.ask_again_after_load(ls)
        else:
            progress.report(event.message, event.percent)
