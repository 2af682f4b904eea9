"""Choices for an Invoked request: the primary answer first, then cheap distinct alternatives.

The user asked (InlineCompletionTriggerKind.Invoked), so the editor gets up to
`completion.invoked_choices` items to cycle through (VS Code Alt+] / Alt+[, Neovim <M-]> /
<M-[>). Alternatives come only from what exists cheaply, within the request's deadline:
- the stream's fuller (multi-line) answer when it ends in time, or the first line of a
  multi-line primary;
- the offline rule engine's answer (no model call).
An Automatic request (typing) stays one item: nobody cycles while typing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from lsp_assist.pipeline.inflight import InflightStream


def _norm(text: str) -> str:
    # Two items that differ only in trailing whitespace look the same as ghost text.
    return text.rstrip()


def distinct_choices(primary: str, candidates: Iterable[str], limit: int) -> list[str]:
    """`primary` first, then each candidate not already shown, non-empty, at most `limit`."""
    out: list[str] = []
    seen: set[str] = set()
    for text in (primary, *candidates):
        key = _norm(text)
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(text)
        if len(out) >= max(1, limit):
            break
    return out


def first_line(text: str) -> str:
    """The first line of a multi-line suggestion ("" when it is one line already)."""
    head, sep, _ = text.partition("\n")
    return head if sep and head.strip() else ""


async def fuller_text(flight: InflightStream | None, wait_s: float) -> str:
    """The stream's full answer if it ends within `wait_s` (never past the caller's deadline)."""
    if flight is None or wait_s <= 0:
        return ""
    if not flight.final.done():
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(flight.final), timeout=wait_s)
    if not flight.final.done() or flight.final.cancelled():
        return ""
    result = flight.final.result()
    return "" if result.error is not None or result.aborted else result.text
