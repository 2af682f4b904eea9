"""Custom commands and notifications: suggestion events and accepts, stats, warm-up, the
editor's definitions and where the cursor rests.

Their params are read by `pipeline/client_args.py`; what they do lives in the runtime.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from lsprotocol import types

from lsp_assist.domain import Cursor
from lsp_assist.pipeline import client_args
from lsp_assist.pipeline.client_args import BadParams, plain
from lsp_assist.pipeline.prefill import NOTIFY_CURSOR_REST
from lsp_assist.protocol import convert
from lsp_assist.protocol.progress import WorkDone
from lsp_assist.protocol.server import AssistProtocol, AssistServer

log = logging.getLogger(__name__)

CMD_WARM = "lspAssist.warmCache"
CMD_STATS = "lspAssist.stats"
CMD_ACCEPTED = "lspAssist.accepted"
CMD_EVENT = "lspAssist.suggestionEvent"
NOTIFY_DEFINITIONS = "lspAssist/definitions"  # client -> server (context/editor_definitions.py)
NOTIFY_EVENT = "lspAssist/suggestionEvent"  # client -> server (telemetry/events.py)


def register(server: AssistServer) -> None:
    """Add the custom notifications and commands to `server`."""
    server.feature(NOTIFY_DEFINITIONS)(did_send_definitions)
    server.feature(NOTIFY_CURSOR_REST)(did_rest_cursor)
    server.feature(NOTIFY_EVENT)(suggestion_event)
    server.command(CMD_EVENT)(suggestion_event_command)
    server.command(CMD_ACCEPTED)(accepted)
    server.command(CMD_STATS)(stats)
    server.command(CMD_WARM)(warm)


def did_send_definitions(ls: AssistServer, params: Any) -> None:
    # Counts only in the log: the definitions' names and text are code.
    try:
        log.debug("%s", ls.rt.note_definitions(plain(params)))
    except ValueError as exc:
        log.warning("%s: bad params (%s); ignored", NOTIFY_DEFINITIONS, exc)


def did_rest_cursor(ls: AssistServer, params: Any) -> None:
    # The cursor rests: the idle embedded model reads that position's prompt ahead.
    try:
        rest = client_args.cursor_rest(plain(params))
    except BadParams as exc:
        log.warning("%s: bad params (%s); ignored", NOTIFY_CURSOR_REST, exc)
        return
    uri, at = rest.uri, rest.at
    if ls.rt.store.get(uri) is None:
        said = ls.rt.note_cursor_rest(uri, rest.version, Cursor(at.line, 0))
    else:
        cursor = convert.to_cursor(ls.rt.store, uri, types.Position(at.line, at.character), ls.encoding)
        said = ls.rt.note_cursor_rest(uri, rest.version, cursor)
    log.debug("%s line=%d character=%d: %s", NOTIFY_CURSOR_REST, at.line, at.character, said)  # numbers only


def suggestion_event(ls: AssistServer, params: Any) -> None:
    _suggestion_event(ls, plain(params))


def suggestion_event_command(ls: AssistServer, *args: Any) -> dict[str, bool]:
    # The same as the notification, as a request: a client sends its pending didChange
    # before a request, so an accept's position is read against the text it refers to.
    return {"ok": _suggestion_event(ls, plain(args[0]) if args else None)}


def accepted(ls: AssistServer, *args: Any) -> dict[str, bool]:
    # The item's command, run by the editor after it inserted the item: a whole accept of
    # suggestion args[0] (clients that report accepts themselves do not run it).
    sid = client_args.suggestion_id(args)
    if sid is not None:
        ls.rt.suggestions.event(sid, "accepted")
    if ls.rt.stats is not None:
        ls.rt.stats.record_accept()
    return {"ok": True}


def stats(ls: AssistServer, *args: Any) -> dict[str, Any]:
    assert ls.rt.stats is not None
    jsonable = client_args.jsonable
    report = ls.rt.stats.report()
    gov = ls.rt.governance.status() if ls.rt.governance is not None else {}
    proto = ls.protocol
    pending = proto.pending_futures() if isinstance(proto, AssistProtocol) else -1
    return {
        "report": ls.rt.stats.format(),
        "summary": jsonable(report),
        "governance": jsonable(gov),
        # Futures pygls holds (this request's own included): stays small unless they leak.
        "protocol": {"pendingFutures": pending},
        "memory": ls.rt.memory_report(),  # bytes per bounded memo, and "total"
        "suggestions": jsonable(ls.rt.suggestions.report()),
        "cursorRest": ls.rt.prefiller.counts.as_dict(),  # lspAssist/cursorRest, counts only
    }


async def warm(ls: AssistServer, *args: Any) -> dict[str, Any]:
    progress = WorkDone(ls, str(uuid.uuid4()), "lsp-assist: warming up")
    await progress.begin()
    try:
        summary: dict[str, Any] = await ls.rt.warmup(progress=progress.report)
    except Exception as exc:  # warming is best effort; the server keeps serving
        log.warning("warmup failed: %s", exc)
        summary = {"error": str(exc)}
    progress.end(f"failed: {summary['error']}" if "error" in summary else "done")
    result: dict[str, Any] = client_args.jsonable(summary)
    return result


def _suggestion_event(ls: AssistServer, p: Any) -> bool:
    """`{id, event, chars?, offset?, position?, unit?}` from a client: counts and labels only
    reach the records. `position` (where an accepted text starts) wins over `offset`."""
    event = client_args.suggestion_event(p)
    if event is None:
        if isinstance(p, dict):
            log.debug("%s: bad params; ignored", NOTIFY_EVENT)
        return False
    known = ls.rt.suggestions.event(
        event.sid, event.kind, chars=event.chars, offset=event.offset, at=_offset(ls, event), unit=event.unit
    )
    if known and event.kind == "accepted" and ls.rt.stats is not None:
        ls.rt.stats.record_accept()
    return known


def _offset(ls: AssistServer, event: client_args.SuggestionEvent) -> int | None:
    """The document offset of the event's position; None without one or an open document."""
    doc = ls.rt.store.get(event.uri) if event.uri is not None else None
    if doc is None or event.uri is None or event.at is None:
        return None
    pos = types.Position(line=event.at.line, character=event.at.character)
    try:
        return doc.offset(convert.to_cursor(ls.rt.store, event.uri, pos, ls.encoding))
    except (KeyError, TypeError, ValueError):
        return None
