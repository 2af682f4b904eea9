"""An httpcore network backend on asyncio's own transports, for plain-HTTP origins.

httpx's default backend goes through anyio, which yields to the event loop on every write
and read (a checkpoint). On the request path each yield lets whatever else is ready run
before the request's bytes leave: traced in `lsp-assist bench`, the time from the provider's
call to the request body written was 1.5 ms p50, most of it between the headers and the
body. Here a write is `transport.write` (asyncio writes at once when the socket takes it)
and a read returns what is buffered without a yield. httpcore documents this interface
(`httpcore.AsyncNetworkBackend`) for custom backends.

Only plain TCP: TLS origins keep httpx's default (HTTP/2, certificate checks); `start_tls`
is refused so a misuse cannot silently send in the clear.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

# What a connection buffers before it stops reading its socket (a reader that is behind).
READ_HIGH_WATER = 1 << 20


class _Connection(asyncio.Protocol):
    """One TCP connection: bytes buffered as they arrive, a waiter woken by data or EOF."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._can_write: asyncio.Future[None] | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > READ_HIGH_WATER and self.transport is not None and not self._paused:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close the transport: HTTP/1.1 has no use for a half-open socket

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self._can_write is not None and not self._can_write.done():
            self._can_write.set_result(None)

    def pause_writing(self) -> None:
        self._can_write = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._can_write is not None and not self._can_write.done():
            self._can_write.set_result(None)
        self._can_write = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        data = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        if self._paused and len(self.buffer) <= READ_HIGH_WATER // 2 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return data

    async def wait_readable(self, timeout: float | None) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(self._waiter, timeout)
        finally:
            self._waiter = None

    async def wait_writable(self, timeout: float | None) -> None:
        if self._can_write is not None:
            await asyncio.wait_for(asyncio.shield(self._can_write), timeout)


class AsyncioStream(httpcore.AsyncNetworkStream):
    """httpcore's view of one connection."""

    def __init__(self, conn: _Connection) -> None:
        self._conn = conn

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        conn = self._conn
        if not conn.buffer and not conn.eof:
            try:
                await conn.wait_readable(timeout)
            except asyncio.TimeoutError as exc:
                raise httpcore.ReadTimeout(str(exc) or "read timed out") from exc
        if conn.buffer:
            return conn.take(max_bytes)
        if conn.error is not None:
            raise httpcore.ReadError(str(conn.error)) from conn.error
        return b""  # the peer closed the connection

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        conn = self._conn
        if conn.transport is None or conn.transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        conn.transport.write(buffer)
        try:
            await conn.wait_writable(timeout)  # only when the socket's buffer is full
        except asyncio.TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc) or "write timed out") from exc

    async def aclose(self) -> None:
        if self._conn.transport is not None:
            self._conn.transport.close()

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("TLS is not served by the plain-HTTP backend")

    def get_extra_info(self, info: str) -> Any:
        conn = self._conn
        if info == "is_readable":  # an idle keep-alive connection the server closed (or wrote to)
            return conn.eof or bool(conn.buffer)
        if conn.transport is None:
            return None
        if info in ("socket", "client_addr", "server_addr"):
            key = {"socket": "socket", "client_addr": "sockname", "server_addr": "peername"}[info]
            return conn.transport.get_extra_info(key)
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Plain TCP connections on the running event loop, with TCP_NODELAY (a request's
    headers and body are two writes: Nagle would hold the second for an ACK)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            transport, conn = await asyncio.wait_for(
                loop.create_connection(_Connection, host, port, local_addr=local), timeout
            )
        except asyncio.TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc) or "connect timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        return AsyncioStream(conn)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            _transport, conn = await asyncio.wait_for(loop.create_unix_connection(_Connection, path), timeout)
        except asyncio.TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc) or "connect timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return AsyncioStream(conn)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def plain_transport(limits: httpx.Limits) -> httpx.AsyncHTTPTransport | None:
    """An httpx transport for a plain-HTTP origin whose connections use `AsyncioBackend`, or
    None where this httpx keeps its pool elsewhere (then httpx's default is used)."""
    transport = httpx.AsyncHTTPTransport(limits=limits, verify=False, http2=False)
    if not isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        return None
    # httpx takes no network backend; its transport's pool is the one place to give it.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=None,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        http1=True,
        http2=False,
        network_backend=AsyncioBackend(),
    )
    return transport
