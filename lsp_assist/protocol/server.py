"""The pygls classes: `AssistProtocol` (pygls' protocol with three repairs) and
`AssistServer` (the language server: the runtime, the negotiated encoding, and what the
client is told about health: the status item, failure messages, work-done progress).

The handlers live one module per concern beside this one (documents, completion, next
edit, commands and notifications, lifecycle); `handlers.create_server` registers them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import threading
from collections.abc import Coroutine
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from lsp_assist import __version__
from lsp_assist.domain import Cursor, Outcome, Suggestion
from lsp_assist.protocol import framing, logsink, nextedit, status, stdio
from lsp_assist.server import Runtime, effective_url

log = logging.getLogger(__name__)

NOTIFY_STATUS = "lspAssist/status"


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
    """The language server: the runtime the handlers call, and what the client is told."""

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

    def doc_version(self, uri: str) -> int:
        """The open document's version; -1 when it is not open."""
        doc = self.runtime.store.get(uri)
        return -1 if doc is None else int(doc.version)

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


_BACKGROUND: set[asyncio.Task[Any]] = set()


def background(work: Coroutine[Any, Any, Any]) -> None:
    """Run `work` on the running loop without waiting for it (kept referenced until done)."""
    task = asyncio.get_running_loop().create_task(work)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)
