"""The LSP surface: thin pygls handlers that convert, call the pipeline and convert back.

This package is the only one that imports pygls and lsprotocol. Handlers are async (so
`$/cancelRequest` cancels them at their next await), never block the loop, and always
answer: a failure below becomes an empty result and a log line, never an internal-error
response (editors show those to the user as failures).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import threading
import uuid
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from lsp_assist import __version__
from lsp_assist.config.loader import unwrap_client_settings
from lsp_assist.domain import Cursor, Outcome, Suggestion
from lsp_assist.errors import LspAssistError, PolicyError
from lsp_assist.pipeline.prefill import NOTIFY_CURSOR_REST
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.protocol import convert, framing, index_feed, logsink, nextedit, status, stdio
from lsp_assist.protocol.progress import WorkDone as _Progress
from lsp_assist.server import Runtime, effective_url
from lsp_assist.workspace.service import settle_long_lived_heap

log = logging.getLogger(__name__)

CMD_ESCALATE = "lspAssist.escalate"
CMD_RECOMPUTE = "lspAssist.recompute"
CMD_WARM = "lspAssist.warmCache"
CMD_STATS = "lspAssist.stats"
CMD_ACCEPTED = "lspAssist.accepted"
CMD_EVENT = "lspAssist.suggestionEvent"
NOTIFY_READY = "lspAssist/suggestionReady"
NOTIFY_STATUS = "lspAssist/status"
NOTIFY_DEFINITIONS = "lspAssist/definitions"  # client -> server (context/editor_definitions.py)
NOTIFY_EVENT = "lspAssist/suggestionEvent"  # client -> server (telemetry/events.py)


class AssistProtocol(LanguageServerProtocol):
    """pygls' protocol with three repairs: ill-typed requests get InvalidParams instead of
    silence (pygls only logs), finished handler futures are forgotten, and open documents
    are kept once (in the server's `DocumentStore`), not also in pygls' workspace.

    pygls 2.1.1 records the future of every generator handler (all built-in notification
    handlers: didOpen, didChange, didClose...) and of every coroutine a generator yields
    to in `_request_futures` under a fresh uuid, and only a request's own reply removes
    an entry, so each didChange left ~1.9 KB behind for the life of the process.
    `_execute_handler` is where every entry is recorded; after it runs, the entry it made
    gets a done-callback that removes it (only if it is still the same future: a request
    id can be reused once its reply has gone).
    """

    #: Off only in benchmarks/soak.py, to measure the leak this repairs in the same run.
    forget_done_futures = True

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if not self.forget_done_futures:
            return
        futures: dict[Any, Any] = self._request_futures
        future = futures.get(msg_id)
        if future is not None:
            # Runs at once when the handler already finished (a synchronous generator).
            future.add_done_callback(functools.partial(_forget_future, futures, msg_id))

    # pygls' built-in document sync keeps a second copy of every open document (the server
    # has its own, `DocumentStore`) and converts each didChange range with a pure-Python
    # loop over the whole line: 0.7-1 s per keystroke on a 2 MB minified line. The three
    # built-ins are replaced by ones that only pass the notification on.

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        # pygls builds the capabilities from the registered features; experimental ones
        # (next-edit suggestions, protocol/nextedit.py) are added to what it built.
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"nextEdit": dict(nextedit.CAPABILITY)}
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _user_handler(self, method: str, params: Any) -> Any:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    def pending_futures(self) -> int:
        """How many handler and client-request futures are recorded (for stats and tests)."""
        return len(self._request_futures)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams:
            if isinstance(data, dict) and "id" in data and "method" in data:
                log.warning(
                    "request %r (%s): invalid params; answered InvalidParams",
                    data.get("id"),
                    data.get("method"),
                )
                self._send_response(
                    data["id"],
                    error=types.ResponseError(
                        code=types.ErrorCodes.InvalidParams,
                        message=f"invalid params for {data.get('method')}",
                    ),
                )
            raise


def _forget_future(futures: dict[Any, Any], msg_id: Any, future: Any) -> None:
    if futures.get(msg_id) is future:
        futures.pop(msg_id, None)


class AssistServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("lsp-assist", __version__, protocol_cls=AssistProtocol)
        self.runtime = Runtime()
        self.encoding = "utf-16"
        self.log_handler: logsink.ClientLogHandler | None = None
        self.health: dict[str, Any] = {"state": "ok", "message": "", "notified": False}
        self.last_request: dict[str, Any] = {}
        # Where the editor last asked (uri, version, cursor): announced again once the
        # embedded model has loaded, since what was answered meanwhile came from the rules.
        self.last_asked: tuple[str, int, Cursor] | None = None
        # A few status updates a second at most, however fast the user types.
        self.status_throttle = status.StatusThrottle(self._send_status, interval_s=0.25)
        self.notices = status.FailureNotices()
        # What the process exits with once serving stdio ends (cli/serve_cmd.py returns it).
        self.exit_status = 0

    def _start_io_async(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve stdio with lsp-assist's input loop (`stdio.serve`) instead of pygls' own, and
        keep the exit status in `exit_status` (pygls' loop swallows it: `exit` without
        `shutdown` must end the process with 1, and input that ends inside a frame is an
        error too)."""
        stop_event = self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        source = stdin or sys.stdin.buffer
        try:
            stdio.run_to_exit(
                stdio.serve(source, self.protocol, stop_event, self.report_server_error, self.thread_pool)
            )
        except framing.InputEnded as exc:
            # The client is gone: the error goes to stderr, where its log is kept.
            logsink.detach(self.log_handler)
            self.log_handler = None
            log.error("%s; exiting", exc)
            self.exit_status = 1
        except BrokenPipeError:
            log.error("connection to the client is lost; shutting down")
        except SystemExit as exc:  # the `exit` notification: pygls raises the status to exit with
            self.exit_status = exc.code if isinstance(exc.code, int) else 1
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    @property
    def rt(self) -> Runtime:
        return self.runtime

    def log_to_client(self, kind: types.MessageType, text: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=text))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        try:
            self.window_show_message(types.ShowMessageParams(type=kind, message=f"lsp-assist: {message}"))
        except Exception as exc:  # the client may be gone
            log.debug("showMessage failed: %s", exc)

    def status(self, state: str = "ok", message: str = "", *, notified: bool = False) -> None:
        """Health (and the last request's tier and latency) to the client's status item, now."""
        gov_status: dict[str, Any] = {}
        if self.rt.governance is not None:
            try:
                gov_status = self.rt.governance.status()
            except Exception:
                gov_status = {}
        if gov_status.get("warning") and state == "ok":
            state, message = "warning", str(gov_status.get("warning"))
            # The same outage was already named with its endpoint: no second toast for it.
            notified = notified or bool(self.notices.failing)
        self.health = {"state": state, "message": message, "notified": notified}
        self.status_throttle.now(self._status_payload())

    def note_request(self, result: Suggestion) -> None:
        """An answered request: its tier and latency reach the status item (throttled)."""
        fields = status.request_fields(result)
        if fields is None:
            return
        self.last_request = fields
        if result.outcome == Outcome.MODEL and self.notices.recovered(result.tier):
            self.status()  # the endpoint answers again: back to ok (unless governance says not)
            return
        self.status_throttle.update(self._status_payload())

    def note_failure(self, tier: str, exc: BaseException) -> None:
        """A failed model call: the first one of its kind names the endpoint, at once, as a
        message (a toast in VS Code, vim.notify in Neovim) and in the status item."""
        provider = self.rt.providers.get(tier)
        url = effective_url(provider) if provider is not None else self.rt.config.tier(tier).base_url
        message = self.notices.failure(tier, exc, url)
        if message is None:
            return
        log.warning("%s", message)
        self.show(message)
        self.status("warning", message, notified=True)  # clients need not show it again

    def _status_payload(self) -> dict[str, Any]:
        tier = self.rt.config.tier("fast")
        base: dict[str, Any] = {"tier": "fast", "provider": tier.provider}
        return {**base, **self.last_request, **self.health}

    def _send_status(self, payload: dict[str, Any]) -> None:
        try:
            self.protocol.notify(NOTIFY_STATUS, payload)
        except Exception as exc:  # the client may be gone
            log.debug("status failed: %s", exc)


