"""The upstreams governance protects: one circuit breaker and one rate limiter per provider key.

A key names the upstream (e.g. `f"{tier.provider}@{host}"`); its rate limit is looked up by
that key, then by the tier name, then `rate_limits.default`. Both are created on first use.
"""

from __future__ import annotations

from collections.abc import Callable

from lsp_assist.governance.breaker import BreakerState, CircuitBreaker, StateListener
from lsp_assist.governance.limits import ProviderLimits
from lsp_assist.governance.settings import GovernanceSettings


class Upstreams:
    def __init__(
        self,
        settings: GovernanceSettings,
        clock: Callable[[], float],
        on_breaker_change: StateListener | None = None,
    ) -> None:
        self.settings = settings
        self._clock = clock
        self._on_breaker_change = on_breaker_change
        self.breakers: dict[str, CircuitBreaker] = {}
        self.limits: dict[str, ProviderLimits] = {}

    def breaker_for(self, provider_key: str) -> CircuitBreaker:
        b = self.breakers.get(provider_key)
        if b is None:
            b = CircuitBreaker(
                provider_key, self.settings.breaker, clock=self._clock, on_change=self._on_breaker_change
            )
            self.breakers[provider_key] = b
        return b

    def limits_for(self, provider_key: str, tier: str | None = None) -> ProviderLimits:
        lim = self.limits.get(provider_key)
        if lim is None:
            lim = ProviderLimits(
                provider_key, self.settings.rate_limit_for(provider_key, tier), clock=self._clock
            )
            self.limits[provider_key] = lim
        return lim

    def would_admit(self, provider_key: str, tier: str | None = None) -> bool:
        """Whether the breaker and the limiter would let a call through now (takes nothing)."""
        return (
            self.breaker_for(provider_key).would_allow()
            and self.limits_for(provider_key, tier).refusal() is None
        )

    def failing(self) -> list[str]:
        """The keys whose breaker is not closed."""
        return [k for k, b in self.breakers.items() if b.state is not BreakerState.CLOSED]
