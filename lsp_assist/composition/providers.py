"""Build step 3, providers: the model behind each enabled tier.

One embedded model per model file, shared by the tiers that use it; an embedded model
whose own load settings did not change is kept across a rebuild (not read again). A tier
that cannot be built, or whose endpoint governance refuses, falls back to the offline
engine and says why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsp_assist.composition.configuration import Resolved
from lsp_assist.composition.governance import team_attribution
from lsp_assist.composition.listeners import Listeners
from lsp_assist.config.schema import TIER_NAMES, LocalConfig, TierConfig
from lsp_assist.errors import ConfigError, EndpointRefused, LspAssistError
from lsp_assist.governance.guard import Governance
from lsp_assist.providers.base import EmbeddedModel, HttpEndpoint, Provider
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.offline import OfflineProvider
from lsp_assist.providers.registry import build_provider
from lsp_assist.providers.streaming import StreamingProvider

# What the embedded model is loaded with; the other `local` fields are tier defaults.
_TIER_DEFAULT_FIELDS = ("context_chars", "first_token_timeout_ms", "total_timeout_ms", "answer_budget_ms")
# (model, the `local` settings it is loaded with, cache dir): equal keys, same model.
LoadKey = tuple[str, tuple[tuple[str, object], ...], str]
LoadedModels = Sequence[tuple[LoadKey, Provider]]


def local_load_key(tier: TierConfig, local: LocalConfig, cache_dir: Path) -> LoadKey:
    load_fields = tuple(
        (name, value) for name, value in dataclasses.asdict(local).items() if name not in _TIER_DEFAULT_FIELDS
    )
    return (tier.model or local.model, load_fields, str(cache_dir))


def effective_url(provider: Provider) -> str:
    """Where the provider's requests go: its base URL; "" when it runs in this process or
    in a process we start on loopback (offline, local). A provider that names a host but
    no URL is treated as https to that host, so allowed_hosts still applies to it."""
    url = provider.base_url if isinstance(provider, HttpEndpoint) else None
    if url:
        return url
    host = provider.endpoint_host
    return f"https://{host}" if host else ""


def local_models(providers: Iterable[Provider]) -> list[EmbeddedModel]:
    """The in-process embedded models among `providers` (one per model file)."""
    unique = {id(p): p for p in providers}.values()
    return [p for p in unique if isinstance(p, EmbeddedModel)]


@dataclass(frozen=True)
class ProviderParts:
    providers: dict[str, Provider]  # tier name -> provider
    offline: Provider
    loaded: LoadedModels  # the embedded models built, with the settings they load with
    errors: list[str]


@dataclass
class _Build:
    """One providers step in progress."""

    resolved: Resolved
    gov: Governance
    clients: ClientPool
    corpus: Callable[[], list[str]]
    previous: LoadedModels
    shared: dict[str, Provider] = field(default_factory=dict)  # model -> its embedded provider
    loaded: list[tuple[LoadKey, Provider]] = field(default_factory=list)

    def local(self, tier: TierConfig) -> Provider | None:
        """The tier's embedded model when one already built serves it (this build's copy,
        the rewrite model's view of it, or the previous build's with the same settings)."""
        model = tier.model or self.resolved.config.local.model
        if model in self.shared:  # one model per file, shared by the tiers that use it
            return self.shared[model]
        strong = _strong_view(self.shared.values(), model)
        if strong is not None:  # the typing provider's rewrite model: one copy, one slot
            return strong
        # A change that leaves the model's load settings alone (a debounce, a remote tier)
        # keeps it: reading the weights again cost the editor 1-2 s of offline answers.
        key = local_load_key(tier, self.resolved.config.local, self.resolved.cache_dir)
        kept = next((p for k, p in self.previous if k == key), None)
        if kept is not None:
            self.adopt(tier, kept)
        return kept

    def adopt(self, tier: TierConfig, provider: Provider) -> None:
        local = self.resolved.config.local
        self.shared[tier.model or local.model] = provider
        self.loaded.append((local_load_key(tier, local, self.resolved.cache_dir), provider))

    def new(self, name: str, tier: TierConfig) -> Provider:
        """Build the tier's provider; raises when it cannot be built or may not be called."""
        api_key = self.gov.api_key(name, tier)
        if not self.gov.tier_allowed(name):
            self.gov.check_tier_endpoint(name, tier)
        provider = build_provider(
            name,
            tier,
            clients=self.clients,
            local_config=self.resolved.config.local,
            cache_dir=self.resolved.cache_dir,
            corpus=self.corpus,
            api_key=api_key,
        )
        # Building does no I/O; the endpoint is checked where requests will really go,
        # which is the family's default URL when base_url is empty.
        _check_endpoint(self.gov, name, tier, provider)
        if tier.provider == "local":
            self.adopt(tier, provider)
        return provider


def build_providers(
    resolved: Resolved,
    gov: Governance,
    clients: ClientPool,
    corpus: Callable[[], list[str]],
    previous: LoadedModels,
    listeners: Listeners,
) -> ProviderParts:
    """Each enabled tier's provider; embedded models of `previous` with unchanged load
    settings are kept. Loading progress goes to `listeners`."""
    build = _Build(resolved, gov, clients, corpus, previous)
    offline = OfflineProvider(corpus=corpus)
    providers: dict[str, Provider] = {}
    errors: list[str] = []
    for name in TIER_NAMES:
        tier = resolved.config.tier(name)
        if not tier.enabled:
            continue
        if tier.provider == "offline":
            providers[name] = offline
            continue
        existing = build.local(tier) if tier.provider == "local" else None
        if existing is not None:
            providers[name] = existing
            continue
        try:
            providers[name] = build.new(name, tier)
        except (ConfigError, LspAssistError) as exc:
            errors.append(f"tiers.{name}: {exc}; this tier falls back to the offline engine")
            providers[name] = offline
    attribution = team_attribution(resolved.config, gov)
    for p in providers.values():
        if attribution is not None and isinstance(p, StreamingProvider):
            p.attribution = attribution
    for model in local_models(providers.values()):
        model.on_progress = listeners.load_event
    return ProviderParts(providers, offline, build.loaded, errors)


def _strong_view(built: Iterable[Provider], model: str) -> Provider | None:
    """The rewrite model of an embedded provider already built, as a provider, when it is
    `model` (`LocalProvider.strong_view`): the quality tier on the code model then shares
    the typing provider's copy of it instead of loading a second one."""
    from lsp_assist.providers.model_rates import model_id

    for provider in built:
        name = getattr(provider, "refiner_name", "")
        make = getattr(provider, "strong_view", None)
        if name and make is not None and model_id(name) == model_id(model):
            view: Provider = make()
            return view
    return None


def _check_endpoint(gov: Governance, name: str, tier: TierConfig, provider: Provider) -> None:
    """Raise EndpointRefused when the provider's effective endpoint may not be called."""
    url = effective_url(provider)
    try:
        gov.check_tier_endpoint(name, tier, base_url=url)
    except EndpointRefused as exc:
        if tier.base_url:
            raise
        raise EndpointRefused(
            f"{exc} (the default endpoint of provider {tier.provider!r}, {url}; "
            f"set tiers.{name}.base_url or governance.allowed_hosts)"
        ) from None
