"""Generate: a model stream on the tier chain (`TierRunner`), or the floor."""

from __future__ import annotations

from lsp_assist.domain import Suggestion
from lsp_assist.pipeline.stages.services import Services
from lsp_assist.pipeline.state import RequestState


async def generate(s: RequestState, sv: Services) -> Suggestion | None:
    if s.too_big:
        return await sv.tiers.floor(s, reason="document too large")
    return await sv.tiers.run(s)
