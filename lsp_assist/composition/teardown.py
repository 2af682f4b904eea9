"""Closing what a build made: what a rebuild replaced (`retire`, once requests left it)
and everything at shutdown (`close_engine`, `close_providers`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from lsp_assist.pipeline.engine import CompletionEngine
from lsp_assist.providers.base import Provider

log = logging.getLogger(__name__)


async def retire(
    engine: CompletionEngine | None, providers: Mapping[str, Provider], current: Mapping[str, Provider]
) -> None:
    """Close a replaced engine (its streams, its cache) and the replaced `providers` that
    `current` does not still use under the same tier (an embedded model kept stays open)."""
    if engine is not None:
        await engine.aclose()
        engine.c.cache.close()
    for name, provider in providers.items():
        if current.get(name) is not provider:
            try:
                await provider.aclose()
            except Exception as exc:
                log.debug("closing provider %s: %s", name, exc)


async def close_engine(engine: CompletionEngine) -> None:
    """Close the engine at shutdown, its suggestion cache written out first."""
    await engine.aclose()
    await engine.c.cache.flush()
    engine.c.cache.close()


async def close_providers(providers: Iterable[Provider]) -> None:
    """Close each provider once (tiers share them), whatever the others do."""
    for provider in {id(p): p for p in providers}.values():
        try:
            await provider.aclose()
        except Exception as exc:
            log.debug("closing provider: %s", exc)
