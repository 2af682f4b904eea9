"""The server's input loop over stdin: frames (`framing.FrameReader`) handed to pygls.

stdin is read by the event loop where it can be watched (a pipe or a socket: what editors
give), else by a worker thread (a regular file, /dev/null). pygls hops to a worker thread
for every header line and body it reads; on a busy 2-core machine those hops cost
milliseconds per request, hence the event loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

from lsp_assist.protocol.framing import ByteSource, FrameReader

log = logging.getLogger(__name__)

# What the pipe reader buffers before it stops reading the pipe until the frames are read.
_PIPE_BUFFER_BYTES = 1024 * 1024

ErrorHandler = Callable[[Exception, type[JsonRpcException]], Any]


def loop_can_watch(source: BinaryIO) -> bool:
    """Whether the event loop can read `source` as a pipe: a FIFO or a socket (what editors
    give). A regular file or a character device such as /dev/null cannot be watched by epoll:
    asyncio would accept it and then fail inside a callback, leaving a server that neither
    reads nor exits."""
    try:
        mode = os.fstat(source.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class ThreadedSource:
    """A file read by a worker thread, with the ByteSource interface."""

    def __init__(self, source: BinaryIO, executor: Executor | None) -> None:
        self._executor = executor
        # read1: what is there, up to n bytes, in one system call (read(n) would wait for n).
        self._read: Callable[[int], bytes] = getattr(source, "read1", source.read)

    async def read(self, n: int) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._read, n)


async def open_source(source: BinaryIO, executor: Executor | None) -> ByteSource:
    if not loop_can_watch(source):
        return ThreadedSource(source, executor)
    reader = asyncio.StreamReader(limit=_PIPE_BUFFER_BYTES)
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    return reader


async def serve(
    source: BinaryIO,
    protocol: JsonRPCProtocol,
    stop_event: threading.Event,
    on_error: ErrorHandler,
    executor: Executor | None = None,
) -> None:
    """Hand every frame to pygls until the input ends between frames or the server stops.

    Raises framing.InputEnded when the input ends inside a frame. The `exit` notification
    ends this loop with pygls' SystemExit (its status is the one the spec asks for).
    """
    frames = FrameReader(await open_source(source, executor))
    while not stop_event.is_set():
        body = await frames.next_body()
        if body is None:
            return
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
            protocol.handle_message(message)
        except json.JSONDecodeError as exc:
            # The position only: the message of a JSONDecodeError carries no content.
            log.warning("input: a frame of %d bytes that is not JSON (%s); skipped", len(body), exc)
        except Exception as exc:  # as pygls' own loop: log it and serve the next frame
            log.exception("Unable to handle message")
            on_error(exc, JsonRpcException)


#: How long the tasks still running when serving ends get to finish after their cancellation.
EXIT_GRACE_S = 5.0


def run_to_exit(main: Coroutine[Any, Any, None]) -> None:
    """`asyncio.run(main)`, with a bounded end: the tasks left when `main` ends (or raises:
    `exit`, input cut inside a frame) are cancelled and given `EXIT_GRACE_S`, not forever.

    asyncio.run waits for every cancelled task to finish; one that never does keeps the
    process alive after `exit`. CPython 3.11's subprocess start is one: cancelled while it
    connects the child's pipes, it waits forever for pipes that never connected (the
    workspace indexer starting as the input ends right after `initialize`)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main)
    finally:
        try:
            _finish(loop)
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _finish(loop: asyncio.AbstractEventLoop) -> None:
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        _, stuck = loop.run_until_complete(asyncio.wait(tasks, timeout=EXIT_GRACE_S))
        if stuck:
            log.warning(
                "%d task(s) did not end within %.0f s of exit; leaving them", len(stuck), EXIT_GRACE_S
            )
    loop.run_until_complete(loop.shutdown_asyncgens())
    try:
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_default_executor(), EXIT_GRACE_S))
    except asyncio.TimeoutError:
        log.warning("worker threads still busy %.0f s after exit; leaving them", EXIT_GRACE_S)
