"""`ModelWorker`: the embedded model's one thread and the jobs it holds."""

from __future__ import annotations

import asyncio
import threading

from lsp_assist.providers.local_worker import ModelWorker


class _Job:
    def __init__(self) -> None:
        self.cancel = threading.Event()


def test_a_newer_request_supersedes_the_running_one() -> None:
    worker = ModelWorker()
    first, second = _Job(), _Job()
    worker.take(first, "a")
    worker.take(second, "b")
    assert first.cancel.is_set() and not second.cancel.is_set()
    assert worker.current is second and worker.current_prompt == "b"
    assert not worker.release(first)  # no longer the running request
    assert worker.release(second) and worker.current is None


async def test_stopping_the_background_read_cancels_it_and_its_pending_full_read() -> None:
    worker = ModelWorker()
    job = _Job()
    worker.background = job
    worker.full_read = asyncio.get_running_loop().call_later(60, lambda: None)
    assert worker.busy
    worker.stop_background()
    assert job.cancel.is_set() and worker.background is None and worker.full_read is None
    assert not worker.busy
    assert not worker.end_background(job)  # a later end of that read finds it replaced


async def test_idle_only_after_the_pause_and_with_nothing_held() -> None:
    worker = ModelWorker()
    worker.last_use -= 10
    assert worker.idle_for(2.0)
    worker.take(_Job(), "a")
    assert not worker.idle_for(2.0)


async def test_close_closes_the_engines_on_its_thread_then_stops() -> None:
    worker = ModelWorker()
    executor = worker.start()
    assert worker.start() is executor  # one thread
    closed_on: list[str] = []

    class Engine:
        def close(self) -> None:
            closed_on.append(threading.current_thread().name)

    await worker.close((Engine(), None))
    assert closed_on and closed_on[0].startswith("lsp-llama")
    assert worker.executor is None
