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
    if not req.invoked:
        # Re-parse while the debounce timer runs, and read the symbols of the new tree at
        # the cursor's row: the incremental parse (usually ~1 ms, tens of ms at some
        # edits) and the scan (~1 ms on a big file, the first request on a row) then
        # overlap the wait instead of adding to it.
        asyncio.get_running_loop().call_soon(_prepare, sv.prompts, req.uri, req.cursor)
    try:
        await sv.scheduler.debounce(req.uri, s.ticket, invoked=req.invoked)
    except Superseded:
        s.clock.lap("debounce")
        return Suggestion("", Outcome.CANCELLED, req.tier)
    s.clock.lap("debounce")
    if not sv.answers.current(s.target):
        return Suggestion("", Outcome.STALE, req.tier)
    return None


def _prepare(prompts: PromptBuilder, uri: str, cursor: Cursor) -> None:
    try:
        prompts.prepare(uri, cursor)
    except Exception as exc:  # the context build falls back to line-based trimming
        log.debug("re-parse failed: %s", exc)
