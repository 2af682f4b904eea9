"""The governance facade the request pipeline uses around every model call.

    gov = Governance(settings, cache_dir, workspace_roots)
    gov.check_file(path)                          # raises Excluded: answer empty, no call
    gov.check_tier_endpoint("fast", tier_cfg)     # raises EndpointRefused (at startup/config)
    ctx, n = gov.redact_context(ctx)              # before the cache key and the provider
    permit = gov.admit("completion", "fast", "openai@api.example.com")
    ... stream from the provider ...
    permit.finish(CallRecord("model", model=..., usage=..., stages=..., redactions=n))

`admit` checks, in this order, and raises the matching `PolicyError`: the tier is allowed
(`EndpointRefused`), the feature's and tier's quota (`QuotaExceeded`), the provider's
circuit breaker (`BreakerOpen`), then its rate limit and concurrency cap (`RateLimitSkip`).
Nothing is consumed unless every check passes (the quota request is counted only when the
breaker and limiter would admit), so a refused call costs no quota.

`Permit.finish(record)` (idempotent; also called by `with permit:` on exit if you forget) releases
the concurrency slot, feeds the breaker (success, counting failure, or no verdict for
cancellations), applies a 429 `Retry-After` to the provider's limiter, adds tokens to the
quotas and writes one audit line.

Provider keys: one breaker and one limiter per key. Use a key that identifies the upstream
you are protecting, e.g. `f"{tier.provider}@{host}"`; rate limits are looked up by that key,
then by the tier name, then `rate_limits.default`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from lsp_assist.after_reply import after_reply
from lsp_assist.config.loader import FolderLayer
from lsp_assist.config.schema import Config, TierConfig
from lsp_assist.domain import PromptContext
from lsp_assist.errors import (
    BreakerOpen,
    EndpointRefused,
    Excluded,
    PolicyError,
    QuotaExceeded,
    RateLimited,
    RateLimitSkip,
)
from lsp_assist.governance.audit import AuditLog
from lsp_assist.governance.boundaries import DataBoundary
from lsp_assist.governance.breaker import CircuitBreaker, StateListener, counts_as_failure
from lsp_assist.governance.credentials import key_status, resolve_api_key
from lsp_assist.governance.folders import folder_rules, governed_by
from lsp_assist.governance.limits import Lease, ProviderLimits
from lsp_assist.governance.policy import Policy, apply_policy, load_policy
from lsp_assist.governance.quota import QuotaStore
from lsp_assist.governance.record import CallKey, CallRecord, audit_line
from lsp_assist.governance.redaction import redact, redact_context
from lsp_assist.governance.settings import FEATURES, GovernanceSettings, parse_settings
from lsp_assist.governance.upstreams import Upstreams

if TYPE_CHECKING:  # the team modules import redis (extra `team`): only when a store is configured
    from lsp_assist.governance.shared_store import SharedLease
    from lsp_assist.governance.team import TeamGovernance

log = logging.getLogger(__name__)

AUDIT_SUBDIR = "audit"
# Exclusion verdicts are reused this long on the request path; an edited ignore file takes
# effect within it.
BOUNDARY_TTL_S = 2.0
AUDIT_FILE = "audit.jsonl"


def default_audit_path(cache_dir: str | os.PathLike[str]) -> Path:
    return Path(cache_dir) / AUDIT_SUBDIR / AUDIT_FILE


class Permit:
    """An admitted model call. Call `finish(...)` exactly once when it ends."""

    def __init__(
        self, gov: Governance, key: CallKey, breaker: CircuitBreaker, limits: ProviderLimits, lease: Lease
    ) -> None:
        self.gov = gov
        self.key = key
        self.breaker = breaker
        self.limits = limits
        self.lease = lease
        self.started = time.monotonic()
        self.finished = False
        self.shared: SharedLease | None = None  # the team store's slots, when it admitted the call

    def abandon(self) -> None:
        """Give everything back without an audit line: the call was refused after all."""
        if self.finished:
            return
        self.finished = True
        self.lease.release()
        self.breaker.release()
        if self.shared is not None:
            self.shared.release()

    def finish(self, record: CallRecord) -> None:
        """Release the slot, feed the breaker, count tokens, write the audit line. Idempotent."""
        if self.finished:
            return
        self.finished = True
        self.lease.release()
        if "total" not in record.stages:
            # A cancelled stream reports no stages; its time in flight is still load on the endpoint.
            total = round((time.monotonic() - self.started) * 1000.0, 3)
            record = dataclasses.replace(record, stages={**record.stages, "total": total})
        error = record.error
        if error is not None:
            self.breaker.record_failure(error)
            if isinstance(error, RateLimited) and error.retry_after:
                self.limits.cool_down(error.retry_after)
        elif record.outcome == "cancelled":
            self.breaker.release()
        else:
            self.breaker.record_success()
        usage = record.usage
        tokens = 0 if usage is None else usage.prompt_tokens + usage.completion_tokens
        if usage is not None:
            self.gov.quota.add_tokens(self.key.feature, self.key.tier, tokens)
        if self.shared is not None:
            self.shared.release(tokens)
        # The audit line waits for the reply: a stream that ends at the token its request
        # needed finishes on that request's path.
        after_reply(lambda: self.gov._audit_call(self, record))

    def __enter__(self) -> Permit:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        # A safety net so a slot is never leaked; the pipeline should call finish() itself.
        if not self.finished:
            cancelled = isinstance(ev, asyncio.CancelledError) or ev is None
            self.finish(CallRecord("cancelled" if cancelled else "error", error=ev))


@dataclass(frozen=True)
class Surroundings:
    """What governance reads from the process around it: the clocks (a test's fake one), the
    environment variables keys resolve from (None: `os.environ`), and who hears of a
    breaker changing state (the status bar)."""

    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time
    environ: Mapping[str, str] | None = None
    on_breaker_change: StateListener | None = None


class Governance:
    """Data boundaries, credentials, breakers, limits, quotas and audit for one server."""

    def __init__(
        self,
        settings: GovernanceSettings,
        cache_dir: str | os.PathLike[str],
        workspace_roots: Sequence[str] = (),
        *,
        locked_keys: set[str] | frozenset[str] = frozenset(),
        team: TeamGovernance | None = None,
        surroundings: Surroundings = Surroundings(),
    ) -> None:
        self.settings = settings
        self.team = team
        self.locked_keys = frozenset(locked_keys)
        self.cache_dir = Path(cache_dir)
        self.workspace_roots = list(workspace_roots)
        self._environ = surroundings.environ
        self.upstreams = Upstreams(settings, surroundings.clock, surroundings.on_breaker_change)
        self.boundary = DataBoundary(
            workspace_roots,
            exclude=settings.exclude,
            respect_gitignore=settings.respect_gitignore,
            allowed_hosts=settings.allowed_hosts,
            verdict_ttl_s=BOUNDARY_TTL_S,
        )
        self.quota = QuotaStore(self.cache_dir / "quota", settings.quotas, wall_clock=surroundings.wall_clock)
        audit_path = (
            Path(settings.audit.path).expanduser() if settings.audit.path else default_audit_path(cache_dir)
        )
        self.audit = AuditLog(
            audit_path, settings.audit.max_bytes, settings.audit.backups, enabled=settings.audit.enabled
        )
        self._workspace_hash = self.audit.workspace_hash(workspace_roots[0] if workspace_roots else None)
        self.refusals: dict[str, int] = {}
        self.policy: Policy | None = None  # the admin policy applied (each folder's layer gets it too)
        # Called with every model call's record (metadata only, as audited): OpenTelemetry.
        self.call_observers: list[Callable[[Mapping[str, object]], None]] = []

    @classmethod
    def from_config(
        cls,
        config: Config,
        cache_dir: str | os.PathLike[str],
        workspace_roots: Sequence[str] = (),
        *,
        policy: Policy | None = None,
        policy_paths: Sequence[Path] | None = None,
        on_breaker_change: StateListener | None = None,
    ) -> tuple[Governance, list[str]]:
        """Parse `config.governance`, apply the admin policy, build the facade. Returns errors too."""
        settings, errors = parse_settings(config.governance)
        if policy is None:
            policy, perrs = load_policy(policy_paths)
            errors += perrs
        settings, locked = apply_policy(settings, policy)
        team = None
        if config.team.store:
            from lsp_assist.governance.team_setup import build_team

            team, terrs = build_team(config.team, settings, policy.team if policy is not None else None)
            errors += terrs
        gov = cls(
            settings,
            cache_dir,
            workspace_roots,
            locked_keys=locked,
            team=team,
            surroundings=Surroundings(on_breaker_change=on_breaker_change),
        )
        gov.policy = policy
        return gov, errors

    def govern_folders(self, layers: Mapping[str, FolderLayer]) -> list[str]:
        """Each workspace folder's own layer governs its files (`governance/folders.py`);
        returns the errors in those layers' boundary keys."""
        errors: list[str] = []
        self.boundary.set_folders(folder_rules(layers, self.policy, errors))
        return errors

    def governed_by(self, path: str) -> str:
        """Which layer governs `path`, in words (for `doctor`)."""
        return governed_by(self.boundary, path)

    # --- data boundaries and credentials ------------------------------------------------

    def excluded(self, path: str | None) -> str | None:
        """Why `path` must not reach a model (no content in the reason), or None."""
        reason: str | None = self.boundary.excluded(path)
        return reason

    @property
    def hedging_enabled(self) -> bool:
        hedging = self.settings.hedging
        return bool(hedging.enabled and hedging.max_extra >= 1)

    def check_file(self, path: str | None) -> None:
        """Raise `Excluded` (reason in the message, no content) if `path` must not reach a model."""
        reason = self.boundary.excluded(path)
        if reason is not None:
            raise Excluded(f"excluded from AI completion: {reason}")

    def api_key(self, tier_name: str, tier: TierConfig) -> str | None:
        return resolve_api_key(tier_name, tier, self.settings, self._environ)

    def key_status(self, tier_name: str, tier: TierConfig) -> str:
        return key_status(tier_name, tier, self.settings, self._environ)

    def check_tier_endpoint(self, tier_name: str, tier: TierConfig, base_url: str | None = None) -> None:
        """Raise `EndpointRefused` if this tier may not be used (tier not allowed, host, plain HTTP).

        `base_url`: the URL requests will really go to (a provider's default when the tier
        names none); defaults to `tier.base_url`.
        """
        if not self.tier_allowed(tier_name):
            raise EndpointRefused(f"tier {tier_name!r} is not in governance.tiers_allowed")
        has_key = self.api_key(tier_name, tier) is not None
        self.boundary.check_endpoint(tier.base_url if base_url is None else base_url, has_key)

    def tier_allowed(self, tier_name: str) -> bool:
        allowed = self.settings.tiers_allowed
        return allowed is None or tier_name in allowed

    @staticmethod
    def redact(text: str) -> tuple[str, int]:
        return redact(text)

    @staticmethod
    def redact_context(ctx: PromptContext) -> tuple[PromptContext, int]:
        return redact_context(ctx)

    # --- breakers, limits, admission ----------------------------------------------------

    def breaker_for(self, provider_key: str) -> CircuitBreaker:
        return self.upstreams.breaker_for(provider_key)

    def limits_for(self, provider_key: str, tier: str | None = None) -> ProviderLimits:
        return self.upstreams.limits_for(provider_key, tier)

    def would_admit(self, provider_key: str, tier: str | None = None) -> bool:
        """Cheap pre-check for hedging/fallback decisions (no quota read, takes nothing)."""
        return self.upstreams.would_admit(provider_key, tier)

    async def admit_async(self, feature: str, tier: str, provider_key: str) -> Permit:
        """`admit`, with the team's shared store when one is configured.

        The store replaces the local quotas and limits while it answers (one round trip);
        while it is down `team.on_unavailable` decides: local limits, none, or no call.
        """
        team = self.team
        if team is None:
            return self.admit(feature, tier, provider_key)
        if team.available:
            permit = self.admit(feature, tier, provider_key, local_limits=False)
            try:
                shared = await team.admit(feature, tier, provider_key)
            except PolicyError as exc:
                permit.abandon()
                self._refused(f"team:{exc.__class__.__name__}")
                raise
            except BaseException:
                permit.abandon()
                raise
            if shared is not None:
                permit.shared = shared
                return permit
            permit.abandon()  # the store went down during this call: the fallback decides
        mode = team.fallback()
        if mode == "closed":
            from lsp_assist.governance.team import TeamStoreUnavailable

            self._refused("team:unavailable")
            raise TeamStoreUnavailable("the team store is unreachable and the policy is fail-closed")
        return self.admit(feature, tier, provider_key, local_limits=mode == "local")

    def admit(self, feature: str, tier: str, provider_key: str, *, local_limits: bool = True) -> Permit:
        """Admit one model call or raise EndpointRefused / QuotaExceeded / BreakerOpen / RateLimitSkip.

        Must run on the event loop thread (the rate limiter reads the loop clock).
        `local_limits=False`: quotas and limits are someone else's (the team store); only
        the tier and the breaker are checked here.
        """
        if not self.tier_allowed(tier):
            self._refused("tier")
            raise EndpointRefused(f"tier {tier!r} is not in governance.tiers_allowed")
        breaker = self.breaker_for(provider_key)
        limits = self.limits_for(provider_key, tier)
        breaker_ok = breaker.would_allow()
        limit_reason = limits.refusal() if local_limits else None
        if breaker_ok and limit_reason is None:
            if local_limits and not self.quota.try_consume(feature, tier):
                self._refused(f"quota:{feature}")
                raise QuotaExceeded(f"the {feature} quota for today is spent")
            # Nothing awaited since the checks above, so both succeed.
            taken = breaker.allow()
            lease = limits.try_acquire() if local_limits else limits.track()
            if taken and lease is not None:
                return Permit(self, CallKey(feature, tier, provider_key), breaker, limits, lease)
            if lease is not None:  # pragma: no cover - defensive
                lease.release()
            if taken:  # pragma: no cover - defensive
                breaker.release()
            self._refused("race")
            raise RateLimitSkip(f"{provider_key} is busy")
        if local_limits and self.quota.exhausted(feature, tier):
            self._refused(f"quota:{feature}")
            raise QuotaExceeded(f"the {feature} quota for today is spent")
        if not breaker_ok:
            self._refused("breaker")
            raise BreakerOpen(f"{provider_key} is failing; retrying in {breaker.retry_in():.0f} s")
        limits.skips[limit_reason or "rate"] += 1
        self._refused(f"limit:{limit_reason}")
        raise RateLimitSkip(f"{provider_key} is at its {limit_reason} limit; request skipped")

    def _refused(self, reason: str) -> None:
        self.refusals[reason] = self.refusals.get(reason, 0) + 1

    # --- audit and status ---------------------------------------------------------------

    def _audit_call(self, permit: Permit, record: CallRecord) -> None:
        if not self.audit.enabled and not self.call_observers:
            return
        line = audit_line(permit.key, record, self.settings.environment, self._workspace_hash)
        if self.audit.enabled:
            self.audit.write(line)
        for observe in self.call_observers:
            try:
                observe(line)
            except Exception as exc:  # telemetry must never break a model call
                log.debug("call observer failed: %s", exc)

    def record_event(self, row: Mapping[str, object]) -> None:
        """A suggestion event (telemetry/events.py) into the audit log, beside the model calls
        `lsp-assist usage` reads: its labels and counts, the environment and workspace hash."""
        if self.audit.enabled:
            self.audit.write(
                {**row, "environment": self.settings.environment, "workspace": self._workspace_hash}
            )

    def status(self) -> dict[str, object]:
        """For the status bar and `doctor`: breaker states, spent quotas, skips. No secrets."""
        spent = [f for f in FEATURES if self.quota.limits.features.get(f) and self.quota.remaining(f).spent]
        spent_tiers = [t for t in self.quota.limits.tiers if self.quota.remaining("", t).spent]
        failing = self.upstreams.failing()
        # One line for the status bar: empty when all is well.
        warning = ""
        if failing:
            warning = f"{', '.join(failing)} failing; using the fallback"
        elif self.team is not None and not self.team.available:
            warning = f"team store unreachable; {self.team.fallback()} limits apply"
        elif spent or spent_tiers:
            warning = f"quota spent: {', '.join([*spent, *spent_tiers])}"
        return {
            "environment": self.settings.environment,
            "warning": warning,
            "breakers": {k: b.snapshot() for k, b in self.upstreams.breakers.items()},
            "open_breakers": failing,
            "limits": {k: lim.snapshot() for k, lim in self.upstreams.limits.items()},
            "quota_spent_features": spent,
            "quota_spent_tiers": spent_tiers,
            "quota_errors": self.quota.errors,
            "refusals": dict(self.refusals),
            "audit": {
                "enabled": self.audit.enabled,
                "path": str(self.audit.path),
                "records": self.audit.records,
                "write_errors": self.audit.write_errors,
            },
            "locked_keys": sorted(self.locked_keys),
            "team": None if self.team is None else self.team.snapshot(),
        }

    def close(self) -> None:
        self.quota.close()
        team, self.team = self.team, None
        if team is not None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # no loop left: the connections die with the process
            task = loop.create_task(team.aclose())
            _CLOSING.add(task)
            task.add_done_callback(_CLOSING.discard)

    async def aclose(self) -> None:
        self.quota.close()
        team, self.team = self.team, None
        if team is not None:
            await team.aclose()


_CLOSING: set[asyncio.Task[None]] = set()


__all__ = ["CallRecord", "Governance", "Permit", "Surroundings", "counts_as_failure", "default_audit_path"]
