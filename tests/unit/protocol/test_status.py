"""The status item's updates: the last request's tier and latency, a few per second at most."""

from __future__ import annotations

import asyncio
from typing import Any

from lsp_assist.domain import Outcome, Suggestion
from lsp_assist.protocol.status import StatusThrottle, request_fields


def test_request_fields_for_shown_and_unshown_outcomes() -> None:
    shown = Suggestion("x)", Outcome.MODEL, "fast", provider="openai", stages={"total": 41.96})
    assert request_fields(shown) == {
        "tier": "fast",
        "provider": "openai",
        "outcome": "model",
        "lastLatencyMs": 42.0,
    }
    assert request_fields(Suggestion("", Outcome.CANCELLED, "fast", stages={"total": 3.0})) is None
    assert request_fields(Suggestion("x", Outcome.STALE, "fast")) is None
    assert request_fields(Suggestion("", Outcome.EMPTY, "fast")) is None
    assert request_fields(Suggestion("", Outcome.ERROR, "fast"))["outcome"] == "error"  # type: ignore[index]


async def test_a_burst_sends_the_first_at_once_and_the_last_at_the_window_end() -> None:
    sent: list[dict[str, Any]] = []
    now = [100.0]  # the throttle's clock: a burst of 20 updates 2 ms apart, within one window
    throttle = StatusThrottle(sent.append, interval_s=0.1, clock=lambda: now[0])
    for i in range(20):
        throttle.update({"lastLatencyMs": i})
        now[0] += 0.002
    assert sent == [{"lastLatencyMs": 0}]  # the rest wait for the window's end
    for _ in range(100):  # the window's timer (on the loop) sends the newest pending one
        if len(sent) > 1:
            break
        await asyncio.sleep(0.01)
    assert sent == [{"lastLatencyMs": 0}, {"lastLatencyMs": 19}]
    now[0] += 0.2  # a later update in a new window goes out at once
    throttle.update({"lastLatencyMs": 20})
    assert sent[-1] == {"lastLatencyMs": 20} and throttle.sent == 3


async def test_health_changes_go_out_at_once_and_replace_a_pending_update() -> None:
    sent: list[dict[str, Any]] = []
    throttle = StatusThrottle(sent.append, interval_s=10.0)
    throttle.update({"state": "ok", "lastLatencyMs": 5})
    throttle.update({"state": "ok", "lastLatencyMs": 6})  # pending
    throttle.now({"state": "warning", "lastLatencyMs": 6})
    assert sent == [{"state": "ok", "lastLatencyMs": 5}, {"state": "warning", "lastLatencyMs": 6}]
    await asyncio.sleep(0.01)
    assert len(sent) == 2  # the pending one was replaced, not sent later
