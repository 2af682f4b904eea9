"""The request waiting on a stream's first answer runs before the stream reads on or ends:
reading the next chunk (down the HTTP stack to the socket) or closing the stream and its
bookkeeping ran first, on the answer path between the needed token and the reply (issue 40).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from lsp_assist.domain import Mode, PromptContext, StreamChunk
from lsp_assist.pipeline.inflight import Anchor, InflightStream, ReadPolicy, read_stream
from lsp_assist.pipeline.postprocess import StreamAssembler
from lsp_assist.pipeline.resilience import first_success


async def _order(mode: Mode) -> list[str]:
    ctx = PromptContext(language="python", path="/x.py", prefix="def f():\n    ", suffix="", mode=mode)
    flight = InflightStream(anchor=Anchor("file:///x.py", 1, 4, "    ", ""), tier="fast", context=ctx)
    events: list[str] = []

    async def chunks() -> AsyncIterator[StreamChunk]:
        yield StreamChunk("x = 1\n")
        events.append("stream read on")
        yield StreamChunk("    return x\n")

    async def request() -> None:
        await first_success([flight], 5.0)
        events.append("request answered")  # where the handler returns and pygls writes

    waiting = asyncio.ensure_future(request())
    await asyncio.sleep(0)  # the request waits first, as the generate stage does
    result = await read_stream(
        flight,
        chunks(),
        StreamAssembler(ctx, mode),
        ReadPolicy(first_token_timeout_s=5, total_timeout_s=5, quick_on_first_line=True),
    )
    events.append("stream ended")
    await waiting
    assert result.error is None
    return events


async def test_a_multi_line_stream_reads_on_after_the_request_answered() -> None:
    assert (await _order("multi"))[:2] == ["request answered", "stream read on"]


async def test_a_single_line_stream_ends_after_the_request_answered() -> None:
    assert await _order("single") == ["request answered", "stream ended"]
