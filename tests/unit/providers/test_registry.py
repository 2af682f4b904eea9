"""build_provider: the family table and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.errors import ConfigError
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.local import LocalProvider
from lsp_assist.providers.offline import OfflineProvider
from lsp_assist.providers.openai import OpenAIProvider
from lsp_assist.providers.registry import FACTORIES, build_provider, register


async def test_builds_each_family(tmp_path: Path) -> None:
    pool = ClientPool()
    off = build_provider("backup", TierConfig(provider="offline"), clients=pool)
    assert isinstance(off, OfflineProvider)
    oa = build_provider(
        "quality",
        TierConfig(provider="openai", base_url="https://api.example.com/v1", model="m"),
        clients=pool,
        api_key="k",
    )
    assert isinstance(oa, OpenAIProvider) and oa.endpoint_host == "api.example.com"
    loc = build_provider(
        "fast",
        TierConfig(provider="local"),
        clients=pool,
        local_config=LocalConfig(model="smollm2"),
        cache_dir=tmp_path,
    )
    assert isinstance(loc, LocalProvider) and loc.model == "smollm2"
    await loc.aclose()
    await pool.aclose_all()


def test_unknown_provider_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"tiers\.fast\.provider"):
        build_provider("fast", TierConfig(provider="nope"), clients=ClientPool())


def test_openai_needs_base_url_and_valid_api() -> None:
    with pytest.raises(ConfigError, match=r"tiers\.quality\.base_url"):
        build_provider("quality", TierConfig(provider="openai"), clients=ClientPool())
    with pytest.raises(ConfigError, match=r"tiers\.quality\.api"):
        build_provider(
            "quality", TierConfig(provider="openai", base_url="http://x/v1", api="edit"), clients=ClientPool()
        )


def test_register_adds_a_family() -> None:
    register("custom", lambda d: OfflineProvider(d.corpus))
    try:
        assert isinstance(
            build_provider("fast", TierConfig(provider="custom"), clients=ClientPool()), OfflineProvider
        )
    finally:
        FACTORIES.pop("custom")


@pytest.mark.parametrize(
    ("family", "cls_path", "host"),
    [
        ("ollama", "lsp_assist.providers.ollama.OllamaProvider", "127.0.0.1"),
        ("llamacpp", "lsp_assist.providers.llamacpp.LlamaCppProvider", "127.0.0.1"),
        ("anthropic", "lsp_assist.providers.anthropic.AnthropicProvider", "api.anthropic.com"),
        ("mistral", "lsp_assist.providers.mistral.MistralProvider", "codestral.mistral.ai"),
    ],
)
def test_builds_the_native_families(family: str, cls_path: str, host: str) -> None:
    import importlib

    from lsp_assist.providers.base import Provider

    module, _, name = cls_path.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    p = build_provider("quality", TierConfig(provider=family, model="m"), clients=ClientPool(), api_key="k")
    assert isinstance(p, cls) and isinstance(p, Provider)
    assert p.name == family and p.endpoint_host == host


@pytest.mark.parametrize("family", ["anthropic", "mistral"])
def test_hosted_families_need_a_model(family: str) -> None:
    with pytest.raises(ConfigError, match=r"tiers\.quality\.model"):
        build_provider("quality", TierConfig(provider=family), clients=ClientPool())
