"""Adaptive trailing-edge debounce and supersession."""

from __future__ import annotations

import asyncio

import pytest

from lsp_assist.pipeline.scheduler import Scheduler, Superseded


async def test_a_newer_ticket_supersedes_a_request_in_its_debounce() -> None:
    s = Scheduler(min_ms=10, max_ms=90)
    s.note_change("u")
    await asyncio.sleep(0.05)
    s.note_change("u")  # typing fast: the debounce grows past the minimum
    first = s.ticket("u")
    waiter = asyncio.ensure_future(s.debounce("u", first, invoked=False))
    await asyncio.sleep(0)
    second = s.ticket("u")
    with pytest.raises(Superseded):
        await asyncio.wait_for(waiter, 1)
    assert s.is_current("u", second)
    assert s.superseded == 1


async def test_invoked_requests_skip_the_debounce() -> None:
    s = Scheduler(min_ms=500, max_ms=900)
    t = s.ticket("u")
    assert await asyncio.wait_for(s.debounce("u", t, invoked=True), 0.1) == 0.0


def test_debounce_adapts_to_the_typing_rhythm() -> None:
    s = Scheduler(min_ms=10, max_ms=90)
    assert s.debounce_for("u") == pytest.approx(0.010)  # no typing seen: minimum
    st = s._state("u")
    # A fast burst (40 ms between keys) asks for a little more than the gap.
    import time

    st.last_change = time.monotonic()
    st.interval_ewma = 0.04
    assert s.debounce_for("u") == pytest.approx(0.06)
    st.interval_ewma = 0.2  # slower typing: capped at the maximum
    assert s.debounce_for("u") == pytest.approx(0.09)
    st.last_change = time.monotonic() - 1.0  # a pause: back to the minimum
    assert s.debounce_for("u") == pytest.approx(0.010)


async def test_trailing_edge_the_last_keystroke_gets_its_request() -> None:
    s = Scheduler(min_ms=5, max_ms=30)
    tickets = []
    for _ in range(5):
        s.note_change("u")
        tickets.append(s.ticket("u"))
    last = tickets[-1]
    waited = await asyncio.wait_for(s.debounce("u", last, invoked=False), 1)
    assert waited > 0


async def test_the_debounce_runs_from_the_keystroke_not_from_the_request() -> None:
    sched = Scheduler(min_ms=10, max_ms=200)
    for _ in range(4):  # a fast burst: the debounce grows to the cap
        sched.note_change("u")
        await asyncio.sleep(0.03)
    sched.note_change("u")
    assert sched.debounce_for("u") > 0.04
    ticket = sched.ticket("u")
    await asyncio.sleep(0.15)  # the request waited elsewhere longer than the debounce (no pause)
    assert await sched.debounce("u", ticket, invoked=False) == 0.0
