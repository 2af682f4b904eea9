"""Build step 5, pipeline: the completion engine and the next-edit model of a build.

The engine is new on every build, over the long-lived parts (`context.py`) and a new
suggestion cache; it is given the runtime's `Listeners` as it is made, so what the editor
listens to never depends on which build answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lsp_assist.composition.configuration import Resolved
from lsp_assist.composition.context import ContextParts
from lsp_assist.composition.listeners import Listeners
from lsp_assist.composition.providers import ProviderParts
from lsp_assist.config.schema import Config
from lsp_assist.governance.guard import Governance
from lsp_assist.nextedit.model import RAW_PROMPT_PROVIDERS, ModelPredictor
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.components import Components
from lsp_assist.pipeline.engine import CompletionEngine
from lsp_assist.pipeline.scheduler import debounce_policy
from lsp_assist.providers.base import Provider
from lsp_assist.telemetry.stats import StatsCollector


@dataclass(frozen=True)
class PipelineParts:
    engine: CompletionEngine
    errors: list[str]


def build_pipeline(
    resolved: Resolved,
    gov: Governance,
    models: ProviderParts,
    stats: StatsCollector,
    parts: ContextParts,
    listeners: Listeners,
) -> PipelineParts:
    """The engine over `parts` and `models`, with `listeners`; the next-edit service set up."""
    config = resolved.config
    parts.scheduler.configure(debounce_policy(config.completion, config.tier("fast").provider))
    cache = SuggestionCache(
        resolved.cache_dir / "suggestions" if config.cache.enabled else None,
        memory_entries=config.cache.memory_entries,
        disk_size_mb=config.cache.disk_size_mb,
        ttl_s=config.cache.ttl_s,
    )
    components = Components(
        store=parts.store,
        context=parts.context,
        governance=gov,
        providers=models.providers,
        offline=models.offline,
        cache=cache,
        stats=stats,
        scheduler=parts.scheduler,
        typing=parts.typing,
        epoch=parts.policy_epoch,
    )
    engine = CompletionEngine(config, components)
    listeners.attach(engine)
    errors = configure_next_edit(config, models.providers, gov, parts)
    return PipelineParts(engine, errors)


def configure_next_edit(
    config: Config, providers: Mapping[str, Provider], gov: Governance, parts: ContextParts
) -> list[str]:
    """The next-edit service's settings and, with `predictor = "model"|"both"`, its model
    (a tier served by a provider that takes raw prompts; else the rules alone, said once)."""
    ne = config.next_edit
    tier = config.next_edit_tier()
    provider = providers.get(tier)
    if ne.predictor == "rules":
        parts.next_edit.configure(ne, None, ("", "", ""))
        return []
    if provider is None or provider.name not in RAW_PROMPT_PROVIDERS:
        name = provider.name if provider is not None else "none"
        parts.next_edit.configure(ne, None, ("", "", ""))
        return [
            f"next_edit.predictor: tier {tier!r} runs on {name!r}; the model predictor needs one of "
            f"{', '.join(RAW_PROMPT_PROVIDERS)} (next edits come from the rules)"
        ]
    key = f"{provider.name}:{provider.endpoint_host or 'local'}:{provider.model}"
    model = ModelPredictor(ne, parts.store, provider, tier, gov, key)
    parts.next_edit.configure(ne, model, (tier, provider.name, provider.model))
    return []
