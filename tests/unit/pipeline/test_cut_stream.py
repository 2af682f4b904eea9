"""A cut stream's text is never an answer: a stream closed mid-line (a newer request moved
elsewhere, the editor cancelled) gives its waiting request no suggestion and caches nothing.

It used to answer the older request with the text so far, cut mid-identifier (`MK20qd` of
`MK20qdk185y_ok)`), and to keep that text as the stream's full answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from lsp_assist.domain import PromptContext, StreamChunk
from lsp_assist.errors import StreamAborted
from lsp_assist.pipeline.inflight import Anchor, InflightStream, ReadPolicy, read_stream
from lsp_assist.pipeline.postprocess import StreamAssembler

LINE = "MK20qdk185y_ok)\n"


def _flight(ctx: PromptContext) -> InflightStream:
    return InflightStream(anchor=Anchor("file:///x.py", 1, 0, "", ""), tier="fast", context=ctx)


async def _half_then_stall(sent: asyncio.Event) -> AsyncIterator[StreamChunk]:
    for piece in ("MK2", "0qd"):
        yield StreamChunk(piece)
    sent.set()
    await asyncio.sleep(60)  # the rest of the line never comes before the abort
    yield StreamChunk("k185y_ok)\n")


async def _read_then_abort() -> tuple[InflightStream, asyncio.Task[object]]:
    ctx = PromptContext(language="python", path="/x.py", prefix="x = f(", suffix="")
    flight = _flight(ctx)
    sent = asyncio.Event()
    task: asyncio.Task[object] = asyncio.ensure_future(
        read_stream(
            flight,
            _half_then_stall(sent),
            StreamAssembler(ctx, "single"),
            ReadPolicy(first_token_timeout_s=30, total_timeout_s=30, quick_on_first_line=True),
        )
    )
    flight.task = task  # type: ignore[assignment]
    await asyncio.wait_for(sent.wait(), 5)
    await asyncio.sleep(0)
    assert flight.raw == "MK20qd"
    flight.abort()
    with pytest.raises(asyncio.CancelledError):
        await task
    return flight, task


async def test_an_aborted_stream_answers_its_waiting_request_with_nothing() -> None:
    flight, _task = await _read_then_abort()
    assert flight.quick.done()
    with pytest.raises(StreamAborted):
        flight.quick.result()


async def test_an_aborted_stream_keeps_no_text_as_its_full_answer() -> None:
    flight, _task = await _read_then_abort()
    result = flight.final.result()
    assert result.aborted and result.text == ""
