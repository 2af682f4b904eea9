"""The plain-HTTP backend (`providers/asyncio_net.py`) against a real loopback server: what
httpx's own backend does, it does (streams, keep-alive, a server that closes an idle
connection, timeouts, refused connections, a stream closed mid-body)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import httpx
import pytest

from lsp_assist.providers.asyncio_net import AsyncioBackend
from lsp_assist.providers.http import ClientPool


class Server:
    """HTTP/1.1 on 127.0.0.1: streams `lines` one by one (chunked), `delay_s` apart; counts
    connections; closes an idle connection after its first answer when `close_after`."""

    def __init__(self, lines: list[bytes], delay_s: float = 0.0, close_after: bool = False) -> None:
        self.lines, self.delay_s, self.close_after = lines, delay_s, close_after
        self.connections = 0
        self.stall = False
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    async def __aenter__(self) -> Server:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                if self.stall:
                    await asyncio.sleep(5)
                writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
                for line in self.lines:
                    writer.write(b"%x\r\n%s\r\n" % (len(line), line))
                    await writer.drain()
                    if self.delay_s:
                        await asyncio.sleep(self.delay_s)
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                if self.close_after:
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


async def _lines(client: httpx.AsyncClient, url: str) -> AsyncIterator[str]:
    async with client.stream("POST", url, json={"prompt": "x" * 5000}) as resp:
        assert resp.status_code == 200
        async for line in resp.aiter_lines():
            yield line


@pytest.fixture
def pool() -> ClientPool:
    return ClientPool()


async def test_a_streamed_answer_arrives_line_by_line_over_one_kept_connection(pool: ClientPool) -> None:
    async with Server([b"data: a\n", b"data: b\n", b"data: [DONE]\n"], delay_s=0.01) as srv:
        client = pool.get(f"http://127.0.0.1:{srv.port}/v1")
        url = f"http://127.0.0.1:{srv.port}/v1/completions"
        for _ in range(3):
            assert [x async for x in _lines(client, url)] == ["data: a", "data: b", "data: [DONE]"]
        assert srv.connections == 1  # keep-alive: the same connection each time
        await client.aclose()


async def test_plain_http_origins_use_it_and_tls_origins_do_not(pool: ClientPool) -> None:
    plain = pool.get("http://127.0.0.1:1/v1")
    tls = pool.get("https://example.invalid/v1")
    backends = [
        type(c._transport._pool._network_backend)  # type: ignore[attr-defined]
        for c in (plain, tls)
    ]
    assert backends[0] is AsyncioBackend and backends[1] is not AsyncioBackend
    await plain.aclose()
    await tls.aclose()


async def test_a_connection_the_server_closed_while_idle_is_replaced(pool: ClientPool) -> None:
    async with Server([b"ok\n"], close_after=True) as srv:
        client = pool.get(f"http://127.0.0.1:{srv.port}/v1")
        url = f"http://127.0.0.1:{srv.port}/v1/completions"
        assert [x async for x in _lines(client, url)] == ["ok"]
        await asyncio.sleep(0.05)  # the server's FIN arrives while the connection is idle
        assert [x async for x in _lines(client, url)] == ["ok"]
        assert srv.connections == 2
        await client.aclose()


async def test_closing_a_stream_mid_body_leaves_the_next_request_working(pool: ClientPool) -> None:
    async with Server([b"first\n", b"second\n", b"third\n"], delay_s=0.05) as srv:
        client = pool.get(f"http://127.0.0.1:{srv.port}/v1")
        url = f"http://127.0.0.1:{srv.port}/v1/completions"
        async with client.stream("POST", url, json={}) as resp:
            async for line in resp.aiter_lines():
                assert line == "first"
                break  # how a provider stops generating: close the stream
        assert [x async for x in _lines(client, url)] == ["first", "second", "third"]
        await client.aclose()


async def test_a_stalled_server_gives_a_read_timeout() -> None:
    pool = ClientPool(timeout=httpx.Timeout(connect=1.0, read=0.1, write=1.0, pool=1.0))
    async with Server([b"late\n"]) as srv:
        srv.stall = True
        client = pool.get(f"http://127.0.0.1:{srv.port}/v1")
        with pytest.raises(httpx.ReadTimeout):
            async for _ in _lines(client, f"http://127.0.0.1:{srv.port}/v1/completions"):
                pass
        await client.aclose()


async def test_a_refused_connection_gives_a_connect_error(pool: ClientPool) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: the connection is refused
        client = pool.get(f"http://127.0.0.1:{port}/v1")
        with pytest.raises(httpx.ConnectError):
            await client.post(f"http://127.0.0.1:{port}/v1/completions", json={})
        await client.aclose()
