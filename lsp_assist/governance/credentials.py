"""API keys per environment, read from environment variables only.

Resolution for tier T (with `api_key_env = V`) in environment E:

1. `governance.environments.E.T` names the variable, when given;
2. else `V_<E upper-cased>` (e.g. `OPENAI_KEY_PROD`) when that variable is set;
3. else `V`, unless `governance.strict_environment` is on.

A tier that names no variable needs no key ("not needed"). Keys are never logged,
audited, put in errors or `repr`s: `key_status` and `describe_key` say only "set" or
"missing" and which variable NAME was consulted.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from lsp_assist.config.schema import TierConfig
from lsp_assist.governance.settings import GovernanceSettings

KeyStatus = Literal["set", "missing", "not needed"]


def key_variable(
    tier_name: str, tier: TierConfig, settings: GovernanceSettings, environ: Mapping[str, str] | None = None
) -> str | None:
    """The NAME of the variable that holds (or would hold) this tier's key; None: no key needed."""
    env = os.environ if environ is None else environ
    mapped = settings.environments.get(settings.environment, {}).get(tier_name)
    if mapped:
        return mapped
    base = tier.api_key_env.strip()
    if not base:
        return None
    specific = f"{base}_{settings.environment.upper()}"
    if env.get(specific) or settings.strict_environment:
        return specific
    return base


def resolve_api_key(
    tier_name: str, tier: TierConfig, settings: GovernanceSettings, environ: Mapping[str, str] | None = None
) -> str | None:
    """The key for this tier in the current environment, or None (missing or not needed)."""
    env = os.environ if environ is None else environ
    var = key_variable(tier_name, tier, settings, env)
    if var is None:
        return None
    value = env.get(var, "").strip()
    return value or None


def key_status(
    tier_name: str, tier: TierConfig, settings: GovernanceSettings, environ: Mapping[str, str] | None = None
) -> KeyStatus:
    env = os.environ if environ is None else environ
    if key_variable(tier_name, tier, settings, env) is None:
        return "not needed"
    return "set" if resolve_api_key(tier_name, tier, settings, env) else "missing"


def describe_key(
    tier_name: str, tier: TierConfig, settings: GovernanceSettings, environ: Mapping[str, str] | None = None
) -> str:
    """For `doctor`: e.g. `"$OPENAI_KEY_PROD: set"`. Never contains the key."""
    env = os.environ if environ is None else environ
    var = key_variable(tier_name, tier, settings, env)
    if var is None:
        return "not needed"
    return f"${var}: {key_status(tier_name, tier, settings, env)}"
