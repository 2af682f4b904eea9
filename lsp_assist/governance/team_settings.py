"""Typed team settings: the shared store, who pays (business line, user) and their limits.

    [team]
    store = "redis://127.0.0.1:6379/0"     # loopback may be plain; any other host needs rediss:// (TLS)
    password_env = "LSP_ASSIST_REDIS_PASSWORD"
    on_unavailable = "local"               # local | open | closed (an admin policy can pin it)
    business_line = "payments"
    [team.quotas.business_lines.payments]  # per business line, shared by every process
    requests_per_day = 100000
    [team.quotas.users.default]            # per user (a named user's own table wins)
    requests_per_day = 2000
    [team.rate_limits.business_lines.payments]
    requests_per_minute = 600
    max_concurrent = 16

The feature and tier quotas and the provider rate limits stay under `[governance]`; with a
store they are enforced across processes too. The admin policy file (`policy.toml`) may
hold a `[team]` table (read with the rest of the policy, `Policy.team`): its `store`,
`namespace`, `on_unavailable` and `business_line` replace the user's, and its quotas and
limits combine with the user's (the stricter wins). Limit tables have the bounds and the
reader of `[governance]`'s (`settings.read_limits`).
"""

from __future__ import annotations

import getpass
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from lsp_assist.config.schema import AttributionConfig, TeamConfig
from lsp_assist.governance.policy import stricter_limits
from lsp_assist.governance.settings import Limit, QuotaLimit, RateLimit, read_limits

ON_UNAVAILABLE = ("local", "open", "closed")
USER_ENV = "LSP_ASSIST_USER"
_PINNED = ("store", "namespace", "on_unavailable", "business_line", "password_env")


@dataclass(frozen=True)
class ScopeLimits:
    """Quotas and rate limits per business line and per user ("default" applies to every user)."""

    business_lines: dict[str, QuotaLimit] = field(default_factory=dict)
    users: dict[str, QuotaLimit] = field(default_factory=dict)
    business_line_rates: dict[str, RateLimit] = field(default_factory=dict)
    user_rates: dict[str, RateLimit] = field(default_factory=dict)

    def quota_for_user(self, user: str) -> QuotaLimit | None:
        return self.users.get(user) or self.users.get("default")

    def rate_for_user(self, user: str) -> RateLimit | None:
        return self.user_rates.get(user) or self.user_rates.get("default")


@dataclass(frozen=True)
class TeamSettings:
    store: str = ""
    password_env: str = ""
    namespace: str = "lsp-assist"
    on_unavailable: str = "local"
    timeout_ms: int = 250
    business_line: str = ""
    user: str = ""
    limits: ScopeLimits = field(default_factory=ScopeLimits)
    attribution: AttributionConfig = field(default_factory=AttributionConfig)
    locked: frozenset[str] = frozenset()

    @property
    def shared(self) -> bool:
        return bool(self.store)


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_store_url(url: str) -> str | None:
    """Why this store URL may not be used (None: fine). Plain redis:// only on loopback."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "team.store: not a URL"
    if parts.scheme not in ("redis", "rediss"):
        return "team.store: expected redis://HOST:PORT/DB or rediss://HOST:PORT/DB"
    if not parts.hostname:
        return "team.store: no host"
    if parts.password or parts.username:
        return "team.store: credentials never go in the URL; name a variable in team.password_env"
    if parts.scheme == "redis" and not is_loopback(parts.hostname):
        return f"team.store: {parts.hostname} is not loopback, so the store must use TLS (rediss://)"
    return None


def default_user(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    if env.get(USER_ENV):
        return env[USER_ENV]
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (containers without passwd entries)
        return "unknown"


_KINDS = ("business_lines", "users")


def _per_scope(
    cls: type[Limit], raw: Mapping[str, Any], prefix: str, errors: list[str]
) -> dict[str, dict[str, Limit]]:
    """`{business_lines|users: {name: table}}` -> `{kind: {name: limit}}`, each table read
    as `[governance]`'s are (`read_limits`); an unknown kind is reported."""
    out: dict[str, dict[str, Limit]] = {kind: {} for kind in _KINDS}
    for kind, sub in raw.items():
        if kind not in out:
            errors.append(f"{prefix}.{kind}: unknown key (expected business_lines or users)")
            continue
        out[kind] = read_limits(cls, sub, f"{prefix}.{kind}", errors)
    return out


