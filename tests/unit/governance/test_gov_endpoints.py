"""allowed_hosts against the endpoint each tier really calls, provider defaults included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_assist.governance.policy import apply_policy, parse_policy
from lsp_assist.governance.settings import parse_settings
from lsp_assist.server import Runtime, build_runtime, effective_url


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LSP_ASSIST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "test-key-not-real")


def runtime(tiers: dict[str, Any], **governance: Any) -> Runtime:
    return build_runtime(None, {"tiers": tiers, "governance": governance})


ANTHROPIC = {"provider": "anthropic", "model": "claude-haiku-4-5", "api_key_env": "TEST_ANTHROPIC_KEY"}
MISTRAL = {"provider": "mistral", "model": "codestral-latest"}


def test_a_provider_default_url_outside_allowed_hosts_is_refused() -> None:
    rt = runtime({"fast": ANTHROPIC, "quality": MISTRAL}, allowed_hosts=["api.example.com"])
    assert rt.providers["fast"].name == "offline" and rt.providers["quality"].name == "offline"
    text = " ".join(rt.errors)
    for host, tier in (("api.anthropic.com", "fast"), ("codestral.mistral.ai", "quality")):
        assert f"tiers.{tier}: endpoint refused: host {host!r}" in text
    assert "default endpoint" in text and "test-key-not-real" not in text


def test_a_listed_default_host_is_allowed() -> None:
    rt = runtime({"fast": ANTHROPIC, "quality": MISTRAL}, allowed_hosts=["api.anthropic.com"])
    assert rt.providers["fast"].name == "anthropic" and effective_url(rt.providers["fast"]).startswith(
        "https://api.anthropic.com"
    )
    assert rt.providers["quality"].name == "offline"  # codestral.mistral.ai is not listed


def test_empty_allowed_hosts_means_loopback_only() -> None:
    remote = {"provider": "openai", "base_url": "https://api.openai.com/v1", "model": "m"}
    ollama = {"provider": "ollama", "model": "qwen2.5-coder"}  # default http://127.0.0.1:11434
    rt = runtime({"fast": ollama, "quality": remote, "backup": ANTHROPIC}, allowed_hosts=[])
    assert rt.providers["fast"].name == "ollama"
    assert rt.providers["quality"].name == "offline" and rt.providers["backup"].name == "offline"
    assert "loopback only" in " ".join(rt.errors)
    # The key absent: any host.
    rt = runtime({"fast": ANTHROPIC, "quality": remote})
    assert rt.providers["fast"].name == "anthropic" and rt.providers["quality"].name == "openai"


def test_empty_list_parses_to_loopback_only_and_narrows_a_policy() -> None:
    assert parse_settings({"allowed_hosts": []})[0].allowed_hosts == ()
    assert parse_settings({})[0].allowed_hosts is None
    policy, _ = parse_policy({"allowed_hosts": ["api.example.com"]})
    user, _ = parse_settings({"allowed_hosts": []})
    assert apply_policy(user, policy)[0].allowed_hosts == ()
    nothing, _ = parse_settings({})
    assert apply_policy(nothing, policy)[0].allowed_hosts == ("api.example.com",)
