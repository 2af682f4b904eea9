"""AnthropicProvider: headers, system + user messages, fence stripping, error events."""

from __future__ import annotations

import httpx
import pytest

from lsp_assist.config.schema import TierConfig
from lsp_assist.errors import BadResponse, RateLimited
from lsp_assist.providers.anthropic import API_VERSION, AnthropicProvider
from lsp_assist.providers.http import ClientPool
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.unit.providers.conftest import SECRET_KEY, request_for
from tests.unit.providers.native_cases import build, collect, text_of


async def test_messages_body_and_headers(fake: FakeModelServer, pool: ClientPool) -> None:
    await collect(build("anthropic", fake, pool, SECRET_KEY), request_for(stop=("\n", "\n\n", "END")))
    (req,) = fake.model_requests()
    assert req.headers["x-api-key"] == SECRET_KEY and req.headers["anthropic-version"] == API_VERSION
    assert "authorization" not in req.headers
    body = req.body or {}
    assert "ONLY" in body["system"]
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert "<CURSOR>" in body["messages"][0]["content"]
    assert body["stream"] is True and body["max_tokens"] == 32 and body["model"] == "fake-model"
    assert body["stop_sequences"] == ["END"]  # whitespace-only stops are rejected by the API


async def test_fences_are_stripped_and_prose_stops_the_stream(
    fake: FakeModelServer, pool: ClientPool
) -> None:
    fake.default = Script(text="```python\nreturn a + b\n```\nThis adds the numbers." + " more" * 100)
    chunks = await collect(build("anthropic", fake, pool), request_for())
    assert text_of(chunks) == "return a + b\n"
    assert chunks[-1].finish_reason == "stop"


async def test_base_url_with_or_without_v1(pool: ClientPool) -> None:
    for url in ("https://api.anthropic.com", "https://api.anthropic.com/v1", ""):
        p = AnthropicProvider(TierConfig(base_url=url, model="m"), pool)
        assert p.base_url == "https://api.anthropic.com" and p.endpoint_host == "api.anthropic.com"
        assert p.body(request_for())[0] == "https://api.anthropic.com/v1/messages"


async def test_usage_counts_cached_input(pool: ClientPool) -> None:
    events = (
        b'event: message_start\ndata: {"type":"message_start","message":{"usage":'
        b'{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"x"}}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},'
        b'"usage":{"output_tokens":3}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    mpool = ClientPool(
        transport=httpx.MockTransport(
            lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=events)
        )
    )
    p = AnthropicProvider(TierConfig(base_url="https://llm.test", model="m"), mpool, "k")
    chunks = await collect(p, request_for())
    usage = [c.usage for c in chunks if c.usage]
    assert len(usage) == 1 and (usage[0].prompt_tokens, usage[0].completion_tokens) == (100, 3)
    assert text_of(chunks) == "x" and chunks[-1].finish_reason == "length"
    await mpool.aclose_all()


@pytest.mark.parametrize(("kind", "error"), [("rate_limit_error", RateLimited), ("weird_error", BadResponse)])
async def test_error_event_types_map(kind: str, error: type[Exception]) -> None:
    events = (
        b'event: message_start\ndata: {"type":"message_start","message":{}}\n\n'
        b'event: error\ndata: {"type":"error","error":{"type":"' + kind.encode() + b'","message":"m"}}\n\n'
    )
    mpool = ClientPool(
        transport=httpx.MockTransport(
            lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=events)
        )
    )
    p = AnthropicProvider(TierConfig(base_url="https://llm.test", model="m"), mpool, "k")
    with pytest.raises(error, match=kind):
        await collect(p, request_for())
    await mpool.aclose_all()
