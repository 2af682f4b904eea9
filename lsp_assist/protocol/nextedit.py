"""Next-edit suggestions over LSP: `textDocument/copilotInlineEdit` and its companions.

The wire contract (the same as GitHub Copilot's language server, so its Neovim clients
work unchanged; docs/next-edit.md):

- capability `experimental.nextEdit = {"method": "textDocument/copilotInlineEdit", "version": 1}`;
- request `textDocument/copilotInlineEdit` `{textDocument: {uri, version}, position}` ->
  `{edits: [{text, textDocument: {uri, version}, range, command, id}]}`: alternatives (a
  client shows the first); empty when there is nothing to propose, when the version is not
  the document's current one, or when the request was cancelled;
- notification `textDocument/didShowInlineEdit` `{item}` when the client displays one (the
  id is read from `item.id`, else from `item.command.arguments`, which is all copilot-lsp
  sends);
- commands `lspAssist.nextEdit.accept` / `lspAssist.nextEdit.reject` with `[id]` (the
  client applies an accepted edit itself, then runs the item's command).

Handlers only convert and call `NextEditService` (nextedit/service.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lsp_assist.domain import Cursor
from lsp_assist.nextedit.service import Answer
from lsp_assist.pipeline import client_args
from lsp_assist.protocol import convert
from lsp_assist.server import Runtime

log = logging.getLogger(__name__)

METHOD = "textDocument/copilotInlineEdit"
NOTIFY_SHOWN = "textDocument/didShowInlineEdit"
CMD_ACCEPT = "lspAssist.nextEdit.accept"
CMD_REJECT = "lspAssist.nextEdit.reject"
CAPABILITY = {"method": METHOD, "version": 1}


class Host(Protocol):
    """What the handlers read of the server (the AssistServer in protocol/server.py)."""

    runtime: Runtime
    encoding: str


def _position(rt: Runtime, uri: str, cursor: Cursor, encoding: str) -> dict[str, int]:
    pos = convert.to_position(rt.store, uri, cursor, encoding)
    return {"line": pos.line, "character": pos.character}


def edit_item(rt: Runtime, answer: Answer, encoding: str) -> dict[str, Any]:
    """One proposal as the wire's edit object (positions in the client's units)."""
    p = answer.proposal
    return {
        "text": p.text,
        "textDocument": {"uri": p.uri, "version": p.version},
        "range": {
            "start": _position(rt, p.uri, p.start, encoding),
            "end": _position(rt, p.uri, p.end, encoding),
        },
        "command": {"title": "Accept next edit", "command": CMD_ACCEPT, "arguments": [answer.id]},
        "id": answer.id,
    }


def register(server: LanguageServer) -> None:
    """Add the next-edit request, notification and commands to `server`."""

    @server.feature(METHOD)
    async def copilot_inline_edit(ls: Host, params: Any) -> dict[str, Any]:
        request = client_args.next_edit_request(params)
        if request is None or ls.runtime.store.get(request[0]) is None:
            return {"edits": []}
        uri, version, at = request
        position = types.Position(line=at.line, character=at.character)
        cursor = convert.to_cursor(ls.runtime.store, uri, position, ls.encoding)
        try:
            answers = await ls.runtime.next_edit.suggest(uri, version, cursor)
        except asyncio.CancelledError:
            return {"edits": []}  # a newer request replaced it: the contract answers empty
        except Exception:
            log.exception("next edit failed; answering empty")
            return {"edits": []}
        return {"edits": [edit_item(ls.runtime, a, ls.encoding) for a in answers]}

    @server.feature(NOTIFY_SHOWN)
    def did_show_inline_edit(ls: Host, params: Any) -> None:
        sid = client_args.shown_item_id(params)
        if sid is not None:
            ls.runtime.next_edit.event(sid, "shown")

    @server.command(CMD_ACCEPT)
    def accept(ls: Host, *args: Any) -> dict[str, bool]:
        sid = client_args.suggestion_id(args)
        return {"ok": sid is not None and ls.runtime.next_edit.event(sid, "accepted")}

    @server.command(CMD_REJECT)
    def reject(ls: Host, *args: Any) -> dict[str, bool]:
        sid = client_args.suggestion_id(args)
        return {"ok": sid is not None and ls.runtime.next_edit.event(sid, "dismissed")}
