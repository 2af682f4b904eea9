"""Prompt: the context, redacted, and its cache key (`PromptBuilder`)."""

from __future__ import annotations

from lsp_assist.domain import Outcome, Suggestion
from lsp_assist.pipeline.stages.services import Services
from lsp_assist.pipeline.state import RequestState


async def prompt(s: RequestState, sv: Services) -> Suggestion | None:
    req, target = s.req, s.target
    completion = sv.config.completion
    if target.snap.language_id in completion.languages_disabled:
        return Suggestion("", Outcome.EMPTY, req.tier)
    s.too_big = len(target.snap.text) > completion.max_document_bytes
    built = sv.prompts.for_open(req.uri, req.cursor, req.tier)
    s.clock.lap("context")
    if built is None:
        return Suggestion("", Outcome.EMPTY, req.tier)
    s.prompt = built
    return None