def _version(ls: AssistServer, uri: str) -> int:
    doc = ls.rt.store.get(uri)
    return -1 if doc is None else int(doc.version)


def _uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _rest_params(params: Any) -> tuple[str, int | None, int, int]:
    """(uri, version or None, line, character) of `lspAssist/cursorRest`; raises on a bad one."""
    doc, pos = params["textDocument"], params["position"]
    uri = doc["uri"]
    if not isinstance(uri, str):
        raise TypeError("textDocument.uri is not a string")
    version = doc.get("version")
    line, character = int(pos["line"]), int(pos["character"])
    if line < 0 or character < 0:
        raise ValueError("negative position")
    return uri, None if version is None else int(version), line, character


def _plain(value: Any) -> Any:
    """A custom notification's params as plain dicts and lists (pygls may hand over objects)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if hasattr(value, "__dict__"):
        return {k: _plain(v) for k, v in vars(value).items()}
    return value


def _workspace_roots(params: types.InitializeParams) -> list[Path]:
    roots: list[Path] = []
    for folder in params.workspace_folders or []:
        p = _uri_to_path(folder.uri)
        if p is not None:
            roots.append(p)
    if not roots and params.root_uri:
        p = _uri_to_path(params.root_uri)
        if p is not None:
            roots.append(p)
    return roots


def create_server() -> AssistServer:
    server = AssistServer()
    _register(server)
    return server


def _register(server: AssistServer) -> None:
    nextedit.register(server)

    @server.feature(types.INITIALIZE)
    def initialize(ls: AssistServer, params: types.InitializeParams) -> None:
        ls.encoding = convert.encoding_name(ls.workspace.position_encoding)
        ls.runtime.workspace_roots = _workspace_roots(params)
        ls.runtime.layers.init_options = unwrap_client_settings(params.initialization_options or {})
        ls.runtime.build()
        # The embedded model loads while the client finishes its handshake (progress is
        # reported from `initialized`, when the client may receive requests).
        try:
            ls.runtime.start_model_load()
        except Exception as exc:
            log.warning("local model: cannot start loading: %s", exc)
        # Breaker transitions (open, half-open, closed) update the status bar at once.
        ls.runtime.on_breaker_change = lambda name, old, new: ls.status()
        # A team store outage changes what limits apply: say so once, not only in the log.
        ls.runtime.on_team_store_change = lambda message, up: _team_store_changed(ls, message, up)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AssistServer, params: types.InitializedParams) -> None:
        # From now on log lines reach the client as logMessage with their level (editors file
        # a server's stderr under errors).
        ls.log_handler = logsink.attach(ls.log_to_client)
        if ls.rt.errors:
            ls.show("configuration problems (running on defaults for these): " + "; ".join(ls.rt.errors[:5]))
        _wire_engine(ls)
        _wire_load_progress(ls)
        index_feed.wire(ls, _Progress)
        ls.status()
        # Everything allocated so far (lsprotocol/cattrs machinery, grammars, config) lives
        # as long as the process: move it out of the collector's way, so collections on the
        # request path only walk young objects.
        settle_long_lived_heap()
        # Open connections / start the local model without delaying anything else.
        task = asyncio.get_running_loop().create_task(ls.rt.warm())
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AssistServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        path = _uri_to_path(doc.uri)
        ls.rt.store.open(doc.uri, doc.language_id, doc.version, doc.text, str(path) if path else None)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AssistServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.rt.store.get(uri) is None:
            log.info("didChange for a document that is not open; ignored")
            return
        version = params.text_document.version
        if ls.rt.store.is_stale(uri, version):
            log.warning("didChange for version %d after version %d dropped", version, _version(ls, uri))
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
        if ls.rt.engine is not None:
            ls.rt.engine.note_change(uri)
        ls.rt.touch()
        last = params.content_changes[-1] if params.content_changes else None
        if isinstance(last, types.TextDocumentContentChangePartial):
            ls.rt.note_edit(uri, last.range.start.line)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AssistServer, params: types.DidSaveTextDocumentParams) -> None:
        path = _uri_to_path(params.text_document.uri)
        if path is not None:
            _policy_files(ls, [str(path)])
            ls.rt.workspace.note_saved(str(path))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: AssistServer, params: types.DidChangeWatchedFilesParams) -> None:
        found = [_uri_to_path(c.uri) for c in params.changes]
        paths = [str(p) for p in found if p is not None]
        _policy_files(ls, paths)
        ls.rt.workspace.note_file_events(paths)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: AssistServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        # Synchronous, in message order: an added folder's exclusions are in force before
        # any later message (its files' didOpen, a completion in them) is handled.
        added = [p for p in (_uri_to_path(f.uri) for f in params.event.added) if p is not None]
        removed = [p for p in (_uri_to_path(f.uri) for f in params.event.removed) if p is not None]
        log.info("workspace folders: %d added, %d removed", len(added), len(removed))
        _rebuilt(ls, ls.rt.change_folders(added, removed))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AssistServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.rt.store.close(uri)
        if ls.rt.engine is not None:
            ls.rt.engine.forget(uri)

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
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
        version = _version(ls, uri)
        ls.last_asked = (uri, version, cursor)
        result = await engine.complete(CompletionRequest(uri=uri, cursor=cursor, invoked=invoked))
        ls.note_request(result)
        # Numbers only, never code: benchmarks/local_latency.py reads this line at debug level.
        log.debug(
            "inline completion answered: outcome=%s tier=%s version=%d line=%d col=%d ttft_ms=%.1f"
            " total_ms=%.1f chars=%d",
            result.outcome.value,
            result.tier,
            version,
            cursor.line,
            cursor.character,
            result.stages.get("ttft", 0.0) + result.stages.get("connect", 0.0),
            result.stages.get("total", 0.0),
            len(result.text),
        )
        if _version(ls, uri) != version:
            return types.InlineCompletionList(items=[])  # never answer for text that changed
        position = convert.to_position(ls.rt.store, uri, cursor, ls.encoding)
        typed = result.typed.rsplit("\n", 1)[-1]  # a range stays on one line
        start = None
        if typed and len(typed) <= cursor.character:
            start = convert.to_position(
                ls.rt.store, uri, Cursor(cursor.line, cursor.character - len(typed)), ls.encoding
            )
        shown_typed = typed if start else ""
        labels = ls.rt.suggestion_labels(
            uri, result.tier, result.provider, result.model, result.outcome.value
        )
        anchor = Cursor(cursor.line, cursor.character - len(shown_typed))
        ids = [ls.rt.issue_suggestion(uri, anchor, shown_typed + result.text, len(shown_typed), labels)]
        ids += [ls.rt.issue_suggestion(uri, cursor, alt, 0, labels) for alt in result.alternatives if alt]
        return convert.completion_list(result.text, position, shown_typed, start, result.alternatives, ids)

    @server.feature(NOTIFY_DEFINITIONS)
    def did_send_definitions(ls: AssistServer, params: Any) -> None:
        # Counts only in the log: the definitions' names and text are code.
        try:
            log.debug("%s", ls.rt.note_definitions(_plain(params)))
        except ValueError as exc:
            log.warning("%s: bad params (%s); ignored", NOTIFY_DEFINITIONS, exc)

    @server.feature(NOTIFY_CURSOR_REST)
    def did_rest_cursor(ls: AssistServer, params: Any) -> None:
        # The cursor rests: the idle embedded model reads that position's prompt ahead.
        try:
            uri, version, line, character = _rest_params(_plain(params))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            log.warning("%s: bad params (%s); ignored", NOTIFY_CURSOR_REST, exc)
            return
        if ls.rt.store.get(uri) is None:
            said = ls.rt.note_cursor_rest(uri, version, Cursor(line, 0))
        else:
            cursor = convert.to_cursor(ls.rt.store, uri, types.Position(line, character), ls.encoding)
            said = ls.rt.note_cursor_rest(uri, version, cursor)
        log.debug("%s line=%d character=%d: %s", NOTIFY_CURSOR_REST, line, character, said)  # numbers only

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: AssistServer, params: types.DidChangeConfigurationParams) -> None:
        ls.rt.layers.client = unwrap_client_settings(params.settings)
        errors = ls.rt.build()
        _wire_engine(ls)
        await ls.rt.retire_old()
        if errors:
            ls.show("configuration problems (running on defaults for these): " + "; ".join(errors[:5]))
        ls.status()
        task = asyncio.get_running_loop().create_task(ls.rt.warm())
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: AssistServer, params: None) -> None:
        await ls.rt.aclose()
        logsink.detach(ls.log_handler)
        ls.log_handler = None

    @server.feature(NOTIFY_EVENT)
    def suggestion_event(ls: AssistServer, params: Any) -> None:
        _suggestion_event(ls, _plain(params))

    @server.command(CMD_EVENT)
    def suggestion_event_command(ls: AssistServer, *args: Any) -> dict[str, bool]:
        # The same as the notification, as a request: a client sends its pending didChange
        # before a request, so an accept's position is read against the text it refers to.
        return {"ok": _suggestion_event(ls, _plain(args[0]) if args else None)}

    @server.command(CMD_ACCEPTED)
    def accepted(ls: AssistServer, *args: Any) -> dict[str, bool]:
        # The item's command, run by the editor after it inserted the item: a whole accept of
        # suggestion args[0] (clients that report accepts themselves do not run it).
        sid = args[0] if args and isinstance(args[0], str) else None
        if sid is not None:
            ls.rt.suggestions.event(sid, "accepted")
        if ls.rt.stats is not None:
            ls.rt.stats.record_accept()
        return {"ok": True}

    @server.command(CMD_STATS)
    def stats(ls: AssistServer, *args: Any) -> dict[str, Any]:
        assert ls.rt.stats is not None
        report = ls.rt.stats.report()
        gov = ls.rt.governance.status() if ls.rt.governance is not None else {}
        proto = ls.protocol
        pending = proto.pending_futures() if isinstance(proto, AssistProtocol) else -1
        return {
            "report": ls.rt.stats.format(),
            "summary": _jsonable(report),
            "governance": _jsonable(gov),
            # Futures pygls holds (this request's own included): stays small unless they leak.
            "protocol": {"pendingFutures": pending},
            "memory": ls.rt.memory_report(),  # bytes per bounded memo, and "total"
            "suggestions": _jsonable(ls.rt.suggestions.report()),
            "cursorRest": ls.rt.prefiller.counts.as_dict(),  # lspAssist/cursorRest, counts only
        }

    async def _escalate(ls: AssistServer, args: tuple[Any, ...], recompute: bool) -> dict[str, Any]:
        engine = ls.rt.engine
        if engine is None or len(args) < 2:
            return {"text": "", "error": "usage: [uri, {line, character}]"}
        uri = str(args[0])
        pos = args[1]
        try:
            line = int(pos["line"] if isinstance(pos, dict) else pos.line)
            character = int(pos["character"] if isinstance(pos, dict) else pos.character)
        except (AttributeError, KeyError, TypeError, ValueError):
            return {"text": "", "error": "usage: [uri, {line, character}]"}
        if ls.rt.store.get(uri) is None:
            return {"text": "", "error": "document is not open"}
        cursor = convert.to_cursor(
            ls.rt.store, uri, types.Position(line=line, character=character), ls.encoding
        )
        token = str(uuid.uuid4())
        progress = _Progress(ls, token, "lsp-assist: quality model")
        await progress.begin()
        try:
            result = await engine.escalate(uri, cursor, recompute=recompute, progress=progress.report)
        except (PolicyError, LspAssistError) as exc:
            ls.show(f"escalation unavailable: {exc}")
            progress.end(str(exc))
            return {"text": "", "tier": "quality", "error": str(exc)}
        progress.end("done")
        ls.note_request(result)
        return {
            "text": result.text,
            "tier": "quality",
            "model": result.model,  # which model answered (the quality role's, or a fallback's)
            "outcome": result.outcome.value,
            "latencyMs": round(result.stages.get("total", 0.0), 1),
        }

    @server.command(CMD_ESCALATE)
    async def escalate(ls: AssistServer, *args: Any) -> dict[str, Any]:
        return await _escalate(ls, args, recompute=False)

    @server.command(CMD_RECOMPUTE)
    async def recompute(ls: AssistServer, *args: Any) -> dict[str, Any]:
        return await _escalate(ls, args, recompute=True)

    @server.command(CMD_WARM)
    async def warm(ls: AssistServer, *args: Any) -> dict[str, Any]:
        token = str(uuid.uuid4())
        progress = _Progress(ls, token, "lsp-assist: warming up")
        await progress.begin()
        try:
            summary: dict[str, Any] = await ls.rt.warmup(progress=progress.report)
        except Exception as exc:  # warming is best effort; the server keeps serving
            log.warning("warmup failed: %s", exc)
            summary = {"error": str(exc)}
        progress.end(f"failed: {summary['error']}" if "error" in summary else "done")
        result: dict[str, Any] = _jsonable(summary)
        return result


_BACKGROUND: set[asyncio.Task[Any]] = set()


def _policy_files(ls: AssistServer, paths: list[str]) -> None:
    """Settings or ignore files changed on disk: in force before the next message is handled
    (this runs synchronously, in message order); a folder's settings file rebuilds."""
    if ls.rt.note_policy_files(paths):
        _rebuilt(ls, ls.rt.build())


