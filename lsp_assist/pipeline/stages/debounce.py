"""Debounce: wait the adaptive debounce; a newer keystroke supersedes this request."""

from __future__ import annotations

import asyncio
import logging

from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Outcome, Suggestion
from lsp_assist.pipeline.scheduler import Superseded
from lsp_assist.pipeline.stages.services import Services
from lsp_assist.pipeline.state import RequestState

log = logging.getLogger(__name__)


async def debounce(s: RequestState, sv: Services) -> Suggestion | None:
    req = s.req
    if not req.invoked:
        # Re-parse while the debounce timer runs: the incremental parse (usually ~1 ms,
        # tens of ms at some edits) then overlaps the wait instead of adding to it.
        asyncio.get_running_loop().call_soon(_reparse, sv.store, req.uri)
    try:
        await sv.scheduler.debounce(req.uri, s.ticket, invoked=req.invoked)
    except Superseded:
        s.clock.lap("debounce")
        return Suggestion("", Outcome.CANCELLED, req.tier)
    s.clock.lap("debounce")
    if not sv.answers.current(s.target):
        return Suggestion("", Outcome.STALE, req.tier)
    return None


def _reparse(store: DocumentStore, uri: str) -> None:
    doc = store.get(uri)
    if doc is not None:
        try:
            doc.tree()
        except Exception as exc:  # the context build falls back to line-based trimming
            log.debug("re-parse failed: %s", exc)
