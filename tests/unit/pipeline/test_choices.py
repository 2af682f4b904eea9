"""The choices of an Invoked request: distinct, non-empty, primary first, at most N."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import cast

from lsprotocol import types

from lsp_assist.domain import Usage
from lsp_assist.pipeline.choices import distinct_choices, first_line, fuller_text
from lsp_assist.pipeline.inflight import InflightStream, StreamResult
from lsp_assist.protocol.convert import completion_list


def test_primary_first_then_distinct_non_empty_candidates() -> None:
    got = distinct_choices("return a + b", ["return a + b  ", "", "  ", "return a", "return a + b"], 3)
    assert got == ["return a + b", "return a"]


def test_limit_caps_the_choices_and_never_drops_the_primary() -> None:
    assert distinct_choices("x", ["y", "z", "w"], 2) == ["x", "y"]
    assert distinct_choices("x", ["y"], 0) == ["x"]
    assert distinct_choices("", ["y", "z"], 3) == ["y", "z"]


def test_first_line_only_of_a_multi_line_suggestion() -> None:
    assert first_line("total = a + b\n    return total") == "total = a + b"
    assert first_line("return a + b") == ""
    assert first_line("\n    return total") == ""


def _flight() -> InflightStream:
    # fuller_text reads only the stream's `final` future.
    fut: asyncio.Future[StreamResult] = asyncio.get_running_loop().create_future()
    return cast(InflightStream, SimpleNamespace(final=fut))


async def test_fuller_text_waits_for_the_stream_end_within_the_bound() -> None:
    flight = _flight()
    loop = asyncio.get_running_loop()
    loop.call_later(0.02, flight.final.set_result, StreamResult("a\nb", Usage(), {}))
    assert await fuller_text(flight, 1.0) == "a\nb"


async def test_fuller_text_gives_up_at_the_bound_and_on_errors() -> None:
    assert await fuller_text(_flight(), 0.01) == ""
    assert await fuller_text(None, 1.0) == ""
    failed = _flight()
    failed.final.set_result(StreamResult("a", Usage(), {}, error=RuntimeError("x")))
    assert await fuller_text(failed, 1.0) == ""


def test_completion_list_has_one_item_per_choice_at_the_cursor() -> None:
    pos = types.Position(3, 4)
    items = completion_list("a", pos, alternatives=["b", "c"]).items
    assert [i.insert_text for i in items] == ["a", "b", "c"]
    assert all(i.range == types.Range(start=pos, end=pos) for i in items)
    assert len(completion_list("a", pos).items) == 1


def test_the_choice_book_keeps_the_first_shown_answer_as_item_one() -> None:
    from lsp_assist.domain import Cursor
    from lsp_assist.pipeline.choices import ChoiceBook

    book = ChoiceBook(entries=2)
    key = ("file:///a.py", 3, Cursor(1, 4))
    assert book.start(key) and not book.start(key)  # one gathering per position
    book.put(key, "total = a + b", ["total = a + b\n    return total", "return a + b"])
    book.done(key)
    # Cycling back to the first answer: the book leads with it, the order first shown.
    got = book.get(key, "total = a + b")
    assert got == ("total = a + b", ("total = a + b\n    return total", "return a + b"))
    # The ghost grew into the fuller answer since: item 1 is what is on screen now.
    got = book.get(key, "total = a + b\n    return total")
    assert got == ("total = a + b\n    return total", ("total = a + b", "return a + b"))
    assert book.get(key, "something else") is None  # another answer: not these choices
    assert book.get(("file:///a.py", 4, Cursor(1, 4)), "total = a + b") is None  # typed since
    for v in (5, 6):
        book.put(("file:///a.py", v, Cursor(1, 4)), "x", ["y"])
    assert book.get(key, "total = a + b") is None  # bounded: the oldest position went
