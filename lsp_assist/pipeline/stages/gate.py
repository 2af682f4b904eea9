"""Gate: snapshot the document before any await; excluded files stop here."""

from __future__ import annotations

import logging

from lsp_assist.domain import Outcome, Suggestion
from lsp_assist.pipeline.stages.services import Services
from lsp_assist.pipeline.state import RequestState

log = logging.getLogger(__name__)


async def gate(s: RequestState, sv: Services) -> Suggestion | None:
    req = s.req
    snap = sv.store.snapshot(req.uri)
    if snap is None:
        log.info("inline completion for a document that is not open; answering empty")
        return Suggestion("", Outcome.EMPTY, req.tier)
    reason = sv.prompts.excluded(snap)
    if reason is not None:
        log.info("inline completion: file excluded from models (%s); answering empty", reason)
        return Suggestion("", Outcome.EXCLUDED, req.tier)
    s.target = sv.prompts.target(snap, req.cursor)
    # The ticket supersedes every older request of the document now.
    s.ticket = sv.scheduler.ticket(req.uri)
    sv.prefetcher.drop_unrelated(s.target)
    return None
