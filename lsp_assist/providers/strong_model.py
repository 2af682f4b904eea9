"""The embedded provider's stronger model as a provider of its own.

With no configuration the code model (qwen2.5-coder-1.5b) rewrites the typing model's line
after a rest, and it is also the strongest model installed: the quality tier (escalation)
runs on it. Both must share one loaded copy, one worker thread and one slot, so the quality
tier gets a `StrongModel` view of the typing model's `LocalProvider` instead of a provider
that would load the 1.1 GB file a second time and compete for the two cores. The rewrite's
prompt has its own shape (`rewrite_prompt.py`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Protocol

from lsp_assist.domain import ModelRequest, StreamChunk
from lsp_assist.errors import Unavailable


class RewriteHost(Protocol):
    """What `StrongModel` needs of the provider that owns the rewrite model (`LocalProvider`)."""

    @property
    def refiner_name(self) -> str: ...
    @property
    def strong_loaded(self) -> bool: ...
    def available_now(self) -> bool: ...
    async def ready(self) -> None: ...
    async def refiner_ready(self, urgent: bool = False) -> bool: ...
    def stream(self, request: ModelRequest, *, strong: bool = False) -> AsyncGenerator[StreamChunk, None]: ...


class StrongModel:
    """The quality tier on `base`'s rewrite model (see the module docstring). It loads
    with the base (the rewrite role needs it anyway) and shares the base's one slot."""

    def __init__(self, base: RewriteHost) -> None:
        self.base = base
        self.single_slot = True
        self.slot = base  # the launcher's one-slot rule: one stream at a time on both

    @property
    def name(self) -> str:
        return "local"

    @property
    def model(self) -> str:
        return self.base.refiner_name

    @property
    def endpoint_host(self) -> str | None:
        return None

    @property
    def loaded(self) -> bool:
        return self.base.strong_loaded

    def available_now(self) -> bool:
        # Not "and loaded": an escalation waits for the rewrite model's load (~1.5 s, started
        # at once by `ready`) rather than falling to the weaker typing model.
        return self.base.available_now()

    async def ready(self) -> None:
        await self.base.ready()
        if not await self.base.refiner_ready(urgent=True):
            raise Unavailable(f"the local model {self.model} did not load")

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        await self.ready()
        async for chunk in self.base.stream(request, strong=True):
            yield chunk

    async def warm(self) -> None:
        return None  # loaded with the base, after the typing model

    async def aclose(self) -> None:
        return None  # the base owns the engine


__all__ = ["RewriteHost", "StrongModel"]
