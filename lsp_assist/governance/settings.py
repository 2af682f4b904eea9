"""Typed governance settings, parsed from the free-form `Config.governance` table.

`parse_settings(raw)` returns `(GovernanceSettings, errors)`. The tables are read by the
one configuration loader (`config.loader.build_dataclass`, bounds from field metadata),
so each error names the offending key (`"governance.quotas.completion.requests_per_day:
expected an integer"`), unknown keys are reported, never fatal, a bad value keeps its
default, and a zero is a value (`error_rate = 0`: any failure ratio opens the breaker once
`min_calls` were made; `window_s = 0`: no ratio window, only consecutive failures).
`QuotaLimit` and `RateLimit`, with their bounds, are read the same way (`read_limit`) under
`[team]` and in the admin policy, and combine with the stricter value winning (`stricter`).

TOML shape (every key optional)::

    [governance]
    environment = "prod"                      # default: $LSP_ASSIST_ENVIRONMENT, else "dev"
    environment_names = ["dev", "test", "prod"]
    allowed_hosts = ["api.openai.com", "*.example.internal"]   # absent = any; [] = loopback only
    exclude = ["*.sql", "private/**"]         # extra globs (gitignore syntax, case-insensitive)
    respect_gitignore = true
    tiers_allowed = ["fast", "backup"]        # absent = all tiers

    [governance.environments.prod]            # environment -> tier -> NAME of the env var
    fast = "ACME_FAST_KEY_PROD"

    [governance.audit]
    enabled = true
    path = ""                                 # default: <cache.dir>/audit/audit.jsonl
    max_bytes = 10485760
    backups = 5

    [governance.quotas.completion]            # per feature: completion|escalation|warmup|enrichment|next_edit
    requests_per_day = 5000
    tokens_per_day = 2000000
    [governance.quotas.tiers.quality]         # per tier
    requests_per_day = 200

    [governance.rate_limits.openai]           # a provider name, a tier name, "default", or
                                              # one endpoint: "openai:api.openai.com:gpt-4o-mini"
    requests_per_minute = 120                 # at least 1 (leave it out for no limit)
    max_concurrent = 2                        # at least 1

    [governance.breaker]
    failure_threshold = 5                     # consecutive failures that open it
    error_rate = 0.5                          # ... or this failure ratio over window_s
    window_s = 60.0
    min_calls = 10                            # ... once at least min_calls were made
    cooldown_s = 30.0

    [governance.hedging]
    enabled = false
    max_extra = 1

    [governance.prices."gpt-4o-mini"]         # currency units per 1000 tokens
    prompt_per_1k = 0.00015
    completion_per_1k = 0.0006

Credentials per environment (see `credentials.py`): a tier's key is read, in order, from

1. `governance.environments.<environment>.<tier>` when that names a variable;
2. `<api_key_env>_<ENVIRONMENT>` (e.g. `OPENAI_KEY_PROD` for `api_key_env = "OPENAI_KEY"`
   in environment "prod") when that variable is set;
3. `<api_key_env>` itself, unless `strict_environment = true` (then a prod key must come
   from a prod-specific variable).

Only variable NAMES appear in settings; a value that looks like a key is an error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from lsp_assist.config.loader import build_dataclass

FEATURES = ("completion", "escalation", "warmup", "enrichment", "next_edit")
DEFAULT_ENVIRONMENTS = ("dev", "test", "prod")

_NON_NEGATIVE = {"min": 0}
_POSITIVE = {"min": 1}


@dataclass(frozen=True)
class AuditSettings:
    enabled: bool = True
    path: str = ""  # empty: <cache dir>/audit/audit.jsonl
    max_bytes: int = field(default=10 * 1024 * 1024, metadata={"min": 1024})
    backups: int = field(default=5, metadata=_NON_NEGATIVE)


_N = TypeVar("_N", int, float)


def _lower(a: _N | None, b: _N | None) -> _N | None:
    """The stricter of two limits: None (unlimited) gives way to any number."""
    return b if a is None else a if b is None else min(a, b)


@dataclass(frozen=True)
class QuotaLimit:
    """A daily budget; None means unlimited. 0 is a value: no call (or token) that day, a
    feature or tier switched off by its budget."""

    requests_per_day: int | None = field(default=None, metadata=_NON_NEGATIVE)
    tokens_per_day: int | None = field(default=None, metadata=_NON_NEGATIVE)

    def stricter(self, other: QuotaLimit) -> QuotaLimit:
        return QuotaLimit(
            _lower(self.requests_per_day, other.requests_per_day),
            _lower(self.tokens_per_day, other.tokens_per_day),
        )


@dataclass(frozen=True)
class QuotaSettings:
    features: dict[str, QuotaLimit] = field(default_factory=dict)
    tiers: dict[str, QuotaLimit] = field(default_factory=dict)

    def any(self) -> bool:
        return any(
            q.requests_per_day is not None or q.tokens_per_day is not None
            for q in (*self.features.values(), *self.tiers.values())
        )


@dataclass(frozen=True)
class RateLimit:
    """A rate and a concurrency cap; None means unlimited. Both are at least 1: the local
    limiter and the shared store's token bucket allow bursts of up to `requests_per_minute`
    calls, so a rate below 1 would admit no call at all (and both read 0 as no limit); a
    cap of 0 would admit none either. No calls to a tier is `tiers_allowed`'s job."""

    requests_per_minute: float | None = field(default=None, metadata=_POSITIVE)
    max_concurrent: int | None = field(default=None, metadata=_POSITIVE)

    def stricter(self, other: RateLimit) -> RateLimit:
        return RateLimit(
            _lower(self.requests_per_minute, other.requests_per_minute),
            _lower(self.max_concurrent, other.max_concurrent),
        )


