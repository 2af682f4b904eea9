"""Serving ends even when a task never finishes after its cancellation (stdio.run_to_exit)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from lsp_assist.protocol import stdio


async def _stubborn(started: asyncio.Event, cancels: list[int]) -> None:
    """A task that outlives any number of cancellations, as CPython 3.11's subprocess start
    does when it is cancelled while connecting the child's pipes."""
    started.set()
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancels.append(1)


def test_a_task_that_ignores_cancellation_does_not_keep_the_server_alive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stdio, "EXIT_GRACE_S", 0.2)
    cancels: list[int] = []

    async def serve() -> None:
        started = asyncio.Event()
        asyncio.get_running_loop().create_task(_stubborn(started, cancels))
        await started.wait()
        raise SystemExit(0)  # the `exit` notification

    done = threading.Event()

    def run() -> None:
        try:
            stdio.run_to_exit(serve())
        except SystemExit:
            done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout=30)
    assert done.is_set(), "run_to_exit waited for a task that never ends"
    assert cancels, "the task left running was cancelled first"


def test_tasks_that_end_when_cancelled_are_finished_before_the_loop_closes() -> None:
    finished: list[str] = []

    async def polite() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            finished.append("cleaned up")

    async def serve() -> None:
        asyncio.get_running_loop().create_task(polite())
        await asyncio.sleep(0)

    stdio.run_to_exit(serve())
    assert finished == ["cleaned up"]
