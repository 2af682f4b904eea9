"""Team governance: which shared scopes one model call is counted against, and the fallback.

A call for (feature, tier, provider) is counted against, in the shared store:

- quotas: ``feature:<f>`` and ``tier:<t>`` (from `[governance.quotas]`), ``bl:<business
  line>`` and ``user:<user>`` (from `[team.quotas]`), each only when it has a limit;
- token buckets and concurrency caps: the provider's `[governance.rate_limits]` entry
  (the same lookup as the local limiter: the endpoint's key, the provider's name, the
  tier, "default"), the business line's and the user's `[team.rate_limits]`.

`TeamGovernance.admit` returns a `SharedLease`, raises `QuotaExceeded` / `RateLimitSkip`,
or returns None when the store cannot be asked; `fallback()` then says what applies:
"local" (the per-machine limits, the default), "open" (no limits) or "closed" (no model
calls, `TeamStoreUnavailable`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from lsp_assist.errors import PolicyError, QuotaExceeded, RateLimitSkip
from lsp_assist.governance.settings import GovernanceSettings, QuotaLimit, RateLimit
from lsp_assist.governance.shared_store import (
    BucketCheck,
    ConcurrencyCheck,
    QuotaCheck,
    RedisStore,
    Refusal,
    SharedLease,
    StoreUnavailable,
)
from lsp_assist.governance.team_settings import TeamSettings


class TeamStoreUnavailable(PolicyError):
    """The shared store is down and the policy says fail closed: no model call."""


def _safe(name: str) -> str:
    # Scope names end up in Redis keys; keep them printable and colon-free.
    return "".join(c if c.isalnum() or c in "-_.@" else "_" for c in name)[:80] or "_"


class TeamGovernance:
    def __init__(
        self,
        team: TeamSettings,
        governance: GovernanceSettings,
        *,
        environ: Mapping[str, str] | None = None,
        store: RedisStore | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self.settings = team
        self.governance = governance
        password = env.get(team.password_env) if team.password_env else None
        self.store = store or RedisStore(
            team.store,
            password=password or None,
            namespace=f"{team.namespace}:{governance.environment}",
            timeout_s=team.timeout_ms / 1000.0,
        )
        self.refusals: dict[str, int] = {}
        self.fallbacks = 0

    @property
    def available(self) -> bool:
        return self.store.available

    def fallback(self) -> str:
        return self.settings.on_unavailable

    def health_message(self, up: bool) -> str:
        """What the user is told when the store goes down or comes back (once per change).
        The URL holds no credentials: `check_store_url` refuses those."""
        if up:
            return f"team store {self.settings.store} reachable again; shared quotas and limits apply"
        consequence = {
            "local": "this machine's own quotas and limits apply until it answers",
            "open": "no quotas or limits apply until it answers (policy: open)",
            "closed": "completions are refused until it answers (policy: closed)",
        }.get(self.settings.on_unavailable, "fallback limits apply")
        return f"team store {self.settings.store} unreachable; {consequence}"

    def checks(
        self, feature: str, tier: str, provider_key: str
    ) -> tuple[list[QuotaCheck], list[BucketCheck], list[ConcurrencyCheck]]:
        quotas: list[QuotaCheck] = []
        buckets: list[BucketCheck] = []
        caps: list[ConcurrencyCheck] = []
        limits = self.settings.limits

        def quota(scope: str, q: QuotaLimit | None) -> None:
            if q is not None and (q.requests_per_day is not None or q.tokens_per_day is not None):
                quotas.append(QuotaCheck(scope, q.requests_per_day, q.tokens_per_day))

        def rate(scope: str, r: RateLimit | None) -> None:
            if r is None:
                return
            if r.requests_per_minute:
                buckets.append(BucketCheck(scope, r.requests_per_minute))
            if r.max_concurrent:
                caps.append(ConcurrencyCheck(scope, r.max_concurrent))

        quota(f"feature:{_safe(feature)}", self.governance.quotas.features.get(feature))
        quota(f"tier:{_safe(tier)}", self.governance.quotas.tiers.get(tier))
        bl = self.settings.business_line
        user = self.settings.user
        if bl:
            quota(f"bl:{_safe(bl)}", limits.business_lines.get(bl) or limits.business_lines.get("default"))
            rate(
                f"bl:{_safe(bl)}",
                limits.business_line_rates.get(bl) or limits.business_line_rates.get("default"),
            )
        quota(f"user:{_safe(user)}", limits.quota_for_user(user))
        rate(f"user:{_safe(user)}", limits.rate_for_user(user))
        rl = self.governance.rate_limit_for(provider_key, tier)
        rate(f"provider:{_safe(provider_key)}", rl)
        return quotas, buckets, caps

    async def admit(self, feature: str, tier: str, provider_key: str) -> SharedLease | None:
        """A lease, None when the store cannot be asked, or QuotaExceeded / RateLimitSkip."""
        quotas, buckets, caps = self.checks(feature, tier, provider_key)
        if not (quotas or buckets or caps):
            return SharedLease(self.store, "", (), ())
        try:
            verdict = await self.store.admit(quotas, buckets, caps)
        except StoreUnavailable:
            self.fallbacks += 1
            return None
        if isinstance(verdict, Refusal):
            key = f"{verdict.reason}:{verdict.scope}"
            self.refusals[key] = self.refusals.get(key, 0) + 1
            if verdict.reason == "quota":
                raise QuotaExceeded(f"the team quota {verdict.scope} for today is spent")
            raise RateLimitSkip(f"team {verdict.reason} limit of {verdict.scope} reached; request skipped")
        return verdict

    def snapshot(self) -> dict[str, object]:
        return {
            "store": "redis",
            "on_unavailable": self.settings.on_unavailable,
            "business_line": self.settings.business_line,
            "refusals": dict(self.refusals),
            "fallbacks": self.fallbacks,
            **self.store.snapshot(),
        }

    async def aclose(self) -> None:
        await self.store.aclose()


__all__ = ["TeamGovernance", "TeamStoreUnavailable"]
