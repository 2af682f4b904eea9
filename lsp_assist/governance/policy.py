"""The administrator policy: settings that user and workspace configuration cannot loosen.

Policy files are TOML with the same keys as `[governance]` (at the top level or under a
`[governance]` table). They are read from `/etc/lsp-assist/policy.toml` and from the file
named by `$LSP_ASSIST_POLICY`; when both exist both apply (the stricter wins).

How each key combines with the user's settings (`apply_policy`):

- `allowed_hosts`: intersection (a user list can only narrow the policy's list; no user
  list, meaning "any", becomes the policy's list; an empty list on either side means
  loopback only);
- `exclude`: union; `respect_gitignore`: or;
- `quotas` and `rate_limits`: the minimum of each limit (unset counts as unlimited);
- `audit.enabled = true` forces auditing on; `audit.path`, `max_bytes`, `backups` set by
  the policy replace the user's;
- `tiers_allowed`: intersection;
- `environment`: replaces the user's (and the policy's environment names apply);
- `breaker`, `hedging`, `prices`, `environments`: the policy's values replace the user's
  when given (they are operational rather than loosenable, but an admin may pin them).

`apply_policy` returns the locked key names (e.g. `governance.allowed_hosts`) for `doctor`.

A policy file may also hold a `[team]` table (see `team_settings.py`); `load_policy` is
the one reader of policy files and keeps it in `Policy.team`, and `stricter_limits` is
the one way a policy's quotas and rate limits combine with the user's, team ones included.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lsp_assist.governance.settings import (
    GovernanceSettings,
    Limit,
    QuotaLimit,
    QuotaSettings,
    parse_settings,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

SYSTEM_POLICY_PATH = "/etc/lsp-assist/policy.toml"
POLICY_ENV = "LSP_ASSIST_POLICY"


@dataclass(frozen=True)
class Policy:
    """A parsed policy: the settings it gives and which top-level keys (and audit keys) it set."""

    settings: GovernanceSettings
    keys: frozenset[str]  # e.g. {"allowed_hosts", "audit.enabled", "quotas"}
    sources: tuple[str, ...] = ()
    raw: Mapping[str, object] = field(default_factory=dict)
    team: Mapping[str, object] = field(default_factory=dict)  # the files' [team] tables, merged


def policy_paths(environ: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    paths = [Path(SYSTEM_POLICY_PATH)]
    if env.get(POLICY_ENV):
        paths.append(Path(env[POLICY_ENV]))
    return paths


def _keys(raw: Mapping[str, object]) -> set[str]:
    keys = set(raw)
    audit = raw.get("audit")
    if isinstance(audit, Mapping):
        keys |= {f"audit.{k}" for k in audit}
    return keys


def parse_policy(raw: Mapping[str, object], source: str = "<policy>") -> tuple[Policy, list[str]]:
    team = raw.get("team")
    team_table = dict(team) if isinstance(team, Mapping) else {}
    # Governance keys stand at the top level or under [governance]; [team] is not one.
    table = raw.get("governance", {k: v for k, v in raw.items() if k != "team"})
    if not isinstance(table, Mapping):
        empty = Policy(GovernanceSettings(), frozenset(), (source,), team=team_table)
        return empty, [f"{source}: governance is not a table"]
    settings, errors = parse_settings(table, environ={})
    policy = Policy(settings, frozenset(_keys(table)), (source,), dict(table), team_table)
    return policy, [f"{source}: {e}" for e in errors]


def load_policy(paths: Iterable[Path] | None = None) -> tuple[Policy | None, list[str]]:
    """Read every existing policy file and merge them (stricter wins). None when there is none.

    An unreadable or invalid policy file is reported as an error; the caller (startup)
    should treat that as fatal for model calls, since an admin meant to restrict them.
    """
    merged: Policy | None = None
    errors: list[str] = []
    for path in policy_paths() if paths is None else paths:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as e:
            errors.append(f"{path}: unreadable ({e.strerror})")
            continue
        try:
            raw = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            errors.append(f"{path}: invalid TOML ({e})")
            continue
        pol, errs = parse_policy(raw, str(path))
        errors.extend(errs)
        if merged is None:
            merged = pol
        else:
            combined, _ = apply_policy(merged.settings, pol)
            # A later file's [team] values pin over an earlier one's.
            team = {**merged.team, **pol.team}
            merged = Policy(combined, merged.keys | pol.keys, merged.sources + pol.sources, team=team)
    return merged, errors


def _host_covered(host: str, patterns: tuple[str, ...]) -> bool:
    for p in patterns:
        if p == host:
            return True
        if p.startswith("*.") and host.lstrip("*.").endswith(p[1:]):
            return True
    return False


def stricter_limits(mine: Mapping[str, Limit], policy: Mapping[str, Limit]) -> dict[str, Limit]:
    """The user's named limits with the policy's combined in: the lower of each value wins
    (unset is unlimited), and a name only the policy gives is taken as it is."""
    out = dict(mine)
    for name, theirs in policy.items():
        own = out.get(name)
        out[name] = theirs if own is None else own.stricter(theirs)
    return out


def apply_policy(settings: GovernanceSettings, policy: Policy | None) -> tuple[GovernanceSettings, set[str]]:
    """Combine user settings with the policy so that nothing the policy sets is loosened."""
    if policy is None:
        return settings, set()
    locked: set[str] = set()
    s = _apply_boundaries(settings, policy, locked)
    s = _apply_audit(s, policy, locked)
    s = _apply_limits(s, policy, locked)
    p, keys = policy.settings, policy.keys
    for k in ("breaker", "hedging", "prices", "environments"):
        if k in keys:
            s = dataclasses.replace(s, **{k: getattr(p, k)})
            locked.add(f"governance.{k}")
    return s, locked


def _apply_boundaries(s: GovernanceSettings, policy: Policy, locked: set[str]) -> GovernanceSettings:
    """Hosts, exclusions, tiers and the environment: the policy narrows, adds in, or pins."""
    p, keys = policy.settings, policy.keys
    if "allowed_hosts" in keys:
        ph = p.allowed_hosts if p.allowed_hosts is not None else None
        if ph is not None:
            hosts = (
                ph if s.allowed_hosts is None else tuple(h for h in s.allowed_hosts if _host_covered(h, ph))
            )
            s = dataclasses.replace(s, allowed_hosts=hosts)
            locked.add("governance.allowed_hosts")
    if "exclude" in keys and p.exclude:
        s = dataclasses.replace(s, exclude=tuple(dict.fromkeys((*s.exclude, *p.exclude))))
        locked.add("governance.exclude")
    if "respect_gitignore" in keys and p.respect_gitignore:
        s = dataclasses.replace(s, respect_gitignore=True)
        locked.add("governance.respect_gitignore")
    if "tiers_allowed" in keys and p.tiers_allowed is not None:
        tiers = (
            p.tiers_allowed
            if s.tiers_allowed is None
            else tuple(t for t in s.tiers_allowed if t in p.tiers_allowed)
        )
        s = dataclasses.replace(s, tiers_allowed=tiers)
        locked.add("governance.tiers_allowed")
    if "environment" in keys:
        s = dataclasses.replace(s, environment=p.environment, environment_names=p.environment_names)
        locked.add("governance.environment")
    if "strict_environment" in keys and p.strict_environment:
        s = dataclasses.replace(s, strict_environment=True)
        locked.add("governance.strict_environment")
    return s


def _apply_audit(s: GovernanceSettings, policy: Policy, locked: set[str]) -> GovernanceSettings:
    """The policy may turn the audit log on (never off) and pin where and how much it keeps."""
    p, keys = policy.settings, policy.keys
    audit = s.audit
    if "audit.enabled" in keys and p.audit.enabled:
        audit = dataclasses.replace(audit, enabled=True)
        locked.add("governance.audit.enabled")
    for k in ("path", "max_bytes", "backups"):
        if f"audit.{k}" in keys:
            audit = dataclasses.replace(audit, **{k: getattr(p.audit, k)})
            locked.add(f"governance.audit.{k}")
    return dataclasses.replace(s, audit=audit)


def _apply_limits(s: GovernanceSettings, policy: Policy, locked: set[str]) -> GovernanceSettings:
    """Quotas and rate limits: the lower of the user's and the policy's value wins."""
    p, keys = policy.settings, policy.keys
    if "quotas" in keys:
        feats = stricter_limits(s.quotas.features, p.quotas.features)
        tiers_q = stricter_limits(s.quotas.tiers, p.quotas.tiers)
        for name, q in p.quotas.features.items():
            locked |= _quota_keys(f"governance.quotas.{name}", q)
        for name, q in p.quotas.tiers.items():
            locked |= _quota_keys(f"governance.quotas.tiers.{name}", q)
        s = dataclasses.replace(s, quotas=QuotaSettings(features=feats, tiers=tiers_q))
    if "rate_limits" in keys:
        s = dataclasses.replace(s, rate_limits=stricter_limits(s.rate_limits, p.rate_limits))
        locked |= {f"governance.rate_limits.{name}" for name in p.rate_limits}
    return s


def _quota_keys(prefix: str, q: QuotaLimit) -> set[str]:
    out = set()
    if q.requests_per_day is not None:
        out.add(f"{prefix}.requests_per_day")
    if q.tokens_per_day is not None:
        out.add(f"{prefix}.tokens_per_day")
    return out
