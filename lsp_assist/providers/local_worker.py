"""`ModelWorker`: the one thread that touches the embedded model's llama.cpp contexts, and
the jobs it holds.

The event loop only enqueues jobs on it. A request's job supersedes the one before (that one
stops at its next token); a background read (prefill, read-ahead, a measurement) is
cancelled by any request or newer read, between two of its small batches.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Iterable
from typing import Any


class ModelWorker:
    """The model's worker thread, the request job running or queued last, and the
    background read (see module docstring)."""

    def __init__(self) -> None:
        self.executor: concurrent.futures.ThreadPoolExecutor | None = None
        self.current: Any = None  # the Job running or queued last
        self.current_prompt = ""  # the running stream's prompt text (`prefill` compares places)
        # A background read (prefill, read-ahead): any request or newer prefill cancels it.
        self.background: Any = None
        self.full_read: asyncio.TimerHandle | None = None  # a prefill's whole-prompt read, pending
        self.last_use = time.monotonic()

    def start(self) -> concurrent.futures.ThreadPoolExecutor:
        """The worker thread, started on first use."""
        if self.executor is None:
            self.executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="lsp-llama")
        return self.executor

    @property
    def busy(self) -> bool:
        """True while a request or a background read holds the model (or one is due)."""
        return self.current is not None or self.background is not None or self.full_read is not None

    def touch(self) -> None:
        self.last_use = time.monotonic()

    def idle_for(self, seconds: float) -> bool:
        """Nothing has used the model for `seconds`, and nothing holds it now."""
        return time.monotonic() - self.last_use >= seconds and not self.busy

    def take(self, job: Any, prompt: str) -> None:
        """`job` becomes the running request: the one before stops at its next token."""
        previous, self.current = self.current, job
        self.current_prompt = prompt
        if previous is not None:
            previous.cancel.set()

    def release(self, job: Any) -> bool:
        """`job` has ended; True when it was still the running request."""
        if self.current is not job:
            return False
        self.current = None
        return True

    def stop_current(self) -> None:
        job = self.current
        if job is not None:
            job.cancel.set()

    def stop_background(self, *, rewrite_reads: int = -1) -> None:
        """Stop the background read (and a whole read still due). `rewrite_reads`: a stream
        of the rewrite model takes the thread next and reads up to that many new tokens, so
        its warm-up (`keeps_batch`), when it had no more than that left to read, ends the
        batch under way instead of throwing it away: at a rest the warm-up was reading the
        rewrite's own new tokens (22 of 26 in one `rest_rewrite` log) when the rewrite
        aborted it ~0.15 s in and read them again. A warm-up with more left is still
        aborted: its batch reads the head a rewrite at the rest leaves out (`fit_prompt`),
        and waiting for it put one rewrite 0.4 s later. A settling read stays the
        background read until it ends, so a key meanwhile still stops it midway."""
        running = self.background
        keep = running is not None and getattr(running, "keeps_batch", False)
        if keep and 0 <= running.todo <= rewrite_reads:
            running.settle.set()
        else:
            self.background = None
            if running is not None:
                running.cancel.set()
        timer, self.full_read = self.full_read, None
        if timer is not None:
            timer.cancel()

    def end_background(self, job: Any) -> bool:
        """`job`'s read has ended; True when it was still the background read."""
        if self.background is not job:
            return False
        self.background = None
        return True

    async def close(self, engines: Iterable[Any]) -> None:
        """Close `engines` on the thread (the only one that may touch them), then stop it."""
        executor, self.executor = self.executor, None
        if executor is None:
            return
        for engine in engines:
            if engine is not None:
                await asyncio.get_running_loop().run_in_executor(executor, engine.close)
        executor.shutdown(wait=False)
