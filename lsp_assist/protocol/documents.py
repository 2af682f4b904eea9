"""Document and workspace notifications: open, change, save, close, file events and folders.

All synchronous, in message order: a change is applied, and a settings or ignore file is in
force, before the next message (a completion request among them) is handled.
"""

from __future__ import annotations

import logging

from lsprotocol import types

from lsp_assist.pipeline.client_args import uri_path
from lsp_assist.protocol import convert, lifecycle
from lsp_assist.protocol.server import AssistServer

log = logging.getLogger(__name__)


def register(server: AssistServer) -> None:
    """Add the document and workspace notifications to `server`."""
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched_files)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(did_change_workspace_folders)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)


def did_open(ls: AssistServer, params: types.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    path = uri_path(doc.uri)
    ls.rt.store.open(doc.uri, doc.language_id, doc.version, doc.text, str(path) if path else None)


def did_change(ls: AssistServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if ls.rt.store.get(uri) is None:
        log.info("didChange for a document that is not open; ignored")
        return
    version = params.text_document.version
    if ls.rt.store.is_stale(uri, version):
        log.warning("didChange for version %d after version %d dropped", version, ls.doc_version(uri))
        return
    events = ls.rt.suggestions

    def observe(start: int | None, end: int | None, new_len: int) -> None:
        if start is not None and end is not None:
            events.on_change(uri, start, end, new_len)

    try:
        convert.apply_changes(ls.rt.store, uri, version, params.content_changes, ls.encoding, observe)
    except Exception:
        log.exception("didChange could not be applied; resyncing needs a didOpen")
    events.after_changes(uri)
    last = params.content_changes[-1] if params.content_changes else None
    row = last.range.start.line if isinstance(last, types.TextDocumentContentChangePartial) else None
    _after_change(ls, uri, row)


def _after_change(ls: AssistServer, uri: str, row: int | None) -> None:
    """The engine forgets what the change made stale; an edit at `row` may read ahead."""
    if ls.rt.engine is not None:
        ls.rt.engine.note_change(uri)
    ls.rt.touch()
    if row is not None:
        ls.rt.note_edit(uri, row)


def did_save(ls: AssistServer, params: types.DidSaveTextDocumentParams) -> None:
    path = uri_path(params.text_document.uri)
    if path is not None:
        _policy_files(ls, [str(path)])
        ls.rt.workspace.note_saved(str(path))


def did_change_watched_files(ls: AssistServer, params: types.DidChangeWatchedFilesParams) -> None:
    found = [uri_path(c.uri) for c in params.changes]
    paths = [str(p) for p in found if p is not None]
    _policy_files(ls, paths)
    ls.rt.workspace.note_file_events(paths)


def did_change_workspace_folders(ls: AssistServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    # Synchronous, in message order: an added folder's exclusions are in force before
    # any later message (its files' didOpen, a completion in them) is handled.
    added = [p for p in (uri_path(f.uri) for f in params.event.added) if p is not None]
    removed = [p for p in (uri_path(f.uri) for f in params.event.removed) if p is not None]
    log.info("workspace folders: %d added, %d removed", len(added), len(removed))
    lifecycle.rebuilt(ls, ls.rt.change_folders(added, removed))


def did_close(ls: AssistServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.rt.store.close(uri)
    if ls.rt.engine is not None:
        ls.rt.engine.forget(uri)


def _policy_files(ls: AssistServer, paths: list[str]) -> None:
    """Settings or ignore files changed on disk: in force before the next message is handled
    (this runs synchronously, in message order); a folder's settings file rebuilds."""
    if ls.rt.note_policy_files(paths):
        lifecycle.rebuilt(ls, ls.rt.build())
