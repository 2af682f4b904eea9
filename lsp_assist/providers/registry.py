"""Builds a `Provider` for a tier from its `provider` key.

Each API family is one module with one factory registered in `FACTORIES`; adding Ollama
`/api/generate`, llama.cpp `/infill`, Anthropic messages or Mistral `/v1/fim/completions`
means writing that module and adding one entry here (or calling `register`).
Factories import their module lazily so an unused family costs nothing at startup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.errors import ConfigError
from lsp_assist.providers.base import Provider
from lsp_assist.providers.http import ClientPool

if TYPE_CHECKING:
    from typing_extensions import Unpack


@dataclass(frozen=True)
class ProviderDeps:
    """Everything a factory may need; each takes what it uses."""

    tier_name: str
    tier: TierConfig
    clients: ClientPool
    local_config: LocalConfig
    cache_dir: Path
    corpus: Callable[[], Iterable[str]]
    api_key: str | None


Factory = Callable[[ProviderDeps], Provider]


def _offline(d: ProviderDeps) -> Provider:
    from lsp_assist.providers.offline import OfflineProvider

    return OfflineProvider(d.corpus)


def _openai(d: ProviderDeps) -> Provider:
    from lsp_assist.providers.openai import OpenAIProvider

    if not d.tier.base_url:
        raise ConfigError(f"tiers.{d.tier_name}.base_url is required for provider 'openai'")
    if d.tier.api not in ("completions", "chat"):
        raise ConfigError(f"tiers.{d.tier_name}.api must be 'completions' or 'chat', not {d.tier.api!r}")
    return OpenAIProvider(d.tier, d.clients, d.api_key)


def _local(d: ProviderDeps) -> Provider:
    from lsp_assist.providers.local import build_local

    provider: Provider = build_local(d.tier, d.local_config, d.clients, d.cache_dir)
    return provider


def _ollama(d: ProviderDeps) -> Provider:
    from lsp_assist.providers.ollama import OllamaProvider

    return OllamaProvider(d.tier, d.clients, d.api_key)


def _llamacpp(d: ProviderDeps) -> Provider:
    from lsp_assist.providers.llamacpp import LlamaCppProvider

    return LlamaCppProvider(d.tier, d.clients, d.api_key)


def _anthropic(d: ProviderDeps) -> Provider:
    from lsp_assist.providers.anthropic import AnthropicProvider

    if not d.tier.model:
        raise ConfigError(f"tiers.{d.tier_name}.model is required for provider 'anthropic'")
    return AnthropicProvider(d.tier, d.clients, d.api_key)


def _mistral(d: ProviderDeps) -> Provider:
    from lsp_assist.providers.mistral import MistralProvider

    if not d.tier.model:
        raise ConfigError(f"tiers.{d.tier_name}.model is required for provider 'mistral'")
    return MistralProvider(d.tier, d.clients, d.api_key)


FACTORIES: dict[str, Factory] = {
    "offline": _offline,
    "openai": _openai,
    "local": _local,
    "ollama": _ollama,
    "llamacpp": _llamacpp,
    "anthropic": _anthropic,
    "mistral": _mistral,
}


def register(name: str, factory: Factory) -> None:
    """Add (or replace) an API family."""
    FACTORIES[name] = factory


class ProviderOptions(TypedDict, total=False):
    """The optional inputs of `build_provider` (its keywords); each family takes what it uses."""

    local_config: LocalConfig | None  # the embedded model's settings (default: LocalConfig())
    cache_dir: Path | str  # where models and rates live (default: ~/.cache/lsp-assist)
    corpus: Callable[[], Iterable[str]] | None  # the offline engine's text
    api_key: str | None


def build_provider(
    tier_name: str, tier: TierConfig, *, clients: ClientPool, **options: Unpack[ProviderOptions]
) -> Provider:
    """The provider for one tier. Raises ConfigError naming `tiers.<name>.provider` when
    the family is unknown. No I/O happens here (the local server starts on first use)."""
    factory = FACTORIES.get(tier.provider)
    if factory is None:
        known = ", ".join(sorted(FACTORIES))
        raise ConfigError(f"tiers.{tier_name}.provider: unknown provider {tier.provider!r} (known: {known})")
    cache_dir = options.get("cache_dir") or ""
    corpus = options.get("corpus")
    deps = ProviderDeps(
        tier_name=tier_name,
        tier=tier,
        clients=clients,
        local_config=options.get("local_config") or LocalConfig(),
        cache_dir=Path(cache_dir) if cache_dir else Path.home() / ".cache" / "lsp-assist",
        corpus=corpus or (lambda: ()),
        api_key=options.get("api_key"),
    )
    return factory(deps)


__all__ = ["FACTORIES", "Factory", "ProviderDeps", "ProviderOptions", "build_provider", "register"]