# Quotas and rate limits, wherever they are read: `[governance]`, `[team]`, the policy.
Limit = TypeVar("Limit", QuotaLimit, RateLimit)


@dataclass(frozen=True)
class BreakerSettings:
    failure_threshold: int = field(default=5, metadata=_POSITIVE)
    error_rate: float = field(default=0.5, metadata={"min": 0, "max": 1})
    window_s: float = field(default=60.0, metadata=_NON_NEGATIVE)
    min_calls: int = field(default=10, metadata=_POSITIVE)
    cooldown_s: float = field(default=30.0, metadata=_NON_NEGATIVE)


@dataclass(frozen=True)
class HedgingSettings:
    enabled: bool = False
    max_extra: int = field(default=1, metadata=_NON_NEGATIVE)


@dataclass(frozen=True)
class Price:
    prompt_per_1k: float = field(default=0.0, metadata=_NON_NEGATIVE)
    completion_per_1k: float = field(default=0.0, metadata=_NON_NEGATIVE)


@dataclass(frozen=True)
class GovernanceSettings:
    environment: str = "dev"
    environment_names: tuple[str, ...] = DEFAULT_ENVIRONMENTS
    environments: dict[str, dict[str, str]] = field(default_factory=dict)
    strict_environment: bool = False
    allowed_hosts: tuple[str, ...] | None = None  # None (key absent): any host; (): loopback only
    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = False
    audit: AuditSettings = field(default_factory=AuditSettings)
    quotas: QuotaSettings = field(default_factory=QuotaSettings)
    rate_limits: dict[str, RateLimit] = field(default_factory=dict)
    breaker: BreakerSettings = field(default_factory=BreakerSettings)
    hedging: HedgingSettings = field(default_factory=HedgingSettings)
    prices: dict[str, Price] = field(default_factory=dict)
    tiers_allowed: tuple[str, ...] | None = None  # None: every tier

    def rate_limit_for(self, provider_key: str, tier: str | None = None) -> RateLimit:
        """The limit of a provider endpoint, keyed `name:host:model` (`Components.provider_key`):
        the table named by that whole key, else by the provider's name (`openai`), else by
        the tier, else `default`; unlimited when none is given."""
        provider = provider_key.split(":", 1)[0]
        for key in (provider_key, provider, tier, "default"):
            if key and key in self.rate_limits:
                return self.rate_limits[key]
        return RateLimit()


