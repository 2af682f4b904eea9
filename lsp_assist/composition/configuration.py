"""Build step 1, configuration: what was loaded, resolved for this machine.

Each role's model comes from what is installed and how fast it runs here
(`providers/roles.py`; what the configuration names explicitly wins), each tier's
provider "auto" becomes the embedded model or the offline engine, and the cache
directory is created (a failure is reported, not raised).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from lsp_assist.config.loader import LoadResult, resolve_cache_dir
from lsp_assist.config.schema import Config, LocalConfig, TierConfig
from lsp_assist.providers.roles import Roles, assign, installed_candidates, prompt_threads_for
from lsp_assist.providers.roles import apply as apply_roles


def local_model_available() -> bool:
    """True when the `local` extra is installed (llama.cpp bindings importable)."""
    return importlib.util.find_spec("llama_cpp") is not None


def resolve_tier(name: str, tier: TierConfig, local: LocalConfig) -> TierConfig:
    """Turn provider "auto" into "local" when the embedded model can run, else "offline".

    A tier on the embedded model gets the local prompt budget and timeouts: a small model
    on a laptop CPU reads ~1,000 prompt tokens a second, so a 4,000-character prompt would
    spend its whole first-token budget reading.
    """
    if tier.provider == "auto":
        tier = dataclasses.replace(tier, provider="local" if local_model_available() else "offline")
    if tier.prompt_layout == "auto":
        stable = tier.provider == "local" and local.backend == "inprocess"
        tier = dataclasses.replace(tier, prompt_layout="stable" if stable else "trimmed")
    if tier.provider == "local":
        tier = dataclasses.replace(
            tier,
            context_chars=min(tier.context_chars, local.context_chars),
            first_token_timeout_ms=max(tier.first_token_timeout_ms, local.first_token_timeout_ms),
            answer_budget_ms=tier.answer_budget_ms or local.answer_budget_ms,
            total_timeout_ms=max(tier.total_timeout_ms, local.total_timeout_ms),
        )
    return tier


@dataclass(frozen=True)
class Resolved:
    """The configuration a build runs on, and the problems found resolving it."""

    config: Config
    roles: Roles
    sources: list[str]
    cache_dir: Path
    errors: list[str]


def resolve_configuration(result: LoadResult) -> Resolved:
    """Roles, tiers and the cache directory of `result` (the loaded layers)."""
    errors = list(result.errors)
    candidates = installed_candidates(
        result.config.local, resolve_cache_dir(result.config), prompt_threads_for(result.config.local)
    )
    roles = assign(result.config, candidates)
    config = apply_roles(result.config, roles)
    config.tiers = {name: resolve_tier(name, t, config.local) for name, t in config.tiers.items()}
    cache_dir = resolve_cache_dir(config)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        errors.append(f"cache.dir: cannot create {cache_dir} ({exc}); persistent state disabled")
    return Resolved(config, roles, result.sources, cache_dir, errors)
