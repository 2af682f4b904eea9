"""At the answer budget, a stream that has not finished its first line answers at once with
the text so far when it ends at a code boundary, instead of waiting for the next token.

Before, the partial answer waited for a token after the budget (and, mid-word, for the one
that ends the word): after a cursor rest the first key's answer came at the budget plus one
or two tokens (~20 ms each on the embedded model).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from lsp_assist.domain import PromptContext, StreamChunk
from lsp_assist.pipeline.inflight import Anchor, InflightStream, ReadPolicy, deadline_answer, read_stream
from lsp_assist.pipeline.postprocess import StreamAssembler


def test_a_text_ending_inside_a_word_waits_the_word_may_still_grow() -> None:
    assert deadline_answer("total = compute") == ""
    assert deadline_answer("x = foo(a, ba") == ""


def test_a_text_ending_at_a_boundary_is_shown_whole() -> None:
    assert deadline_answer("x = foo(a)") == "x = foo(a)"
    assert deadline_answer("x = ") == "x = "


def test_nothing_to_show_waits_for_the_next_token() -> None:
    assert deadline_answer("") == ""
    assert deadline_answer("total") == ""  # one word so far: the next token decides
    assert deadline_answer("   ") == ""
    assert deadline_answer("a = 1\nb = ") == ""  # more than one line is no partial line


async def _stalls_after(
    pieces: tuple[str, ...], sent: asyncio.Event, more: asyncio.Event
) -> AsyncIterator[StreamChunk]:
    for piece in pieces:
        yield StreamChunk(piece)
    sent.set()
    await more.wait()  # the next token comes only when the test says so
    yield StreamChunk("b)\n")


async def _quick_while_stalled(
    pieces: tuple[str, ...], budget_s: float, arrived_s_ago: float | None = None
) -> tuple[str | None, str]:
    ctx = PromptContext(language="python", path="/x.py", prefix="    ", suffix="")
    flight = InflightStream(anchor=Anchor("file:///x.py", 1, 4, "    ", ""), tier="fast", context=ctx)
    sent, more = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    answer_from = None if arrived_s_ago is None else loop.time() - arrived_s_ago
    task = asyncio.ensure_future(
        read_stream(
            flight,
            _stalls_after(pieces, sent, more),
            StreamAssembler(ctx, "single"),
            ReadPolicy(
                first_token_timeout_s=30,
                total_timeout_s=30,
                quick_on_first_line=True,
                answer_budget_s=budget_s,
                answer_from=answer_from,
            ),
        )
    )
    await asyncio.wait_for(sent.wait(), 5)
    try:
        quick: str | None = await asyncio.wait_for(asyncio.shield(flight.quick), 2)
    except asyncio.TimeoutError:
        quick = None
    more.set()
    result = await asyncio.wait_for(task, 5)
    return quick, result.text


async def test_the_budget_answers_between_tokens_and_the_stream_goes_on() -> None:
    quick, full = await _quick_while_stalled(("x", " =", " foo", "(a", ","), 0.05)
    assert quick == "x = foo(a,"  # at the budget, with no token after it
    assert full == "x = foo(a,b)"  # the whole line is still the stream's answer


async def test_mid_word_at_the_budget_the_next_token_decides() -> None:
    quick, full = await _quick_while_stalled(("x", " =", " foo", "(a", ",", " b"), 0.05)
    assert quick is None  # " b" may go on: not shown cut, not shown before the next token
    assert full == "x = foo(a, bb)"


async def test_no_budget_no_partial_answer() -> None:
    quick, full = await _quick_while_stalled(("x", " =", " foo", "(a", ",", " b"), 0.0)
    assert quick is None  # waits for the whole first line
    assert full == "x = foo(a, bb)"


async def test_the_budget_counts_from_the_request_arrival_not_the_stream_start() -> None:
    # The request arrived 30 s before its stream started (debounce, context, a queue): a
    # 20 s budget is spent already, so the text so far is shown at once...
    quick, full = await _quick_while_stalled(("x", " =", " foo", "(a", ","), 20.0, arrived_s_ago=30.0)
    assert quick == "x"  # the first word, once the next token did not continue it
    assert full == "x = foo(a,b)"
    # ...where the same budget counted from the stream's start would still be waiting.
    quick, _ = await _quick_while_stalled(("x", " =", " foo", "(a", ","), 20.0)
    assert quick is None