def _rebuilt(ls: AssistServer, errors: list[str]) -> None:
    """After a synchronous rebuild: rewire the new engine now; close what it replaced, report
    problems and warm up in the background."""
    _wire_engine(ls)

    async def settle() -> None:
        await ls.rt.retire_old()
        if errors:
            ls.show("configuration problems (running on defaults for these): " + "; ".join(errors[:5]))
        ls.status()
        await ls.rt.warm()

    task = asyncio.get_running_loop().create_task(settle())
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


def _suggestion_event(ls: AssistServer, p: Any) -> bool:
    """`{id, event, chars?, offset?, position?, unit?}` from a client: counts and labels only
    reach the records. `position` (where an accepted text starts) wins over `offset`."""
    if not isinstance(p, dict):
        return False
    sid, kind = p.get("id"), p.get("event")
    if not isinstance(sid, str) or not isinstance(kind, str):
        log.debug("%s: bad params; ignored", NOTIFY_EVENT)
        return False
    at = None
    pos = p.get("position")
    uri = p.get("uri")
    if isinstance(pos, dict) and isinstance(uri, str) and ls.rt.store.get(uri) is not None:
        try:
            cursor = convert.to_cursor(
                ls.rt.store,
                uri,
                types.Position(line=int(pos["line"]), character=int(pos["character"])),
                ls.encoding,
            )
            doc = ls.rt.store.get(uri)
            at = doc.offset(cursor) if doc is not None else None
        except (KeyError, TypeError, ValueError):
            at = None
    known = ls.rt.suggestions.event(
        sid,
        kind,
        chars=_int_or_none(p.get("chars")),
        offset=_int_or_none(p.get("offset")),
        at=at,
        unit=str(p.get("unit") or ""),
    )
    if known and kind == "accepted" and ls.rt.stats is not None:
        ls.rt.stats.record_accept()
    return known


