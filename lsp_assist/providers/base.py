"""The provider interface: one module per API family implements it.

A provider turns a `ModelRequest` into an async stream of `StreamChunk`s. It must:
- stream (never buffer the whole answer) so the pipeline can stop early;
- release the upstream request when the consumer stops iterating or is cancelled
  (closing the HTTP response makes the model server stop generating);
- raise only `lsp_assist.errors.ProviderError` subclasses for failures;
- never block the event loop.
Timeouts (first token, total) are enforced by the pipeline, not by each provider.

Two optional parts, checked with `isinstance` where they matter: `HttpEndpoint` (the URL
requests go to, for allowed_hosts and reachability) and `EmbeddedModel` (a model loaded
into this process: background loading with `LoadEvent`s, and prefill).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from lsp_assist.domain import ModelRequest, PromptContext, StreamChunk


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


@runtime_checkable
class HttpEndpoint(Protocol):
    """A provider whose requests go to a URL (remote APIs, the managed local server)."""

    @property
    def base_url(self) -> str | None:
        """The URL requests go to; None while it is not known yet (a server not started)."""
        ...


@dataclass(frozen=True)
class LoadEvent:
    """One step of loading the model: for `$/progress` and the CLI's stderr line."""

    message: str
    percent: int | None = None
    done: bool = False
    error: str | None = None


@runtime_checkable
class EmbeddedModel(Provider, Protocol):
    """A model loaded into this process (`providers/local.py`): loading runs in the
    background and reports `LoadEvent`s; an idle model can read a prompt ahead of time."""

    on_progress: Callable[[LoadEvent], None] | None

    @property
    def loaded(self) -> bool:
        """True once the model is in memory."""
        ...

    def start_loading(self) -> asyncio.Task[object]:
        """Begin loading in the background (idempotent while a load runs)."""
        ...

    async def ready(self) -> None:
        """Wait until the model is loaded; raises `Unavailable` if it cannot be."""
        ...

    async def settled(self) -> None:
        """Wait until what the model's answers use after its load is built (token healing's
        index, the member names): a one-shot command's one request is answered so."""
        ...

    def prefill(self, context: PromptContext, *, preempt: bool = False) -> asyncio.Future[None] | None:
        """Read the prompt for `context` into the model's cache when idle (`preempt`: a
        generation for another place gives way); never waits."""
        ...
