"""MistralProvider: /v1/fim/completions body, bearer key, base_url handling."""

from __future__ import annotations

from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import ModelRequest, PromptContext, Snippet
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.mistral import MistralProvider
from tests.fakes.fake_model_server import FakeModelServer
from tests.unit.providers.conftest import SECRET_KEY
from tests.unit.providers.native_cases import build, collect


async def test_fim_body_and_bearer_key(fake: FakeModelServer, pool: ClientPool) -> None:
    ctx = PromptContext("python", "a.py", "x = ", "\nprint(x)\n", snippets=(Snippet("lib/u.py", "Y = 2"),))
    p = build("mistral", fake, pool, SECRET_KEY, model="codestral-latest")
    await collect(p, ModelRequest(ctx, max_tokens=16, temperature=0.0, stop=("\n\n",)))
    (req,) = fake.model_requests()
    assert req.path == "/v1/fim/completions" and req.headers["authorization"] == f"Bearer {SECRET_KEY}"
    body = req.body or {}
    assert body["model"] == "codestral-latest" and body["stream"] is True
    assert body["prompt"].endswith("x = ") and "lib/u.py" in body["prompt"]
    assert body["suffix"] == "\nprint(x)\n"
    assert body["max_tokens"] == 16 and body["temperature"] == 0.0 and body["stop"] == ["\n\n"]


async def test_base_url_gets_exactly_one_v1(pool: ClientPool) -> None:
    for url in (
        "https://codestral.mistral.ai",
        "https://codestral.mistral.ai/v1",
        "https://codestral.mistral.ai/v1/",
    ):
        assert (
            MistralProvider(TierConfig(base_url=url, model="m"), pool).base_url
            == "https://codestral.mistral.ai/v1"
        )
    assert MistralProvider(TierConfig(model="m"), pool).endpoint_host == "codestral.mistral.ai"
