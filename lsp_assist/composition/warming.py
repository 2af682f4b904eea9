"""Warming a build's providers ahead of the first request, waiting for its embedded
models (the CLI), and checking their endpoints (`lspAssist.warmCache`, `lsp-assist doctor`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from lsp_assist.composition.providers import effective_url
from lsp_assist.errors import LspAssistError
from lsp_assist.providers.base import EmbeddedModel, Provider
from lsp_assist.providers.http import ClientPool

log = logging.getLogger(__name__)


async def warm_providers(providers: Mapping[str, Provider]) -> None:
    """Open each tier's connection once; of the embedded models only the typing one
    (`fast`): another loads when its role first needs it. Best effort."""
    fast = providers.get("fast")
    for provider in {id(p): p for p in providers.values()}.values():
        if isinstance(provider, EmbeddedModel) and provider is not fast:
            continue
        try:
            await provider.warm()
        except Exception as exc:  # warming is best effort
            log.info("warming %s failed: %s", provider.name, exc)


async def endpoint_report(providers: Mapping[str, Provider], clients: ClientPool) -> dict[str, str]:
    """Each configured tier: "ok", "in process" (offline, local) or why it cannot be reached."""
    out: dict[str, str] = {}
    for name, provider in providers.items():
        url = effective_url(provider)
        if not url or provider.name in ("local", "offline"):
            out[name] = "in process" if provider.name == "offline" else "local model"
            continue
        out[name] = await clients.unreachable(url) or "ok"
    return out


async def wait_loaded(models: Iterable[EmbeddedModel]) -> None:
    """Wait until each embedded model is loaded; a failed load is logged (the tier answers
    from the offline engine)."""
    for model in models:
        try:
            await model.ready()
        except LspAssistError as exc:
            log.warning("%s", exc)
