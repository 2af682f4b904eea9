"""Prefetch: while a suggestion is on screen, compute the one that would follow it.

Accepting several suggestions in a row then feels instant: the next request finds the
prefetched suggestion through the typing-through index (its text before the cursor is the
document as if the suggestion had been accepted). A prefetch is speculative: it starts
after the answer has been sent, waits for the document's live stream, never takes the
local model's only slot from a real request, and is dropped the moment the user types
something that is not the suggestion it follows. It waits for the user's rest
(`Scheduler.pause_left`: no key for twice their keystroke gap, at least 0.5 s): a key typed
meanwhile would drop it, and its model call would be one more the burst paid for nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace

from lsp_assist.config.schema import Config
from lsp_assist.domain import Cursor
from lsp_assist.errors import PolicyError
from lsp_assist.pipeline.launcher import StreamLauncher, StreamSpec
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.pipeline.request import CompletionRequest, Target

_START_DELAY_S = 0.02  # let the answer's response go out first


class Prefetcher:
    def __init__(
        self,
        config: Config,
        prompts: PromptBuilder,
        launcher: StreamLauncher,
        pause_left: Callable[[str], float] = lambda _uri: 0.0,
    ) -> None:
        self.config = config
        self.prompts = prompts
        self.launcher = launcher
        self.pause_left = pause_left  # seconds until the user's typing there has paused
        self.waited_for_pause = 0
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._anchors: dict[str, tuple[int, str]] = {}  # uri -> (offset, suggestion followed)

    def schedule(self, req: CompletionRequest, target: Target, text: str) -> None:
        """Prefetch the suggestion after `text`, shown at `target`."""
        if not self.config.completion.prefetch or req.feature != "completion":
            return
        self.forget(req.uri)
        task = asyncio.get_running_loop().create_task(self._run(target, text))
        self._tasks[req.uri] = task
        self._anchors[req.uri] = (target.offset, text)
        self.launcher.track(task)

    def pending(self, uri: str) -> bool:
        """Whether a prefetch for `uri` is scheduled or running."""
        task = self._tasks.get(uri)
        return task is not None and not task.done()

    def drop_unrelated(self, target: Target) -> None:
        """Cancel the document's prefetch unless the user is typing or accepted its suggestion."""
        uri = target.uri
        task = self._tasks.get(uri)
        if task is None:
            return
        start, followed = self._anchors.get(uri, (0, ""))
        if target.offset >= start and followed.startswith(target.snap.text[start : target.offset]):
            return
        self.forget(uri)

    def forget(self, uri: str) -> None:
        task = self._tasks.pop(uri, None)
        self._anchors.pop(uri, None)
        if task is not None:
            task.cancel()

    async def _run(self, target: Target, text: str) -> None:
        await asyncio.sleep(_START_DELAY_S)
        wait = self.pause_left(target.uri)
        if wait > 0:  # the next key usually comes first (and cancels this task)
            self.waited_for_pause += 1
        while wait > 0:  # a key typed into the suggestion keeps it, and moves the rest on
            await asyncio.sleep(wait)
            wait = self.pause_left(target.uri)
        # One live call per document: wait for the stream that produced `text` to end.
        live = self.launcher.live_stream(target.uri)
        if live is not None and not live.done:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(live.final), timeout=10)
        snap, offset = target.snap, target.offset
        new_text = snap.text[:offset] + text + snap.text[offset:]
        new_offset = offset + len(text)
        lines = new_text[:new_offset].split("\n")
        cursor = Cursor(len(lines) - 1, len(lines[-1]))
        if self.launcher.provider("fast") is None or self.launcher.is_offline("fast"):
            return  # no model on the fast tier
        prompt = self.prompts.for_text(new_text, snap.language_id, snap.path or snap.uri, cursor, "fast")
        spec = StreamSpec(
            replace(target, snap=replace(snap, text=new_text), offset=new_offset),
            prompt,
            feature="completion",
            max_tokens=self.config.completion.prefetch_max_tokens,
            live=False,
            speculative=True,
        )
        try:
            flight = await self.launcher.launch(spec)
        except PolicyError:
            return  # busy, over quota or rate-limited: prefetch is the first thing to give up
        try:
            await asyncio.shield(flight.final)
        except asyncio.CancelledError:
            flight.abort()
            raise
