"""Inline completion: `textDocument/inlineCompletion`, the escalate and recompute commands,
and the `lspAssist/suggestionReady` notification the engine sends when a longer suggestion
(or an Invoked answer's choices) is ready.

What an answer's items cover and the ids they carry come from `pipeline/inline_items.py`;
the command arguments are read by `pipeline/client_args.py`.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from lsprotocol import types

from lsp_assist.after_reply import after_reply
from lsp_assist.domain import Cursor
from lsp_assist.errors import LspAssistError, PolicyError
from lsp_assist.pipeline import inline_items
from lsp_assist.pipeline.client_args import position_args
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.protocol import convert
from lsp_assist.protocol.progress import WorkDone
from lsp_assist.protocol.server import AssistServer

log = logging.getLogger(__name__)

CMD_ESCALATE = "lspAssist.escalate"
CMD_RECOMPUTE = "lspAssist.recompute"
NOTIFY_READY = "lspAssist/suggestionReady"
_USAGE = "usage: [uri, {line, character}]"


def register(server: AssistServer) -> None:
    """Add inline completion and the escalate and recompute commands to `server`."""
    server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())(inline_completion)
    server.command(CMD_ESCALATE)(escalate)
    server.command(CMD_RECOMPUTE)(recompute)


async def inline_completion(
    ls: AssistServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    engine = ls.rt.engine
    uri = params.text_document.uri
    if engine is None or ls.rt.store.get(uri) is None:
        return types.InlineCompletionList(items=[])
    try:
        cursor = convert.to_cursor(ls.rt.store, uri, params.position, ls.encoding)
    except Exception:
        log.exception("inline completion: bad position; answering empty")
        return types.InlineCompletionList(items=[])
    invoked = params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked
    version = ls.doc_version(uri)
    ls.last_asked = (uri, version, cursor)
    result = await engine.complete(CompletionRequest(uri=uri, cursor=cursor, invoked=invoked))
    # The status item's latency is a notification of its own: written after the reply, not
    # before it (a pipe write costs 0.2-0.5 ms on a busy machine).
    after_reply(lambda: ls.note_request(result))
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%s", inline_items.answered_line(result, version, cursor))
    if ls.doc_version(uri) != version:
        return types.InlineCompletionList(items=[])  # never answer for text that changed
    shown = inline_items.items(ls.rt, uri, cursor, result)
    position = convert.to_position(ls.rt.store, uri, cursor, ls.encoding)
    start = convert.to_position(ls.rt.store, uri, shown.start, ls.encoding) if shown.typed else None
    return convert.completion_list(result.text, position, shown.typed, start, result.alternatives, shown.ids)


async def escalate(ls: AssistServer, *args: Any) -> dict[str, Any]:
    return await _escalate(ls, args, recompute=False)


async def recompute(ls: AssistServer, *args: Any) -> dict[str, Any]:
    return await _escalate(ls, args, recompute=True)


async def _escalate(ls: AssistServer, args: tuple[Any, ...], recompute: bool) -> dict[str, Any]:
    """The quality tier at `[uri, {line, character}]`, with work-done progress."""
    engine = ls.rt.engine
    where = position_args(args) if engine is not None else None
    if engine is None or where is None:
        return {"text": "", "error": _USAGE}
    uri, at = where
    if ls.rt.store.get(uri) is None:
        return {"text": "", "error": "document is not open"}
    cursor = convert.to_cursor(
        ls.rt.store, uri, types.Position(line=at.line, character=at.character), ls.encoding
    )
    progress = WorkDone(ls, str(uuid.uuid4()), "lsp-assist: quality model")
    await progress.begin()
    try:
        result = await engine.escalate(uri, cursor, recompute=recompute, progress=progress.report)
    except (PolicyError, LspAssistError) as exc:
        ls.show(f"escalation unavailable: {exc}")
        progress.end(str(exc))
        return {"text": "", "tier": "quality", "error": str(exc)}
    progress.end("done")
    ls.note_request(result)
    latency = round(result.stages.get("total", 0.0), 1)
    # "model": which model answered (the quality role's, or a fallback's).
    return {
        "text": result.text,
        "tier": "quality",
        "model": result.model,
        "outcome": result.outcome.value,
        "latencyMs": latency,
    }


def wire_engine(ls: AssistServer) -> None:
    """The engine's listeners: suggestionReady, choices ready, a failed model call. Held by
    the runtime (`composition/listeners.py`): every engine a rebuild makes has them too."""

    def ready(uri: str, version: int, cursor: Cursor) -> None:
        notify_ready(ls, uri, version, cursor)

    def choices_ready(uri: str, version: int, cursor: Cursor, items: int) -> None:
        notify_ready(ls, uri, version, cursor, choices=items)

    listeners = ls.rt.listeners
    listeners.suggestion_ready = ready
    listeners.choices_ready = choices_ready
    listeners.model_failure = ls.note_failure
    if ls.rt.engine is not None:
        listeners.attach(ls.rt.engine)


def ask_again_after_load(ls: AssistServer) -> None:
    """The embedded model is ready: the position the editor last asked about (answered by
    the offline rules while the model loaded) is announced with suggestionReady, so the
    model's suggestion shows without another keystroke. The rules' answer there is
    forgotten first, or the editor's new request would get it back from typing-through."""
    engine = ls.rt.engine
    if ls.last_asked is None or engine is None:
        return
    uri, version, cursor = ls.last_asked
    if ls.rt.store.get(uri) is None or ls.doc_version(uri) != version:
        return  # typed since: that keystroke's request already reached the model
    engine.answers.forget(uri)
    notify_ready(ls, uri, version, cursor)


def notify_ready(ls: AssistServer, uri: str, version: int, cursor: Cursor, choices: int = 0) -> None:
    """`suggestionReady`: a longer suggestion, or (`choices` > 0) an Invoked answer's
    choices, is ready at `cursor`; the client asks again there (Invoked for choices)."""
    try:
        pos = convert.to_position(ls.rt.store, uri, cursor, ls.encoding)
        params: dict[str, Any] = {
            "uri": uri,
            "version": version,
            "position": {"line": pos.line, "character": pos.character},
        }
        if choices:
            params["choices"] = choices
        ls.protocol.notify(NOTIFY_READY, params)
    except Exception as exc:
        log.debug("suggestionReady failed: %s", exc)
