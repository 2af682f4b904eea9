"""A finished request's figures (stats, the status item's latency) are kept after its reply
is written, not before: the reply waits for none of them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsp_assist.after_reply import after_reply, pending, settled
from lsp_assist.domain import Cursor, Outcome
from lsp_assist.pipeline.request import CompletionRequest
from tests.fakes.fake_model_server import FakeModelServer
from tests.fakes.runtimes import openai_runtime


async def test_the_reply_is_written_before_the_bookkeeping_runs(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    fake.push(text="connect()\n")
    rt = openai_runtime(fake, tmp_path / "ws")
    order: list[str] = []
    try:
        engine = rt.engine
        assert engine is not None
        record = engine.c.stats.record

        def recorded(*a: Any, **k: Any) -> None:
            order.append("stats")
            record(*a, **k)

        engine.c.stats.record = recorded  # type: ignore[method-assign]
        engine.answers.on_answered = lambda *a: order.append("status")
        path = tmp_path / "ws" / "a.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        rt.store.open(path.as_uri(), "python", 1, "def f():\n    return ", str(path))

        async def handler() -> Any:  # as pygls runs one: the reply is written when it ends
            return await engine.complete(CompletionRequest(path.as_uri(), Cursor(1, 11), invoked=True))

        task = asyncio.ensure_future(handler())
        task.add_done_callback(lambda _t: order.append("reply written"))
        result = await task
        assert result.outcome == Outcome.MODEL and result.stages["total"] > 0
        for _ in range(10):
            await asyncio.sleep(0)
        assert order == ["reply written", "stats", "status"]
        assert engine.last_latency_ms == result.stages["total"]
    finally:
        await rt.aclose()


def test_without_an_event_loop_it_runs_at_once() -> None:
    ran: list[int] = []
    after_reply(lambda: ran.append(1))
    assert ran == [1]


async def test_settled_runs_what_is_still_queued() -> None:
    """A runtime that closes right after its last answer (`lsp-assist complete`) writes that
    answer's stats and audit line first."""
    ran: list[int] = []
    after_reply(lambda: ran.append(1))
    assert ran == [] and pending() == 1
    await settled()
    assert ran == [1] and pending() == 0
