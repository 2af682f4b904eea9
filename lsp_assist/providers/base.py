"""The provider interface: one module per API family implements it.

A provider turns a `ModelRequest` into an async stream of `StreamChunk`s. It must:
- stream (never buffer the whole answer) so the pipeline can stop early;
- release the upstream request when the consumer stops iterating or is cancelled
  (closing the HTTP response makes the model server stop generating);
- raise only `lsp_assist.errors.ProviderError` subclasses for failures;
- never block the event loop.
Timeouts (first token, total) are enforced by the pipeline, not by each provider.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from lsp_assist.domain import ModelRequest, StreamChunk


@runtime_checkable
class Provider(Protocol):
    """What the pipeline needs from a model backend."""

    @property
    def name(self) -> str:
        """The provider family, e.g. "openai", "local", "offline"."""
        ...

    @property
    def model(self) -> str:
        """The model name as reported in stats and audit."""
        ...

    @property
    def endpoint_host(self) -> str | None:
        """The host requests go to (for audit and allowed_hosts), None when in-process."""
        ...

    @property
    def single_slot(self) -> bool:
        """True when the backend generates one stream at a time and a new request interrupts
        the running one (the embedded llama.cpp server): the pipeline then closes the older
        stream itself first, and speculative work never takes the slot from a waited-for one."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        """Stream the completion. Stop iterating (or cancel) to abort the upstream call."""
        ...

    async def warm(self) -> None:
        """Open connections / load the model ahead of the first request. Never raises."""
        ...

    async def aclose(self) -> None:
        """Release connections and processes."""
        ...
