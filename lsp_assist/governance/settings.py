"""Typed governance settings, parsed from the free-form `Config.governance` table.

`parse_settings(raw)` returns `(GovernanceSettings, errors)`. Each error names the
offending key (`"governance.quotas.completion.requests_per_day: expected an integer"`);
unknown keys are reported, never fatal, and a bad value keeps its default.

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

    [governance.quotas.completion]            # per feature: completion|escalation|warmup|enrichment
    requests_per_day = 5000
    tokens_per_day = 2000000
    [governance.quotas.tiers.quality]         # per tier
    requests_per_day = 200

    [governance.rate_limits.openai]           # key: a provider key, a tier name, or "default"
    requests_per_minute = 120
    max_concurrent = 2

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
from dataclasses import dataclass, field

FEATURES = ("completion", "escalation", "warmup", "enrichment")
DEFAULT_ENVIRONMENTS = ("dev", "test", "prod")


@dataclass(frozen=True)
class AuditSettings:
    enabled: bool = True
    path: str = ""  # empty: <cache dir>/audit/audit.jsonl
    max_bytes: int = 10 * 1024 * 1024
    backups: int = 5


@dataclass(frozen=True)
class QuotaLimit:
    """None means unlimited."""

    requests_per_day: int | None = None
    tokens_per_day: int | None = None


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
    """None means unlimited."""

    requests_per_minute: float | None = None
    max_concurrent: int | None = None


@dataclass(frozen=True)
class BreakerSettings:
    failure_threshold: int = 5
    error_rate: float = 0.5
    window_s: float = 60.0
    min_calls: int = 10
    cooldown_s: float = 30.0


@dataclass(frozen=True)
class HedgingSettings:
    enabled: bool = False
    max_extra: int = 1


@dataclass(frozen=True)
class Price:
    prompt_per_1k: float = 0.0
    completion_per_1k: float = 0.0


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
        for key in (provider_key, tier, "default"):
            if key and key in self.rate_limits:
                return self.rate_limits[key]
        return RateLimit()


class _Errors:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, key: str, msg: str) -> None:
        self.items.append(f"{key}: {msg}")


def _bool(v: object, key: str, default: bool, errs: _Errors) -> bool:
    if isinstance(v, bool):
        return v
    errs.add(key, "expected true or false")
    return default


def _int(v: object, key: str, default: int | None, errs: _Errors, minimum: int = 0) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int):
        errs.add(key, "expected an integer")
        return default
    if v < minimum:
        errs.add(key, f"expected an integer >= {minimum}")
        return default
    return v


def _float(v: object, key: str, default: float | None, errs: _Errors, minimum: float = 0.0) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        errs.add(key, "expected a number")
        return default
    if v < minimum:
        errs.add(key, f"expected a number >= {minimum}")
        return default
    return float(v)


def _str(v: object, key: str, default: str, errs: _Errors) -> str:
    if isinstance(v, str):
        return v
    errs.add(key, "expected a string")
    return default


def _str_list(v: object, key: str, errs: _Errors) -> tuple[str, ...] | None:
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        return tuple(str(x) for x in v)
    errs.add(key, "expected a list of strings")
    return None


def _table(v: object, key: str, errs: _Errors) -> Mapping[str, object] | None:
    if isinstance(v, Mapping):
        return v
    errs.add(key, "expected a table")
    return None


def _unknown(table: Mapping[str, object], known: set[str], prefix: str, errs: _Errors) -> None:
    for k in table:
        if k not in known:
            errs.add(f"{prefix}.{k}", "unknown key (ignored)")


def _looks_like_secret(name: str) -> bool:
    # Variable names are upper-case identifiers; a long mixed token is probably a pasted key.
    return not name.replace("_", "").isalnum() or (len(name) > 24 and any(c.islower() for c in name))


def _quota(v: object, key: str, errs: _Errors) -> QuotaLimit | None:
    t = _table(v, key, errs)
    if t is None:
        return None
    _unknown(t, {"requests_per_day", "tokens_per_day"}, key, errs)
    r = t.get("requests_per_day")
    tok = t.get("tokens_per_day")
    return QuotaLimit(
        requests_per_day=None if r is None else _int(r, f"{key}.requests_per_day", None, errs),
        tokens_per_day=None if tok is None else _int(tok, f"{key}.tokens_per_day", None, errs),
    )


def _parse_quotas(v: object, errs: _Errors) -> QuotaSettings:
    t = _table(v, "governance.quotas", errs)
    if t is None:
        return QuotaSettings()
    features: dict[str, QuotaLimit] = {}
    tiers: dict[str, QuotaLimit] = {}
    for k, sub in t.items():
        if k == "tiers":
            tt = _table(sub, "governance.quotas.tiers", errs) or {}
            for tier, q in tt.items():
                parsed = _quota(q, f"governance.quotas.tiers.{tier}", errs)
                if parsed is not None:
                    tiers[tier] = parsed
        elif k in FEATURES:
            parsed = _quota(sub, f"governance.quotas.{k}", errs)
            if parsed is not None:
                features[k] = parsed
        else:
            errs.add(f"governance.quotas.{k}", f"unknown feature (one of {', '.join(FEATURES)}, or 'tiers')")
    return QuotaSettings(features=features, tiers=tiers)


def _parse_rate_limits(v: object, errs: _Errors) -> dict[str, RateLimit]:
    t = _table(v, "governance.rate_limits", errs)
    out: dict[str, RateLimit] = {}
    for name, sub in (t or {}).items():
        key = f"governance.rate_limits.{name}"
        st = _table(sub, key, errs)
        if st is None:
            continue
        _unknown(st, {"requests_per_minute", "max_concurrent"}, key, errs)
        rpm = st.get("requests_per_minute")
        mc = st.get("max_concurrent")
        out[name] = RateLimit(
            requests_per_minute=None
            if rpm is None
            else _float(rpm, f"{key}.requests_per_minute", None, errs),
            max_concurrent=None if mc is None else _int(mc, f"{key}.max_concurrent", None, errs, minimum=1),
        )
    return out


def _parse_breaker(v: object, errs: _Errors) -> BreakerSettings:
    t = _table(v, "governance.breaker", errs)
    d = BreakerSettings()
    if t is None:
        return d
    p = "governance.breaker"
    _unknown(t, {"failure_threshold", "error_rate", "window_s", "min_calls", "cooldown_s"}, p, errs)
    er = t.get("error_rate", d.error_rate)
    error_rate = _float(er, f"{p}.error_rate", d.error_rate, errs) or d.error_rate
    if error_rate > 1.0:
        errs.add(f"{p}.error_rate", "expected a ratio between 0 and 1")
        error_rate = d.error_rate
    return BreakerSettings(
        failure_threshold=_int(t.get("failure_threshold", d.failure_threshold), f"{p}.failure_threshold",
                               d.failure_threshold, errs, minimum=1) or d.failure_threshold,
        error_rate=error_rate,
        window_s=_float(t.get("window_s", d.window_s), f"{p}.window_s", d.window_s, errs) or d.window_s,
        min_calls=_int(t.get("min_calls", d.min_calls), f"{p}.min_calls", d.min_calls, errs, minimum=1)
        or d.min_calls,
        cooldown_s=_float(t.get("cooldown_s", d.cooldown_s), f"{p}.cooldown_s", d.cooldown_s, errs)
        or 0.0,
    )  # fmt: skip


def _parse_audit(v: object, errs: _Errors) -> AuditSettings:
    t = _table(v, "governance.audit", errs)
    d = AuditSettings()
    if t is None:
        return d
    p = "governance.audit"
    _unknown(t, {"enabled", "path", "max_bytes", "backups"}, p, errs)
    return AuditSettings(
        enabled=_bool(t.get("enabled", d.enabled), f"{p}.enabled", d.enabled, errs),
        path=_str(t.get("path", d.path), f"{p}.path", d.path, errs),
        max_bytes=_int(t.get("max_bytes", d.max_bytes), f"{p}.max_bytes", d.max_bytes, errs, minimum=1024)
        or d.max_bytes,
        backups=_int(t.get("backups", d.backups), f"{p}.backups", d.backups, errs) or 0,
    )


def _parse_prices(v: object, errs: _Errors) -> dict[str, Price]:
    t = _table(v, "governance.prices", errs)
    out: dict[str, Price] = {}
    for model, sub in (t or {}).items():
        key = f"governance.prices.{model}"
        st = _table(sub, key, errs)
        if st is None:
            continue
        _unknown(st, {"prompt_per_1k", "completion_per_1k"}, key, errs)
        out[model] = Price(
            prompt_per_1k=_float(st.get("prompt_per_1k", 0.0), f"{key}.prompt_per_1k", 0.0, errs) or 0.0,
            completion_per_1k=_float(st.get("completion_per_1k", 0.0), f"{key}.completion_per_1k", 0.0, errs)
            or 0.0,
        )
    return out


def _parse_environments(v: object, errs: _Errors) -> dict[str, dict[str, str]]:
    t = _table(v, "governance.environments", errs)
    out: dict[str, dict[str, str]] = {}
    for env, sub in (t or {}).items():
        st = _table(sub, f"governance.environments.{env}", errs)
        if st is None:
            continue
        m: dict[str, str] = {}
        for tier, var in st.items():
            key = f"governance.environments.{env}.{tier}"
            name = _str(var, key, "", errs)
            if name and _looks_like_secret(name):
                errs.add(key, "expected the NAME of an environment variable, not a key (value hidden)")
                continue
            if name:
                m[tier] = name
        out[env] = m
    return out


_KNOWN = {
    "environment", "environment_names", "environments", "strict_environment", "allowed_hosts", "exclude",
    "respect_gitignore", "audit", "quotas", "rate_limits", "breaker", "hedging", "prices", "tiers_allowed",
}  # fmt: skip


def parse_settings(
    raw: Mapping[str, object] | None, environ: Mapping[str, str] | None = None
) -> tuple[GovernanceSettings, list[str]]:
    """Parse `Config.governance`. Returns the settings and a list of error strings."""
    env = os.environ if environ is None else environ
    errs = _Errors()
    raw = raw or {}
    _unknown(raw, _KNOWN, "governance", errs)
    d = GovernanceSettings()

    names = d.environment_names
    if "environment_names" in raw:
        names = _str_list(raw["environment_names"], "governance.environment_names", errs) or names
    environment = env.get("LSP_ASSIST_ENVIRONMENT", "") or d.environment
    if "environment" in raw:
        environment = _str(raw["environment"], "governance.environment", environment, errs)
    if environment not in names:
        errs.add("governance.environment", f"unknown environment {environment!r} (one of {', '.join(names)})")
        environment = names[0] if names else d.environment

    hosts: tuple[str, ...] | None = None
    if "allowed_hosts" in raw:
        parsed_hosts = _str_list(raw["allowed_hosts"], "governance.allowed_hosts", errs)
        # [] is "no remote host" (loopback only), not "any": absent means any.
        hosts = (
            tuple(h.strip().lower() for h in parsed_hosts if h.strip()) if parsed_hosts is not None else None
        )
    tiers_allowed: tuple[str, ...] | None = None
    if "tiers_allowed" in raw:
        tiers_allowed = _str_list(raw["tiers_allowed"], "governance.tiers_allowed", errs)
    exclude: tuple[str, ...] = ()
    if "exclude" in raw:
        exclude = _str_list(raw["exclude"], "governance.exclude", errs) or ()

    hedging = d.hedging
    if "hedging" in raw:
        ht = _table(raw["hedging"], "governance.hedging", errs)
        if ht is not None:
            _unknown(ht, {"enabled", "max_extra"}, "governance.hedging", errs)
            hedging = HedgingSettings(
                enabled=_bool(ht.get("enabled", False), "governance.hedging.enabled", False, errs),
                max_extra=_int(ht.get("max_extra", 1), "governance.hedging.max_extra", 1, errs) or 0,
            )

    settings = GovernanceSettings(
        environment=environment,
        environment_names=names,
        environments=_parse_environments(raw["environments"], errs) if "environments" in raw else {},
        strict_environment=_bool(
            raw.get("strict_environment", False), "governance.strict_environment", False, errs
        ),
        allowed_hosts=hosts,
        exclude=exclude,
        respect_gitignore=_bool(
            raw.get("respect_gitignore", False), "governance.respect_gitignore", False, errs
        ),
        audit=_parse_audit(raw["audit"], errs) if "audit" in raw else d.audit,
        quotas=_parse_quotas(raw["quotas"], errs) if "quotas" in raw else d.quotas,
        rate_limits=_parse_rate_limits(raw["rate_limits"], errs) if "rate_limits" in raw else {},
        breaker=_parse_breaker(raw["breaker"], errs) if "breaker" in raw else d.breaker,
        hedging=hedging,
        prices=_parse_prices(raw["prices"], errs) if "prices" in raw else {},
        tiers_allowed=tiers_allowed,
    )
    return settings, errs.items
