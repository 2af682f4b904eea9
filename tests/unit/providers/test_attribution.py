"""Gateway attribution: business line, feature and user on every model call."""

from __future__ import annotations

from lsp_assist.config.schema import AttributionConfig, Config, TeamConfig
from lsp_assist.providers.anthropic import AnthropicProvider
from lsp_assist.providers.attribution import Attribution
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.openai import OpenAIProvider
from lsp_assist.server import team_attribution
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.unit.providers.conftest import request_for, tier_for

LABELS = Attribution(
    "payments",
    "alice",
    "prod",
    AttributionConfig(
        litellm=True, headers={"X-Team": "{business_line}", "X-Cost-Centre": "{feature}/{nope}"}
    ),
)


async def test_openai_call_carries_user_litellm_metadata_and_headers(
    fake: FakeModelServer, pool: ClientPool
) -> None:
    fake.default = Script(text="return 1")
    p = OpenAIProvider(tier_for(fake), pool)
    p.attribution = LABELS
    _ = [c async for c in p.stream(request_for(feature="enrichment"))]  # type: ignore[arg-type]
    (req,) = fake.model_requests()
    body = req.body or {}
    assert body["user"] == "alice"
    assert body["metadata"]["tags"] == [
        "business_line:payments", "feature:enrichment", "user:alice", "environment:prod",
    ]  # fmt: skip
    assert body["metadata"]["business_line"] == "payments"
    assert (
        req.headers["x-litellm-tags"]
        == "business_line:payments,feature:enrichment,user:alice,environment:prod"
    )
    assert req.headers["x-team"] == "payments"
    assert req.headers["x-cost-centre"] == "{feature}/{nope}"  # unknown placeholder: sent as written
    assert "def add" not in str(req.headers)  # labels only, never code


async def test_anthropic_gets_metadata_user_id(fake: FakeModelServer, pool: ClientPool) -> None:
    p = AnthropicProvider(tier_for(fake, model="claude-x"), pool, "k")
    p.attribution = Attribution("payments", "alice")
    _ = [c async for c in p.stream(request_for())]  # type: ignore[arg-type]
    (req,) = fake.model_requests()
    assert (req.body or {})["metadata"] == {"user_id": "alice"}
    assert "x-litellm-tags" not in req.headers


async def test_no_attribution_without_team_settings(fake: FakeModelServer, pool: ClientPool) -> None:
    assert team_attribution(Config(), None) is None
    cfg = Config(team=TeamConfig(business_line="payments", user="bob"))
    a = team_attribution(cfg, None)
    assert a is not None and a.user == "bob" and a.business_line == "payments"
    p = OpenAIProvider(tier_for(fake), pool)
    _ = [c async for c in p.stream(request_for())]  # type: ignore[arg-type]
    body = fake.model_requests()[0].body or {}
    assert "user" not in body and "metadata" not in body


def test_native_apis_get_headers_only() -> None:
    for family in ("mistral", "ollama", "llamacpp"):
        assert LABELS.body_fields(family, "completion") == {}
    assert LABELS.headers("completion")["X-Team"] == "payments"
