"""OpenAIProvider against the loopback fake model server."""

from __future__ import annotations

import asyncio

import pytest

from lsp_assist.domain import StreamChunk
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
from lsp_assist.providers.openai import OpenAIProvider, strip_fences
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.unit.providers.conftest import SECRET_KEY, request_for, tier_for


async def collect(provider: OpenAIProvider, **kw: object) -> list[StreamChunk]:
    return [c async for c in provider.stream(request_for(**kw))]  # type: ignore[arg-type]


def text_of(chunks: list[StreamChunk]) -> str:
    return "".join(c.text for c in chunks)


async def test_is_a_provider(fake: FakeModelServer, pool: ClientPool) -> None:
    p = OpenAIProvider(tier_for(fake), pool)
    assert isinstance(p, Provider)
    assert p.name == "openai" and p.model == "fake-model" and p.endpoint_host == "127.0.0.1"


async def test_completions_streams_and_sends_fim_fields(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.default = Script(text="return a + b")
    p = OpenAIProvider(tier_for(fake), pool, api_key=SECRET_KEY)
    chunks = await collect(p, stop=("\n\n",))
    assert text_of(chunks) == "return a + b"
    assert len([c for c in chunks if c.text]) > 1  # streamed, not buffered
    usage = [c.usage for c in chunks if c.usage]
    assert usage and usage[0].estimated is False and usage[0].completion_tokens > 0
    assert any(c.finish_reason == "stop" for c in chunks)
    (req,) = fake.model_requests()
    assert req.path == "/v1/completions"
    assert req.headers["authorization"] == f"Bearer {SECRET_KEY}"
    body = req.body or {}
    assert body["prompt"].endswith("def add(a, b):\n    ")
    assert body["suffix"] == "\n"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 32 and body["temperature"] == 0.0 and body["stop"] == ["\n\n"]
    assert body["model"] == "fake-model"


async def test_completions_with_a_fim_template_puts_suffix_in_prompt(
    fake: FakeModelServer, pool: ClientPool
) -> None:
    p = OpenAIProvider(tier_for(fake, fim_template="qwen"), pool)
    await collect(p)
    body = fake.model_requests()[0].body or {}
    assert body["prompt"] == "<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\n<|fim_middle|>"
    assert "suffix" not in body
    assert "<|endoftext|>" in body["stop"]


async def test_no_key_no_authorization_header(fake: FakeModelServer, pool: ClientPool) -> None:
    await collect(OpenAIProvider(tier_for(fake), pool))
    assert "authorization" not in fake.model_requests()[0].headers


async def test_chat_streams_delta_content_and_strips_fences(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.default = Script(text="```python\nreturn a + b\n```\nThis adds the numbers.")
    p = OpenAIProvider(tier_for(fake, api="chat"), pool)
    chunks = await collect(p)
    assert text_of(chunks) == "return a + b\n"
    req = fake.model_requests()[0]
    assert req.path == "/v1/chat/completions"
    msgs = (req.body or {})["messages"]
    assert msgs[0]["role"] == "system" and "ONLY" in msgs[0]["content"]
    assert "<CURSOR>" in msgs[1]["content"]


async def test_chat_without_fences_passes_through(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.default = Script(text="return a + b")
    assert text_of(await collect(OpenAIProvider(tier_for(fake, api="chat"), pool))) == "return a + b"


async def test_early_stop_closes_the_stream_upstream(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.default = Script(text="x = 1\n" * 200, tokens_per_s=200)
    p = OpenAIProvider(tier_for(fake), pool)
    agen = p.stream(request_for())
    first = await agen.__anext__()
    while not first.text:  # a timings-only chunk comes first
        first = await agen.__anext__()
    assert first.text
    await agen.aclose()
    assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_aborted == 1, 5.0)
    stats = fake.stats
    assert stats.streams_completed == 0
    assert stats.tokens_at_abort[0] < 200 * 3


async def test_cancelling_the_task_closes_the_stream_upstream(
    fake: FakeModelServer, pool: ClientPool
) -> None:
    fake.default = Script(text="y = 2\n" * 200, tokens_per_s=100)
    p = OpenAIProvider(tier_for(fake), pool)
    got_one = asyncio.Event()

    async def consume() -> None:
        async for _ in p.stream(request_for()):
            got_one.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_one.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_aborted == 1, 5.0)


async def test_http_500_is_unavailable(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(fault="http500")
    with pytest.raises(Unavailable, match="HTTP 500"):
        await collect(OpenAIProvider(tier_for(fake), pool))


async def test_http_429_is_rate_limited_with_retry_after(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(fault="http429", retry_after="7")
    with pytest.raises(RateLimited) as info:
        await collect(OpenAIProvider(tier_for(fake), pool))
    assert info.value.retry_after == 7.0


@pytest.mark.parametrize(
    ("fault", "error"),
    [("http401", Unauthorized), ("http403", Unauthorized), ("http400", BadRequest), ("http404", BadRequest)],
)
async def test_status_codes_map(
    fake: FakeModelServer, pool: ClientPool, fault: str, error: type[Exception]
) -> None:
    fake.push(fault=fault)
    with pytest.raises(error):
        await collect(OpenAIProvider(tier_for(fake), pool, api_key=SECRET_KEY))


async def test_stall_is_bounded_by_the_callers_timeout(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(fault="stall")
    p = OpenAIProvider(tier_for(fake), pool)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(collect(p), 0.3)
    assert await asyncio.to_thread(fake.wait_for, lambda s: s.requests == 1, 2.0)


async def test_stall_after_first_tokens_hits_read_timeout(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(Script(text="a b c d", fault="stall_mid"))
    p = OpenAIProvider(tier_for(fake, total_timeout_ms=10, first_token_timeout_ms=10), pool)
    p._timeout = p._timeout.__class__(0.3)  # a short read timeout for the test
    with pytest.raises(ProviderTimeout) as info:
        await collect(p)
    assert info.value.first_token is False


async def test_cut_stream_is_bad_response(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(Script(text="a b c d e f", fault="cut"))
    with pytest.raises(BadResponse, match="cut"):
        await collect(OpenAIProvider(tier_for(fake), pool))


async def test_malformed_chunk_is_bad_response(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(Script(text="a b c d", fault="malformed"))
    with pytest.raises(BadResponse, match="JSON"):
        await collect(OpenAIProvider(tier_for(fake), pool))


async def test_error_chunk_is_bad_response(fake: FakeModelServer, pool: ClientPool) -> None:
    fake.push(Script(text="a b c d", fault="error_chunk"))
    with pytest.raises(BadResponse, match="error"):
        await collect(OpenAIProvider(tier_for(fake), pool))


async def test_connection_refused_is_unavailable(pool: ClientPool) -> None:
    from lsp_assist.providers.local import free_port

    srv_url = f"http://127.0.0.1:{free_port()}/v1"
    from lsp_assist.config.schema import TierConfig

    p = OpenAIProvider(TierConfig(provider="openai", base_url=srv_url, model="m"), pool, api_key=SECRET_KEY)
    with pytest.raises(Unavailable, match="cannot connect") as info:
        await collect(p)
    assert SECRET_KEY not in str(info.value)


@pytest.mark.parametrize(
    "fault", ["http401", "http400", "http429", "http500", "cut", "malformed", "error_chunk"]
)
async def test_key_and_prompt_never_in_error_messages(
    fake: FakeModelServer, pool: ClientPool, fault: str
) -> None:
    # Every failure path builds its message without the key or the prompt.
    secret_prompt = "def very_secret_function_name(password):\n    "
    fake.push(Script(text="a b c d", fault=fault))
    p = OpenAIProvider(tier_for(fake), pool, api_key=SECRET_KEY)
    with pytest.raises(ProviderError) as info:
        await collect(p, prefix=secret_prompt)
    msg = str(info.value)
    assert SECRET_KEY not in msg and "very_secret_function_name" not in msg and msg


async def test_server_message_quoting_the_prompt_is_withheld(pool: ClientPool) -> None:
    import httpx

    from lsp_assist.config.schema import TierConfig

    def handler(req: httpx.Request) -> httpx.Response:
        body = req.content.decode()
        return httpx.Response(400, json={"error": {"message": f"bad prompt: {body[:80]} key {SECRET_KEY}"}})

    mpool = ClientPool(transport=httpx.MockTransport(handler))
    p = OpenAIProvider(
        TierConfig(provider="openai", base_url="http://llm.test/v1", model="m"), mpool, SECRET_KEY
    )
    with pytest.raises(BadRequest) as info:
        await collect(p, prefix="def very_secret_function_name():\n")
    assert "very_secret" not in str(info.value) and SECRET_KEY not in str(info.value)
    assert "withheld" in str(info.value)
    await mpool.aclose_all()


async def test_stream_without_done_or_finish_reason_is_bad_response(pool: ClientPool) -> None:
    import httpx

    from lsp_assist.config.schema import TierConfig

    def handler(req: httpx.Request) -> httpx.Response:
        body = b'data: {"choices":[{"text":"abc","index":0,"finish_reason":null}]}\n\n'
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    mpool = ClientPool(transport=httpx.MockTransport(handler))
    p = OpenAIProvider(TierConfig(provider="openai", base_url="http://llm.test/v1", model="m"), mpool)
    with pytest.raises(BadResponse, match="before completion"):
        await collect(p)
    await mpool.aclose_all()


async def test_keep_alive_reuses_one_connection(fake: FakeModelServer, pool: ClientPool) -> None:
    p = OpenAIProvider(tier_for(fake), pool)
    await p.warm()
    for _ in range(3):
        await collect(p)
    assert fake.stats.connections == 1
    assert fake.requests[0].path == "/v1/models"


def test_strip_fences_variants() -> None:
    assert strip_fences("```py\nx = 1\n```") == "x = 1\n"
    assert strip_fences("x = 1") == "x = 1"
    assert strip_fences("  ```\nfoo()\n```\ntext") == "foo()\n"
    assert strip_fences("a`b") == "a`b"
    assert strip_fences("``") == "``"