def _wire_load_progress(ls: AssistServer) -> None:
    """`$/progress` for loading the embedded model ("loading the local model", percent)."""
    events: asyncio.Queue[Any] = asyncio.Queue()
    state = ls.rt.load_state
    if not ls.rt.local_models():
        return
    if state is not None and not state.done:
        events.put_nowait(state)
    ls.rt.on_load_progress = events.put_nowait

    async def pump() -> None:
        progress: _Progress | None = None
        while True:
            event = await events.get()
            if event.error:
                ls.show(f"{event.error}; suggestions come from the offline engine meanwhile")
            if progress is None and not event.done:
                progress = _Progress(ls, str(uuid.uuid4()), "lsp-assist: loading the local model")
                await progress.begin()
            if progress is None:
                continue
            if event.done:
                progress.end(event.error or event.message)
                progress = None
                if not event.error:
                    _ask_again_after_load(ls)
            else:
                progress.report(event.message, event.percent)

    task = asyncio.get_running_loop().create_task(pump())
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


def _ask_again_after_load(ls: AssistServer) -> None:
    """The embedded model is ready: the position the editor last asked about (answered by
    the offline rules while the model loaded) is announced with suggestionReady, so the
    model's suggestion shows without another keystroke. The rules' answer there is
    forgotten first, or the editor's new request would get it back from typing-through."""
    engine = ls.rt.engine
    if ls.last_asked is None or engine is None:
        return
    uri, version, cursor = ls.last_asked
    if ls.rt.store.get(uri) is None or _version(ls, uri) != version:
        return  # typed since: that keystroke's request already reached the model
    engine.answers.forget(uri)
    _notify_ready(ls, uri, version, cursor)


def _notify_ready(ls: AssistServer, uri: str, version: int, cursor: Cursor, choices: int = 0) -> None:
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


def _wire_engine(ls: AssistServer) -> None:
    engine = ls.rt.engine
    if engine is None:
        return

    def ready(uri: str, version: int, cursor: Cursor) -> None:
        _notify_ready(ls, uri, version, cursor)

    engine.on_suggestion_ready = ready

    def choices_ready(uri: str, version: int, cursor: Cursor, items: int) -> None:
        _notify_ready(ls, uri, version, cursor, choices=items)

    engine.on_choices_ready = choices_ready
    engine.tiers.on_failure = ls.note_failure


def _team_store_changed(ls: AssistServer, message: str, up: bool) -> None:
    ls.show(message, types.MessageType.Info if up else types.MessageType.Warning)
    ls.status()


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _jsonable(value: Any) -> Any:
    """Replace NaN (not JSON) with None, recursively."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
