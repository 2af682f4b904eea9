"""LlamaCppProvider: the /infill body (input_extra, cache_prompt, n_indent, t_max_predict_ms)."""

from __future__ import annotations

from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import ModelRequest, PromptContext, Snippet
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.llamacpp import LlamaCppProvider
from tests.fakes.fake_model_server import FakeModelServer
from tests.unit.providers.conftest import SECRET_KEY
from tests.unit.providers.native_cases import build, collect


async def test_infill_body(fake: FakeModelServer, pool: ClientPool) -> None:
    ctx = PromptContext(
        "python",
        "src/calc.py",
        "class A:\n    def f(self):\n        ",
        "\n",
        snippets=(Snippet("lib/util.py", "def helper(): ..."), Snippet("b.py", "X = 1")),
        indent="        ",
    )
    p = build("llamacpp", fake, pool, SECRET_KEY, total_timeout_ms=3000, first_token_timeout_ms=1000)
    await collect(p, ModelRequest(ctx, max_tokens=40, temperature=0.2, stop=("\n\n",)))
    (req,) = fake.model_requests()
    body = req.body or {}
    assert req.path == "/infill" and req.headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert body["input_prefix"] == ctx.prefix and body["input_suffix"] == "\n"
    assert body["input_extra"] == [
        {"filename": "lib/util.py", "text": "def helper(): ..."},
        {"filename": "b.py", "text": "X = 1"},
    ]
    assert body["cache_prompt"] is True and body["stream"] is True
    assert body["n_predict"] == 40 and body["temperature"] == 0.2 and body["stop"] == ["\n\n"]
    assert body["n_indent"] == 8 and body["t_max_predict_ms"] == 2000


async def test_base_url_drops_v1_and_defaults(pool: ClientPool) -> None:
    assert LlamaCppProvider(TierConfig(base_url="http://h:8080/v1/"), pool).base_url == "http://h:8080"
    assert LlamaCppProvider(TierConfig(), pool).base_url == "http://127.0.0.1:8080"
    assert LlamaCppProvider(TierConfig(), pool, max_predict_ms=250)._max_predict_ms == 250
