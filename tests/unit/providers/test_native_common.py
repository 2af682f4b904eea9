"""Behaviour every native provider shares, run against each family's route on the fake:
streaming, early stop and cancellation closing the upstream response, error mapping,
secrets kept out of messages, connection reuse."""

from __future__ import annotations

import asyncio

import pytest

from lsp_assist.errors import (
    BadRequest,
    BadResponse,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    Unauthorized,
    Unavailable,
)
from lsp_assist.providers.base import Provider
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.local import free_port
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.unit.providers.conftest import SECRET_KEY, request_for
from tests.unit.providers.native_cases import FAMILIES, build, collect, text_of

pytestmark = pytest.mark.parametrize("family", sorted(FAMILIES))


async def test_streams_text_usage_and_finish(family: str, fake: FakeModelServer, pool: ClientPool) -> None:
    fake.default = Script(text="return a + b")
    p = build(family, fake, pool, SECRET_KEY)
    assert isinstance(p, Provider) and p.name == family and p.endpoint_host == "127.0.0.1"
    chunks = await collect(p, request_for())
    assert chunks[0].meta is not None and "connect" in chunks[0].meta and chunks[0].text == ""
    assert text_of(chunks) == "return a + b"
    assert len([c for c in chunks if c.text]) > 1  # streamed, not buffered
    usages = [c.usage for c in chunks if c.usage]
    assert len(usages) == 1 and usages[0].estimated is False
    assert usages[0].prompt_tokens > 0 and usages[0].completion_tokens == 5  # split_tokens("return a + b")
    assert chunks[-1].finish_reason == "stop"
    (req,) = fake.model_requests()
    assert req.path == FAMILIES[family][2]
    await asyncio.to_thread(fake.wait_for, lambda s: s.streams_completed == 1, 5.0)
    assert fake.stats.streams_completed == 1


async def test_length_finish_is_normalised(family: str, fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(Script(text="x = 1", finish_reason="length"))
    chunks = await collect(build(family, fake, pool), request_for())
    assert chunks[-1].finish_reason == "length"


async def test_early_stop_closes_the_stream_upstream(
    family: str, fake: FakeModelServer, pool: ClientPool
) -> None:
    fake.default = Script(text="x = 1\n" * 200, tokens_per_s=200)
    agen = build(family, fake, pool).stream(request_for())
    first = await agen.__anext__()
    while not first.text:
        first = await agen.__anext__()
    await agen.aclose()
    assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_aborted == 1, 5.0)
    assert fake.stats.streams_completed == 0 and fake.stats.tokens_at_abort[0] < 600


async def test_cancelling_the_task_closes_the_stream_upstream(
    family: str, fake: FakeModelServer, pool: ClientPool
) -> None:
    fake.default = Script(text="y = 2\n" * 200, tokens_per_s=100)
    p = build(family, fake, pool)
    got_one = asyncio.Event()

    async def consume() -> None:
        async for c in p.stream(request_for()):
            if c.text:
                got_one.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_one.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_aborted == 1, 5.0)


async def test_http_429_is_rate_limited_with_retry_after(
    family: str, fake: FakeModelServer, pool: ClientPool
) -> None:
    fake.push(fault="http429", retry_after="7")
    with pytest.raises(RateLimited) as info:
        await collect(build(family, fake, pool), request_for())
    assert info.value.retry_after == 7.0


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("http401", Unauthorized),
        ("http403", Unauthorized),
        ("http400", BadRequest),
        ("http404", BadRequest),
        ("http500", Unavailable),
        ("http529", Unavailable),
    ],
)
async def test_status_codes_map(
    family: str, fake: FakeModelServer, pool: ClientPool, fault: str, error: type[Exception]
) -> None:
    fake.push(fault=fault)
    with pytest.raises(error, match=f"HTTP {fault[4:]}"):
        await collect(build(family, fake, pool, SECRET_KEY), request_for())


async def test_cut_stream_is_bad_response(family: str, fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(Script(text="a b c d e f", fault="cut"))
    with pytest.raises(BadResponse):
        await collect(build(family, fake, pool), request_for())


async def test_malformed_frame_is_bad_response(family: str, fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(Script(text="a b c d", fault="malformed"))
    with pytest.raises(BadResponse, match="JSON"):
        await collect(build(family, fake, pool), request_for())


async def test_error_event_is_a_provider_error(family: str, fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(Script(text="a b c d", fault="error_chunk"))
    # Anthropic's error event names its type (overloaded_error): Unavailable; the others
    # only say "error": BadResponse.
    expected = Unavailable if family == "anthropic" else BadResponse
    with pytest.raises(expected):
        await collect(build(family, fake, pool), request_for())


async def test_stall_after_first_tokens_hits_read_timeout(
    family: str, fake: FakeModelServer, pool: ClientPool
) -> None:
    fake.push(Script(text="a b c d", fault="stall_mid"))
    p = build(family, fake, pool)
    p._timeout = p._timeout.__class__(0.3)  # a short read timeout for the test
    with pytest.raises(ProviderTimeout) as info:
        await collect(p, request_for())
    assert info.value.first_token is False


async def test_connection_refused_is_unavailable(family: str, pool: ClientPool) -> None:
    port = free_port()  # nothing listens there
    cls = FAMILIES[family][0]
    from lsp_assist.config.schema import TierConfig

    p = cls(TierConfig(provider=family, base_url=f"http://127.0.0.1:{port}", model="m"), pool, SECRET_KEY)
    with pytest.raises(Unavailable, match="cannot connect") as info:
        await collect(p, request_for())
    assert SECRET_KEY not in str(info.value)


@pytest.mark.parametrize(
    "fault", ["http401", "http400", "http429", "http500", "cut", "malformed", "error_chunk"]
)
async def test_key_and_prompt_never_in_error_messages(
    family: str, fake: FakeModelServer, pool: ClientPool, fault: str
) -> None:
    fake.push(Script(text="a b c d", fault=fault))
    with pytest.raises(ProviderError) as info:
        await collect(
            build(family, fake, pool, SECRET_KEY),
            request_for(prefix="def very_secret_function_name(pw):\n    "),
        )
    msg = str(info.value)
    assert msg and SECRET_KEY not in msg and "very_secret_function_name" not in msg


async def test_keep_alive_reuses_one_connection(family: str, fake: FakeModelServer, pool: ClientPool) -> None:
    p = build(family, fake, pool)
    await p.warm()
    for _ in range(3):
        await collect(p, request_for())
    # The fake counts a stream completed after its last write, which can trail the client's read.
    await asyncio.to_thread(fake.wait_for, lambda s: s.streams_completed == 3, 5.0)
    assert fake.stats.connections == 1 and fake.stats.streams_completed == 3


async def test_rules_match_each_family_prompt(family: str, fake: FakeModelServer, pool: ClientPool) -> None:
    fake.add_rule(r"def mul\(", "return a * b")
    chunks = await collect(build(family, fake, pool), request_for(prefix="def mul(a, b):\n    "))
    assert text_of(chunks) == "return a * b"