def _looks_like_secret(name: str) -> bool:
    # Variable names are upper-case identifiers; a long mixed token is probably a pasted key.
    return not name.replace("_", "").isalnum() or (len(name) > 24 and any(c.islower() for c in name))


def read_limit(cls: type[Limit], raw: object, key: str, errors: list[str]) -> Limit | None:
    """One quota or rate limit table, checked against the bounds in the fields' metadata by
    the config loader; None (reported) when it is not a table."""
    if not isinstance(raw, Mapping):
        errors.append(f"{key}: expected a table")
        return None
    limit: Limit = build_dataclass(cls, raw, key, errors)
    return limit


def read_limits(cls: type[Limit], raw: object, key: str, errors: list[str]) -> dict[str, Limit]:
    """A table of named limit tables (`{name: {requests_per_day = ...}}`), as `read_limit`."""
    if not isinstance(raw, Mapping):
        errors.append(f"{key}: expected a table")
        return {}
    out: dict[str, Limit] = {}
    for name, sub in raw.items():
        limit = read_limit(cls, sub, f"{key}.{name}", errors)
        if limit is not None:
            out[str(name)] = limit
    return out


def _parse_quotas(raw: object, errors: list[str]) -> QuotaSettings:
    """`[governance.quotas.<feature>]` and `[governance.quotas.tiers.<tier>]` tables."""
    prefix = "governance.quotas"
    if not isinstance(raw, Mapping):
        errors.append(f"{prefix}: expected a table")
        return QuotaSettings()
    features: dict[str, QuotaLimit] = {}
    tiers: dict[str, QuotaLimit] = {}
    for name, sub in raw.items():
        if name == "tiers":
            tiers = read_limits(QuotaLimit, sub, f"{prefix}.tiers", errors)
        elif name in FEATURES:
            limit = read_limit(QuotaLimit, sub, f"{prefix}.{name}", errors)
            if limit is not None:
                features[str(name)] = limit
        else:
            errors.append(f"{prefix}.{name}: unknown feature (one of {', '.join(FEATURES)}, or 'tiers')")
    return QuotaSettings(features=features, tiers=tiers)


def _checked_environments(envs: dict[str, dict[str, str]], errors: list[str]) -> dict[str, dict[str, str]]:
    """Only variable NAMES: a value that looks like a pasted key is dropped, never echoed."""
    out: dict[str, dict[str, str]] = {}
    for env, tiers in envs.items():
        kept: dict[str, str] = {}
        for tier, name in tiers.items():
            if name and _looks_like_secret(name):
                errors.append(
                    f"governance.environments.{env}.{tier}: expected the NAME of an environment "
                    "variable, not a key (value hidden)"
                )
            elif name:
                kept[tier] = name
        out[env] = kept
    return out


def parse_settings(
    raw: Mapping[str, object] | None, environ: Mapping[str, str] | None = None
) -> tuple[GovernanceSettings, list[str]]:
    """Parse `Config.governance`. Returns the settings and a list of error strings."""
    env = os.environ if environ is None else environ
    errors: list[str] = []
    table: dict[str, Any] = dict(raw or {})
    quotas_raw = table.pop("quotas", None)
    settings: GovernanceSettings = build_dataclass(GovernanceSettings, table, "governance", errors)
    changes: dict[str, Any] = {}
    if quotas_raw is not None:
        changes["quotas"] = _parse_quotas(quotas_raw, errors)

    names = settings.environment_names
    environment = settings.environment if "environment" in table else env.get("LSP_ASSIST_ENVIRONMENT", "")
    environment = environment or GovernanceSettings.environment
    if environment not in names:
        errors.append(
            f"governance.environment: unknown environment {environment!r} (one of {', '.join(names)})"
        )
        environment = names[0] if names else GovernanceSettings.environment
    changes["environment"] = environment
    if settings.allowed_hosts is not None:
        # [] is "no remote host" (loopback only), not "any": absent means any.
        changes["allowed_hosts"] = tuple(h.strip().lower() for h in settings.allowed_hosts if h.strip())
    changes["environments"] = _checked_environments(settings.environments, errors)
    return replace(settings, **changes), errors
