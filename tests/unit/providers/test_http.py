"""The shared HTTP layer: SSE/NDJSON readers, error mapping, the client pool."""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from lsp_assist.errors import BadRequest, BadResponse, RateLimited, Unauthorized, Unavailable
from lsp_assist.providers.http import (
    ClientPool,
    SSEEvent,
    error_for_status,
    ndjson_objects,
    origin_of,
    parse_retry_after,
    scrub,
    sse_events,
    sse_events_from_lines,
)
from tests.fakes.fake_model_server import FakeModelServer


def mock_pool(frames: list[bytes], content_type: str = "text/event-stream") -> ClientPool:
    def handler(req: httpx.Request) -> httpx.Response:
        async def body() -> AsyncIterator[bytes]:
            for f in frames:
                yield f

        return httpx.Response(200, headers={"content-type": content_type}, content=body())

    return ClientPool(transport=httpx.MockTransport(handler))


async def read_events(frames: list[bytes]) -> list[SSEEvent]:
    pool = mock_pool(frames)
    try:
        async with pool.get("http://llm.test").stream("POST", "http://llm.test/v1/completions") as r:
            return [e async for e in sse_events(r)]
    finally:
        await pool.aclose_all()


async def test_sse_frames_split_mid_line_and_mid_utf8() -> None:
    events = await read_events([b'data: {"t":"h\xc3', b'\xa9llo"}\n', b"\ndata: [DO", b"NE]\n\n"])
    assert [e.data for e in events] == ['{"t":"héllo"}', "[DONE]"]


async def test_sse_multiline_data_comments_events_and_crlf() -> None:
    events = await read_events(
        [
            b": keep-alive\r\n\r\nevent: ping\r\ndata: a\r\ndata: b\r\n\r\n",
            b"data:c\n\ndata: tail-without-blank",
        ]
    )
    assert events == [
        SSEEvent("ping", "a\nb"),
        SSEEvent("message", "c"),
        SSEEvent("message", "tail-without-blank"),
    ]


async def test_sse_from_lines_ignores_unknown_fields() -> None:
    async def lines() -> AsyncIterator[str]:
        for line in ["id: 3", "retry: 10", "data: x", "", ""]:
            yield line

    assert [e async for e in sse_events_from_lines(lines())] == [SSEEvent("message", "x")]


async def test_ndjson_lines_and_malformed_line() -> None:
    pool = mock_pool([b'{"response":"a","do', b'ne":false}\n\n{"done":true}\n'], "application/x-ndjson")
    async with pool.get("http://llm.test").stream("POST", "http://llm.test/api/generate") as r:
        objs = [o async for o in ndjson_objects(r)]
    assert objs == [{"response": "a", "done": False}, {"done": True}]
    bad = mock_pool([b"{not json\n"])
    async with bad.get("http://llm.test").stream("POST", "http://llm.test/api/generate") as r:
        with pytest.raises(BadResponse):
            _ = [o async for o in ndjson_objects(r)]
    await pool.aclose_all()
    await bad.aclose_all()


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    got = parse_retry_after(date, now=now)
    assert got is not None and 28 <= got <= 31
    assert parse_retry_after(email.utils.formatdate(now - 100, usegmt=True), now=now) == 0.0


def _response(status: int, body: bytes = b"{}", headers: dict[str, str] | None = None) -> httpx.Response:
    req = httpx.Request("POST", "https://api.example.com/v1/completions")
    return httpx.Response(status, content=body, headers=headers or {}, request=req)


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, Unauthorized),
        (403, Unauthorized),
        (400, BadRequest),
        (422, BadRequest),
        (500, Unavailable),
        (503, Unavailable),
    ],
)
def test_error_for_status(status: int, error: type[Exception]) -> None:
    err = error_for_status(_response(status, b'{"error":{"message":"nope"}}'), provider="openai")
    assert isinstance(err, error)
    assert "api.example.com" in str(err) and str(status) in str(err) and "nope" in str(err)


def test_429_with_date_retry_after() -> None:
    date = email.utils.formatdate(time.time() + 60, usegmt=True)
    err = error_for_status(_response(429, headers={"retry-after": date}), provider="openai")
    assert isinstance(err, RateLimited) and err.retry_after is not None and 50 < err.retry_after <= 61


def test_scrub_removes_key_and_quoted_prompt() -> None:
    key = "sk-abcdef0123456789"
    prompt = "def my_private_function(x):\n    return x\n"
    assert "withheld" in scrub(f"invalid key {key}", [key])
    assert "withheld" in scrub("cannot parse: def my_private_function(x)", [prompt])
    assert scrub("model not found", [key, prompt]) == "model not found"
    assert len(scrub("x" * 1000, [])) <= 160


def test_origin_keys() -> None:
    assert origin_of("https://API.example.com/v1") == ("https", "api.example.com", 443)
    assert origin_of("http://127.0.0.1:8080/v1") == ("http", "127.0.0.1", 8080)


async def test_pool_one_client_per_origin() -> None:
    pool = ClientPool()
    a = pool.get("http://127.0.0.1:9/v1")
    assert pool.get("http://127.0.0.1:9/other") is a
    assert pool.get("http://127.0.0.1:10/v1") is not a
    assert pool.get("https://example.com/v1") is not pool.get("http://example.com/v1")
    assert len(pool) == 4
    await pool.aclose_all()
    assert a.is_closed and len(pool) == 0


async def test_warm_opens_the_connection_and_swallows_errors(fake: FakeModelServer) -> None:
    pool = ClientPool()
    await pool.warm(fake.base_url, {"Authorization": "Bearer k"})
    assert fake.stats.connections == 1 and fake.requests[0].path == "/v1/models"
    await pool.warm("http://127.0.0.1:1/v1")  # refused: no exception
    await pool.aclose_all()
