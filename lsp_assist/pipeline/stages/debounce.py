"""Debounce: wait the adaptive debounce; a newer keystroke supersedes this request."""

from __future__ import annotations

import asyncio
import logging

from lsp_assist.domain import Cursor, Outcome, Suggestion
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.pipeline.scheduler import Superseded
from lsp_assist.pipeline.stages.services import Services
from lsp_assist.pipeline.state import RequestState

log = logging.getLogger(__name__)


async def debounce(s: RequestState, sv: Services) -> Suggestion | None:
    req = s.req
    typed = typed_before(s)
    if not req.invoked and sv.scheduler.debounce_for(req.uri, typed) > 0:
        # Re-parse while the debounce timer runs, read the symbols of the new tree and
        # gather other files' outlines for the cursor: the incremental parse (usually ~1
        # ms, tens of ms at some edits), the scan (~1 ms on a big file) and the cross-file
        # step (2-4 ms in another function) then overlap the wait instead of adding to it.
        # Without a wait (the first key after a pause) the build itself does that work:
        # a prepare queued now would run at the request's first await, before its call.
        asyncio.get_running_loop().call_soon(_prepare, sv.prompts, req.uri, req.cursor, req.tier)
    try:
        await sv.scheduler.debounce(req.uri, s.ticket, invoked=req.invoked, typed=typed)
    except Superseded:
        s.clock.lap("debounce")
        return Suggestion("", Outcome.CANCELLED, req.tier)
    s.clock.lap("debounce")
    if not sv.answers.current(s.target):
        return Suggestion("", Outcome.STALE, req.tier)
    return None


def typed_before(s: RequestState) -> str:
    """The character just before the cursor (the key the user typed last; "" at the start):
    the scheduler's word triggers read it."""
    t = s.target
    return t.snap.text[t.offset - 1] if t.offset > 0 else ""


def _prepare(prompts: PromptBuilder, uri: str, cursor: Cursor, tier: str) -> None:
    try:
        prompts.prepare(uri, cursor, tier)
    except Exception as exc:  # the request's own build does the same work, or degrades
        log.debug("preparing the context failed: %s", exc)
