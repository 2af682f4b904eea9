"""Attaching to the live stream: a first line that disagrees with what the user typed ends
the wait at once (it used to wait for the whole stream, delaying the call that could answer)."""

from __future__ import annotations

import asyncio

from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import PromptContext, Usage
from lsp_assist.pipeline.inflight import Anchor, InflightStream, StreamResult
from lsp_assist.pipeline.stages.instant import _attached_text


def _flight() -> InflightStream:
    ctx = PromptContext(language="python", path="/x.py", prefix="def f():\n    ", suffix="\n")
    return InflightStream(
        anchor=Anchor("file:///x.py", 1, 13, "def f():\n    ", "\n"), tier="fast", context=ctx
    )


async def _settle(task: asyncio.Task[str | None]) -> None:
    for _ in range(10):
        if task.done():
            return
        await asyncio.sleep(0)


async def test_a_disagreeing_first_line_does_not_wait_for_the_stream_to_end() -> None:
    flight = _flight()
    flight.quick.set_result("return compute(a, b)")
    task = asyncio.ensure_future(_attached_text(flight, "t", TierConfig(total_timeout_ms=60_000)))
    await _settle(task)
    assert task.done() and task.result() is None
    assert not flight.final.done()  # answered without the rest of the stream


async def test_typing_past_the_first_line_still_waits_for_the_rest() -> None:
    flight = _flight()
    flight.quick.set_result("x = 1")
    task = asyncio.ensure_future(_attached_text(flight, "x = 1\n    y", TierConfig(total_timeout_ms=60_000)))
    await _settle(task)
    assert not task.done()  # the first line agrees; the answer is in the rest
    flight.final.set_result(StreamResult("x = 1\n    y = 2", Usage(), {}))
    assert await task == " = 2"


async def test_an_agreeing_first_line_answers_the_rest_of_it() -> None:
    flight = _flight()
    flight.quick.set_result("return compute(a, b)")
    assert await _attached_text(flight, "ret", TierConfig()) == "urn compute(a, b)"
    assert flight.answered


async def test_a_first_token_that_disagrees_ends_the_wait_before_the_line_is_complete() -> None:
    flight = _flight()
    task = asyncio.ensure_future(_attached_text(flight, "t", TierConfig(first_token_timeout_ms=60_000)))
    await _settle(task)
    assert not task.done()  # nothing produced yet: it may still agree
    flight.raw = "ret"  # the first token arrives; the first line is far from complete
    flight.note_progress()
    await _settle(task)
    assert task.done() and task.result() is None and not flight.quick.done()


async def test_a_first_token_that_agrees_keeps_waiting_for_the_line() -> None:
    flight = _flight()
    task = asyncio.ensure_future(_attached_text(flight, "re", TierConfig(first_token_timeout_ms=60_000)))
    flight.raw = "ret"
    flight.note_progress()
    await _settle(task)
    assert not task.done()
    flight.quick.set_result("return 1")
    assert await task == "turn 1"
