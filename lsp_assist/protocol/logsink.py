"""Server log lines as `window/logMessage` with their level, once a client is connected.

Editors treat a language server's stderr as errors: Neovim writes every stderr line to
lsp.log at ERROR, and VS Code's output channel shows it as `[error]`. So after `initialized`
the log goes to the client as logMessage (Error/Warning/Info/Log by level, which both
clients file under the right level), and stderr keeps only CRITICAL lines; until then (and
after the client is gone) stderr carries everything, as a crash at start-up must be seen.
A log file configured by the user is left alone.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from lsprotocol import types

Send = Callable[[types.MessageType, str], None]

_LEVELS = (
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
)


def message_type(levelno: int) -> types.MessageType:
    for threshold, kind in _LEVELS:
        if levelno >= threshold:
            return kind
    return types.MessageType.Log


class ClientLogHandler(logging.Handler):
    """Sends records to the client from the event loop's thread (never from a worker thread:
    the stdout writer is not thread-safe)."""

    def __init__(self, send: Send, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._send = send
        self._loop = loop
        self._thread = threading.get_ident()
        self._busy = False  # a log line emitted while sending one is dropped, not looped

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("pygls"):
            return  # pygls logs about its own writes: sending them would recurse
        try:
            text = self.format(record)
        except Exception:
            return
        kind = message_type(record.levelno)
        if threading.get_ident() == self._thread:
            self._deliver(kind, text)
        elif not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._deliver, kind, text)
            except RuntimeError:
                pass  # the loop is shutting down

    def _deliver(self, kind: types.MessageType, text: str) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            self._send(kind, text)
        except Exception:
            pass  # the client may be gone; logging must never raise
        finally:
            self._busy = False


class _EarlyBuffer(logging.Handler):
    """Keeps the lines below WARNING logged before the client is connected (bounded)."""

    def __init__(self, capacity: int = 200) -> None:
        super().__init__(level=logging.NOTSET)
        self.capacity = capacity
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING and len(self.records) < self.capacity:
            self.records.append(record)


def _stderr_handlers() -> list[logging.Handler]:
    return [
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.StreamHandler) and not isinstance(h, (logging.FileHandler, ClientLogHandler))
    ]


def hold_until_client() -> None:
    """At start-up (stderr logging only): stderr gets WARNING and up, the rest is buffered."""
    streams = _stderr_handlers()
    root = logging.getLogger()
    if not streams or any(isinstance(h, _EarlyBuffer) for h in root.handlers):
        return
    for h in streams:
        h.setLevel(logging.WARNING)
    root.addHandler(_EarlyBuffer())


def attach(send: Send) -> ClientLogHandler | None:
    """Route the root logger to the client; stderr handlers keep CRITICAL only.

    Returns None (and changes nothing) when the log goes to a file.
    """
    root = logging.getLogger()
    streams = _stderr_handlers()
    if not streams or any(isinstance(h, ClientLogHandler) for h in root.handlers):
        return None
    handler = ClientLogHandler(send, asyncio.get_running_loop())
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    for h in streams:
        h.setLevel(logging.CRITICAL)
    for early in [h for h in root.handlers if isinstance(h, _EarlyBuffer)]:
        root.removeHandler(early)
        for record in early.records:
            handler.handle(record)
    root.addHandler(handler)
    return handler


def detach(handler: ClientLogHandler | None) -> None:
    """At shutdown: the client may stop reading; warnings and errors go to stderr again."""
    if handler is None:
        return
    logging.getLogger().removeHandler(handler)
    for h in _stderr_handlers():
        h.setLevel(logging.WARNING)
    # Requests an exiting editor still sends are refused by pygls with an error reply and a
    # "Server shutting down" warning: expected, and Neovim would file it as an ERROR line.
    logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.ERROR)
