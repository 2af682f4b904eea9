"""Prefetch: while a suggestion is on screen, compute the one that would follow it.

Accepting several suggestions in a row then feels instant: the next request finds the
prefetched suggestion through the typing-through index (its text before the cursor is the
document as if the suggestion had been accepted). A prefetch is speculative: it starts
after the answer has been sent, waits for the document's live stream, never takes the
local model's only slot from a real request, and is dropped the moment the user types
something that is not the suggestion it follows.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING

from lsp_assist.domain import Cursor, DocumentSnapshot
from lsp_assist.errors import PolicyError

if TYPE_CHECKING:
    from lsp_assist.pipeline.engine import CompletionEngine
    from lsp_assist.pipeline.request import CompletionRequest

_START_DELAY_S = 0.02  # let the answer's response go out first


class Prefetcher:
    def __init__(self, engine: CompletionEngine) -> None:
        self.engine = engine
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._anchors: dict[str, tuple[int, str]] = {}  # uri -> (offset, suggestion followed)

    def schedule(self, req: CompletionRequest, snap: DocumentSnapshot, offset: int, text: str) -> None:
        """Prefetch the suggestion after `text`, shown at `offset` of `snap`."""
        engine = self.engine
        if not engine.config.completion.prefetch or req.feature != "completion":
            return
        self.forget(req.uri)
        task = asyncio.get_running_loop().create_task(self._run(req, snap, offset, text))
        self._tasks[req.uri] = task
        self._anchors[req.uri] = (offset, text)
        engine.track(task)

    def drop_unrelated(self, uri: str, snap: DocumentSnapshot, offset: int) -> None:
        """Cancel the document's prefetch unless the user is typing or accepted its suggestion."""
        task = self._tasks.get(uri)
        if task is None:
            return
        start, followed = self._anchors.get(uri, (0, ""))
        if offset >= start and followed.startswith(snap.text[start:offset]):
            return
        self.forget(uri)

    def forget(self, uri: str) -> None:
        task = self._tasks.pop(uri, None)
        self._anchors.pop(uri, None)
        if task is not None:
            task.cancel()

    async def _run(self, req: CompletionRequest, snap: DocumentSnapshot, offset: int, text: str) -> None:
        engine = self.engine
        c = engine.c
        await asyncio.sleep(_START_DELAY_S)
        # One live call per document: wait for the stream that produced `text` to end.
        live = engine.live_stream(req.uri)
        if live is not None and not live.done:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(live.final), timeout=10)
        new_text = snap.text[:offset] + text + snap.text[offset:]
        new_offset = offset + len(text)
        lines = new_text[:new_offset].split("\n")
        cursor = Cursor(len(lines) - 1, len(lines[-1]))
        tier = engine.config.tier("fast")
        ctx = c.context.build_from_text(
            new_text, snap.language_id, snap.path or snap.uri, cursor, tier.context_chars
        )
        ctx = c.redact_context(ctx)
        try:
            flight = await engine.start_speculative_stream(
                req,
                ctx,
                replace(snap, text=new_text),
                new_offset,
                engine.config.completion.prefetch_max_tokens,
            )
        except PolicyError:
            return  # busy, over quota or rate-limited: prefetch is the first thing to give up
        try:
            await asyncio.shield(flight.final)
        except asyncio.CancelledError:
            flight.abort()
            raise
