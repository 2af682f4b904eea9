"""Open documents live in the server's own store only: pygls' copy is not kept."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace import Workspace

from lsp_assist.protocol.handlers import create_server

URI = "file:///w/bundle.min.js"


def test_document_notifications_reach_the_handlers_without_pygls_workspace_copy() -> None:
    server = create_server()
    proto = server.protocol
    proto._workspace = Workspace(None)  # what `initialize` sets up
    sync = proto.fm.builtin_features
    user = proto.fm.features
    doc = types.TextDocumentItem(uri=URI, language_id="javascript", version=1, text="x" * 1000)
    pos = types.Position(line=0, character=1000)
    change = types.TextDocumentContentChangePartial(range=types.Range(start=pos, end=pos), text="y")
    steps = [
        (types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=doc)),
        (
            types.TEXT_DOCUMENT_DID_CHANGE,
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
                content_changes=[change],
            ),
        ),
        (
            types.TEXT_DOCUMENT_DID_CLOSE,
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)),
        ),
    ]
    for method, params in steps:
        yielded = list(sync[method](params))
        # Each built-in passes the notification on to lsp-assist's own handler, once.
        assert yielded == [(user[method], (params,), None)]
        # ... and keeps no copy of the text (before: pygls converted every didChange range
        # with a loop over the whole line, ~1 s a keystroke on a 2 MB line).
        assert not proto.workspace.text_documents, method
