"""Choices for an Invoked request: the primary answer first, then distinct alternatives later.

The user asked (InlineCompletionTriggerKind.Invoked), so the editor gets up to
`completion.invoked_choices` items to cycle through (VS Code Alt+] / Alt+[, Neovim <M-]> /
<M-[>). The request answers at the first complete line like an Automatic one, with only
the alternatives that already exist (the first line of a multi-line primary); the others
are gathered behind the answer, within `completion.invoked_choices_wait_ms`, kept in a
`ChoiceBook` for that document version and cursor, and announced (`suggestionReady` with
a `choices` count): the next Invoked request there, which cycling makes, gets them all.
Alternatives come only from what exists cheaply:
- the stream's fuller (multi-line) answer when it ends in time, or the first line of a
  multi-line primary;
- a second sample of the same prompt at a higher temperature
  (`completion.invoked_sample_temperature`), within what is left of the wait: the greedy
  answer again would only repeat item 1; not cached, not remembered, and never on a
  one-slot model still busy with the stream the user waits on;
- the offline rule engine's answer (no model call).
An Automatic request (typing) stays one item: nobody cycles while typing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Iterable

from lsp_assist.domain import Cursor
from lsp_assist.errors import PolicyError
from lsp_assist.pipeline.inflight import InflightStream
from lsp_assist.pipeline.launcher import StreamLauncher, StreamSpec
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import Target


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


async def second_sample(
    launcher: StreamLauncher, target: Target, prompt: Prompt, temperature: float, wait_s: float
) -> str:
    """Another sample of `prompt` at `temperature` if it ends within `wait_s`, else ""."""
    if wait_s <= 0 or temperature <= 0 or launcher.is_offline(prompt.tier):
        return ""
    provider = launcher.provider(prompt.tier)
    if provider is None or (provider.single_slot and launcher.busy(provider)):
        return ""  # one slot: it would interrupt the stream that is still reading
    spec = StreamSpec(target, prompt, live=False, remember=False, sample=True, temperature=temperature)
    try:
        flight = await launcher.launch(spec)
    except PolicyError:
        return ""  # quota, rate limit, breaker: the choices go without it
    text = await fuller_text(flight, wait_s)
    if not flight.done:
        launcher.abort(flight)
    return text


BOOK_ENTRIES = 32  # positions whose gathered choices are kept (the user cycles at one)

# (uri, document version, cursor, policy epoch): choices gathered under an older data
# boundary are never found again (`governance/epoch.py`).
ChoiceKey = tuple[str, int, Cursor, int]


class ChoiceBook:
    """The choices gathered behind Invoked answers, by document version and cursor."""

    def __init__(self, entries: int = BOOK_ENTRIES) -> None:
        self._entries = entries
        self._book: OrderedDict[ChoiceKey, tuple[str, tuple[str, ...]]] = OrderedDict()
        self._gathering: set[ChoiceKey] = set()

    def get(self, key: ChoiceKey, primary: str) -> tuple[str, tuple[str, ...]] | None:
        """The choices gathered at `key` when `primary` (today's answer there) is one of
        them or grew from the first: item 1 is the answer on screen, the longer of the two
        when the stream grew it since (the ghost never shrinks back), then the others in
        the order first shown; None otherwise."""
        got = self._book.get(key)
        if got is None:
            return None
        first, others = got
        grown = primary.startswith(first.rstrip()) and len(primary) > len(first)
        if not grown and _norm(primary) not in {_norm(t) for t in (first, *others)}:
            return None
        self._book.move_to_end(key)
        head = primary if grown else first
        return head, tuple(t for t in (first, *others) if _norm(t) != _norm(head))

    def put(self, key: ChoiceKey, primary: str, alternatives: Iterable[str]) -> None:
        self._book[key] = (primary, tuple(alternatives))
        self._book.move_to_end(key)
        while len(self._book) > self._entries:
            self._book.popitem(last=False)

    def start(self, key: ChoiceKey) -> bool:
        """Claim the gathering at `key`; False when one already runs there."""
        if key in self._gathering:
            return False
        self._gathering.add(key)
        return True

    def done(self, key: ChoiceKey) -> None:
        self._gathering.discard(key)

    def forget(self, uri: str) -> None:
        for key in [k for k in self._book if k[0] == uri]:
            del self._book[key]
