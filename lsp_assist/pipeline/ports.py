"""What the pipeline needs from governance, as Protocols (the seams other stores plug into).

The pipeline never imports the concrete `Governance`: anything with these methods fits
(the file-backed facade today, a shared store for a team tomorrow, a test double).
"""

from __future__ import annotations

from typing import Protocol

from lsp_assist.domain import PromptContext
from lsp_assist.governance.record import CallRecord


class Permit(Protocol):
    """An admitted model call; `finish` is called exactly once, when it ends."""

    def finish(self, record: CallRecord) -> None: ...


class GovernancePort(Protocol):
    """The governance facade as the request path sees it."""

    def excluded(self, path: str | None) -> str | None:
        """Why this file must not reach a model, or None."""
        ...

    def redact_context(self, ctx: PromptContext) -> tuple[PromptContext, int]:
        """The context with key-like strings removed, and how many were."""
        ...

    async def admit_async(self, feature: str, tier: str, provider_key: str) -> Permit:
        """Admit one model call (asking the team's shared store when one is configured) or
        raise a `PolicyError`."""
        ...

    @property
    def hedging_enabled(self) -> bool:
        """Whether a slow first token may be raced on the next tier."""
        ...
