"""Server log lines go to the client as logMessage with their level once it is connected."""

from __future__ import annotations

import asyncio
import io
import logging
import threading
from collections.abc import Iterator

import pytest
from lsprotocol import types

from lsp_assist.protocol import logsink


@pytest.fixture
def root_stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    rpc = logging.getLogger("pygls.protocol.json_rpc")
    rpc_level = rpc.level
    buf = io.StringIO()
    for h in saved:
        root.removeHandler(h)
    root.addHandler(logging.StreamHandler(buf))
    root.setLevel(logging.DEBUG)
    try:
        yield buf
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
        for h in saved:
            root.addHandler(h)
        root.setLevel(level)
        rpc.setLevel(rpc_level)  # detach() raises it


def test_levels_map_to_message_types() -> None:
    assert logsink.message_type(logging.ERROR) == types.MessageType.Error
    assert logsink.message_type(logging.CRITICAL) == types.MessageType.Error
    assert logsink.message_type(logging.WARNING) == types.MessageType.Warning
    assert logsink.message_type(logging.INFO) == types.MessageType.Info
    assert logsink.message_type(logging.DEBUG) == types.MessageType.Log


def test_early_lines_are_held_then_replayed_and_stderr_keeps_only_critical(root_stream: io.StringIO) -> None:
    log = logging.getLogger("lsp_assist.test")
    sent: list[tuple[types.MessageType, str]] = []

    async def scenario() -> None:
        logsink.hold_until_client()
        log.info("before the client")
        log.warning("startup warning")
        handler = logsink.attach(lambda kind, text: sent.append((kind, text)))
        assert handler is not None
        log.info("after")
        # From a worker thread the line is delivered on the loop's thread.
        worker = threading.Thread(target=lambda: log.error("from a thread"))
        worker.start()
        worker.join()
        await asyncio.sleep(0.01)
        logsink.detach(handler)

    asyncio.run(scenario())
    stderr = root_stream.getvalue()
    assert "before the client" not in stderr and "after\n" not in stderr and "from a thread" not in stderr
    assert "startup warning" in stderr  # start-up problems stay visible on stderr
    kinds = {text.split(": ", 1)[1]: kind for kind, text in sent}
    assert kinds["before the client"] == types.MessageType.Info
    assert kinds["after"] == types.MessageType.Info
    assert kinds["from a thread"] == types.MessageType.Error


def test_after_shutdown_pygls_refusing_late_requests_is_not_on_stderr(root_stream: io.StringIO) -> None:
    # An editor exiting may still send a request after `shutdown`; pygls answers it with an
    # error and logs a warning, which on stderr Neovim files as an ERROR line in lsp.log.
    rpc = logging.getLogger("pygls.protocol.json_rpc")

    async def scenario() -> None:
        handler = logsink.attach(lambda kind, text: None)
        logsink.detach(handler)
        rpc.warning("Server shutting down. No more requests!")
        logging.getLogger("lsp_assist.test").warning("a real problem at exit")

    asyncio.run(scenario())
    stderr = root_stream.getvalue()
    assert "No more requests" not in stderr
    assert "a real problem at exit" in stderr
