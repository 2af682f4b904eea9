"""OllamaProvider: the /api/generate body (raw FIM vs suffix), keep_alive, warm, base_url."""

from __future__ import annotations

from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import ModelRequest, PromptContext, Snippet
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.ollama import OllamaProvider
from tests.fakes.fake_model_server import FakeModelServer
from tests.unit.providers.conftest import SECRET_KEY, request_for
from tests.unit.providers.native_cases import build, collect


async def test_plain_sends_prompt_and_suffix_with_options(fake: FakeModelServer, pool: ClientPool) -> None:
    p = build("ollama", fake, pool, fim_template="plain")
    await collect(p, request_for(stop=("\n\n",)))
    (req,) = fake.model_requests()
    body = req.body or {}
    assert body["model"] == "fake-model" and body["stream"] is True and "raw" not in body
    assert body["prompt"].endswith("def add(a, b):\n    ") and body["suffix"] == "\n"
    assert body["options"] == {"num_predict": 32, "temperature": 0.0, "stop": ["\n\n"]}
    assert body["keep_alive"] == "30m"
    assert "authorization" not in req.headers


async def test_fim_model_uses_raw_template_with_its_stops(fake: FakeModelServer, pool: ClientPool) -> None:
    p = build("ollama", fake, pool, model="qwen2.5-coder:1.5b")
    await collect(p, request_for())
    body = fake.model_requests()[0].body or {}
    assert body["raw"] is True and "suffix" not in body
    assert body["prompt"] == "<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\n<|fim_middle|>"
    assert "<|endoftext|>" in body["options"]["stop"]


async def test_none_template_is_raw_prefix_only(fake: FakeModelServer, pool: ClientPool) -> None:
    await collect(build("ollama", fake, pool, fim_template="none"), request_for())
    body = fake.model_requests()[0].body or {}
    assert body["raw"] is True and "suffix" not in body and body["prompt"].endswith("def add(a, b):\n    ")


async def test_base_url_variants_and_default(pool: ClientPool) -> None:
    for url in ("http://h:11434", "http://h:11434/", "http://h:11434/v1", "http://h:11434/api"):
        assert OllamaProvider(TierConfig(base_url=url, model="m"), pool).base_url == "http://h:11434"
    p = OllamaProvider(TierConfig(model="m"), pool)
    assert p.base_url == "http://127.0.0.1:11434" and p.endpoint_host == "127.0.0.1"


async def test_warm_loads_the_model_and_key_goes_in_bearer(fake: FakeModelServer, pool: ClientPool) -> None:
    p = OllamaProvider(TierConfig(base_url=fake.origin, model="fake-model"), pool, SECRET_KEY, keep_alive=-1)
    await p.warm()
    (req,) = fake.model_requests()
    assert req.path == "/api/generate" and (req.body or {}) == {
        "model": "fake-model",
        "keep_alive": -1,
        "stream": False,
    }
    assert req.headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert fake.stats.streams_started == 0


async def test_snippets_go_into_the_prompt(fake: FakeModelServer, pool: ClientPool) -> None:
    ctx = PromptContext(
        "python", "a.py", "x = ", "\n", snippets=(Snippet("lib/util.py", "def helper(): ..."),)
    )
    await collect(build("ollama", fake, pool), ModelRequest(ctx, max_tokens=8, temperature=0.0))
    assert "lib/util.py" in (fake.model_requests()[0].body or {})["prompt"]