def parse_team(
    cfg: TeamConfig,
    policy: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[TeamSettings, list[str]]:
    """Typed team settings from the config table and the policy's `[team]` table."""
    errors: list[str] = []
    locked: set[str] = set()
    values = _pinned_values(cfg, policy, errors, locked)
    store = values["store"].strip()
    if store:
        why = check_store_url(store)
        if why is not None:
            errors.append(f"{why}; shared limits are off and local limits apply")
            store = ""
    pw = values["password_env"]
    if pw and not pw.replace("_", "").isalnum():
        errors.append("team.password_env: expected the NAME of an environment variable (value hidden)")
        values["password_env"] = ""
    limits = _scope_limits(cfg, policy, errors, locked)
    timeout = cfg.timeout_ms if cfg.timeout_ms > 0 else 250
    return (
        TeamSettings(
            store=store,
            password_env=values["password_env"],
            namespace=values["namespace"] or "lsp-assist",
            on_unavailable=values["on_unavailable"],
            timeout_ms=timeout,
            business_line=values["business_line"],
            user=cfg.user or default_user(environ),
            limits=limits,
            attribution=cfg.attribution,
            locked=frozenset(locked),
        ),
        errors,
    )


def _pinned_values(
    cfg: TeamConfig, policy: Mapping[str, Any] | None, errors: list[str], locked: set[str]
) -> dict[str, Any]:
    """The `_PINNED` keys: the config's, or the policy's where it sets one (then locked)."""
    values: dict[str, Any] = {k: getattr(cfg, k) for k in _PINNED}
    for k in _PINNED:
        if policy and k in policy:
            if isinstance(policy[k], str):
                values[k] = policy[k]
                locked.add(f"team.{k}")
            else:
                errors.append(f"policy team.{k}: expected a string")
    if values["on_unavailable"] not in ON_UNAVAILABLE:
        errors.append(f"team.on_unavailable: expected one of {', '.join(ON_UNAVAILABLE)}; using 'local'")
        values["on_unavailable"] = "local"
    return values


def _scope_limits(
    cfg: TeamConfig, policy: Mapping[str, Any] | None, errors: list[str], locked: set[str]
) -> ScopeLimits:
    """Per business line and per user quotas and rate limits; the policy's are stricter."""
    quotas = _per_scope(QuotaLimit, cfg.quotas, "team.quotas", errors)
    rates = _per_scope(RateLimit, cfg.rate_limits, "team.rate_limits", errors)
    if policy:
        pq = policy.get("quotas")
        if isinstance(pq, Mapping):
            for kind, table in _per_scope(QuotaLimit, pq, "policy team.quotas", errors).items():
                quotas[kind] = stricter_limits(quotas[kind], table)
                locked |= {f"team.quotas.{kind}.{name}" for name in table}
        pr = policy.get("rate_limits")
        if isinstance(pr, Mapping):
            for kind, rtable in _per_scope(RateLimit, pr, "policy team.rate_limits", errors).items():
                rates[kind] = stricter_limits(rates[kind], rtable)
                locked |= {f"team.rate_limits.{kind}.{name}" for name in rtable}
    return ScopeLimits(
        business_lines=quotas["business_lines"],
        users=quotas["users"],
        business_line_rates=rates["business_lines"],
        user_rates=rates["users"],
    )


__all__ = [
    "ON_UNAVAILABLE",
    "ScopeLimits",
    "TeamSettings",
    "check_store_url",
    "parse_team",
]
