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
hold a `[team]` table: its `store`, `namespace`, `on_unavailable` and `business_line`
replace the user's, and its quotas and limits combine with the user's (the stricter wins).
"""

from __future__ import annotations

import getpass
import ipaddress
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from lsp_assist.config.schema import AttributionConfig, TeamConfig
from lsp_assist.governance.policy import policy_paths
from lsp_assist.governance.settings import QuotaLimit, RateLimit

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

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


def _int_or_none(v: object, key: str, errors: list[str]) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        errors.append(f"{key}: expected an integer >= 0")
        return None
    return v


def _float_or_none(v: object, key: str, errors: list[str]) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        errors.append(f"{key}: expected a number > 0")
        return None
    return float(v)


def _named_tables(raw: object, key: str, errors: list[str]) -> dict[str, Mapping[str, Any]]:
    if not isinstance(raw, Mapping):
        errors.append(f"{key}: expected a table")
        return {}
    out: dict[str, Mapping[str, Any]] = {}
    for name, sub in raw.items():
        if isinstance(sub, Mapping):
            out[str(name)] = sub
        else:
            errors.append(f"{key}.{name}: expected a table")
    return out


_KINDS = ("business_lines", "users")
_T = TypeVar("_T")


def _per_name(
    raw: Mapping[str, Any],
    prefix: str,
    errors: list[str],
    keys: frozenset[str],
    build: Callable[[Mapping[str, Any], str], _T],
) -> dict[str, dict[str, _T]]:
    """`{business_lines|users: {name: table}}` -> `{kind: {name: build(table, dotted)}}`,
    reporting unknown kinds, non-tables and unknown keys (one walk for quotas and rates)."""
    out: dict[str, dict[str, _T]] = {kind: {} for kind in _KINDS}
    for kind, sub in raw.items():
        if kind not in out:
            errors.append(f"{prefix}.{kind}: unknown key (expected business_lines or users)")
            continue
        for name, t in _named_tables(sub, f"{prefix}.{kind}", errors).items():
            k = f"{prefix}.{kind}.{name}"
            for extra in set(t) - keys:
                errors.append(f"{k}.{extra}: unknown key (ignored)")
            out[kind][name] = build(t, k)
    return out


def _quotas(raw: Mapping[str, Any], prefix: str, errors: list[str]) -> dict[str, dict[str, QuotaLimit]]:
    def build(t: Mapping[str, Any], k: str) -> QuotaLimit:
        return QuotaLimit(
            _int_or_none(t.get("requests_per_day"), f"{k}.requests_per_day", errors),
            _int_or_none(t.get("tokens_per_day"), f"{k}.tokens_per_day", errors),
        )

    return _per_name(raw, prefix, errors, frozenset({"requests_per_day", "tokens_per_day"}), build)


def _rates(raw: Mapping[str, Any], prefix: str, errors: list[str]) -> dict[str, dict[str, RateLimit]]:
    def build(t: Mapping[str, Any], k: str) -> RateLimit:
        mc = _int_or_none(t.get("max_concurrent"), f"{k}.max_concurrent", errors)
        # 0 reads as "no cap" (RateLimit takes None or a positive cap), not a cap of zero.
        return RateLimit(
            _float_or_none(t.get("requests_per_minute"), f"{k}.requests_per_minute", errors),
            mc if mc else None,
        )

    return _per_name(raw, prefix, errors, frozenset({"requests_per_minute", "max_concurrent"}), build)


def _min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _stricter_quota(a: QuotaLimit | None, b: QuotaLimit) -> QuotaLimit:
    a = a or QuotaLimit()
    r, t = _min(a.requests_per_day, b.requests_per_day), _min(a.tokens_per_day, b.tokens_per_day)
    return QuotaLimit(None if r is None else int(r), None if t is None else int(t))


def _stricter_rate(a: RateLimit | None, b: RateLimit) -> RateLimit:
    a = a or RateLimit()
    mc = _min(a.max_concurrent, b.max_concurrent)
    return RateLimit(_min(a.requests_per_minute, b.requests_per_minute), None if mc is None else int(mc))


def read_policy_team(paths: Iterable[Path] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The `[team]` tables of the admin policy files, merged (later files pin over earlier)."""
    merged: dict[str, Any] = {}
    errors: list[str] = []
    for path in policy_paths() if paths is None else paths:
        try:
            data = tomllib.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            errors.append(f"{path}: team policy unreadable ({e.__class__.__name__})")
            continue
        team = data.get("team")
        if isinstance(team, Mapping):
            merged.update(team)
    return merged, errors


def parse_team(
    cfg: TeamConfig,
    policy: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[TeamSettings, list[str]]:
    """Typed team settings from the config table and the policy's `[team]` table."""
    errors: list[str] = []
    values: dict[str, Any] = {k: getattr(cfg, k) for k in _PINNED}
    locked: set[str] = set()
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

    quotas = _quotas(cfg.quotas, "team.quotas", errors)
    rates = _rates(cfg.rate_limits, "team.rate_limits", errors)
    if policy:
        pq = policy.get("quotas")
        if isinstance(pq, Mapping):
            for kind, table in _quotas(pq, "policy team.quotas", errors).items():
                for name, q in table.items():
                    quotas[kind][name] = _stricter_quota(quotas[kind].get(name), q)
                    locked.add(f"team.quotas.{kind}.{name}")
        pr = policy.get("rate_limits")
        if isinstance(pr, Mapping):
            for kind, rtable in _rates(pr, "policy team.rate_limits", errors).items():
                for name, r in rtable.items():
                    rates[kind][name] = _stricter_rate(rates[kind].get(name), r)
                    locked.add(f"team.rate_limits.{kind}.{name}")
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
            limits=ScopeLimits(
                business_lines=quotas["business_lines"],
                users=quotas["users"],
                business_line_rates=rates["business_lines"],
                user_rates=rates["users"],
            ),
            attribution=cfg.attribution,
            locked=frozenset(locked),
        ),
        errors,
    )


__all__ = [
    "ON_UNAVAILABLE",
    "ScopeLimits",
    "TeamSettings",
    "check_store_url",
    "parse_team",
    "read_policy_team",
]
