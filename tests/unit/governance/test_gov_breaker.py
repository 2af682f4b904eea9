"""Circuit breaker transitions with a fake clock."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from lsp_assist.errors import BadRequest, RateLimited, Unavailable
from lsp_assist.governance.breaker import BreakerState, CircuitBreaker
from lsp_assist.governance.settings import BreakerSettings


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def st(b: CircuitBreaker) -> BreakerState:
    return b.state  # a call, so mypy does not narrow the state across assertions


def make(**kw: Any) -> tuple[CircuitBreaker, Clock, list[tuple[str, str]]]:
    clock = Clock()
    changes: list[tuple[str, str]] = []
    base = BreakerSettings(failure_threshold=3, error_rate=0.5, window_s=60, min_calls=10, cooldown_s=30)
    settings = dataclasses.replace(base, **kw)
    b = CircuitBreaker(
        "p", settings, clock=clock, on_change=lambda n, o, s: changes.append((o.value, s.value))
    )
    return b, clock, changes


def test_opens_after_consecutive_failures_and_fails_fast() -> None:
    b, _, changes = make()
    for _ in range(2):
        assert b.allow()
        b.record_failure(Unavailable("down"))
    assert st(b) is BreakerState.CLOSED
    b.record_failure(Unavailable("down"))
    assert st(b) is BreakerState.OPEN
    assert not b.allow()
    assert changes == [("closed", "open")]


def test_success_resets_consecutive_count() -> None:
    b, _, _ = make()
    b.record_failure(Unavailable("x"))
    b.record_failure(Unavailable("x"))
    b.record_success()
    b.record_failure(Unavailable("x"))
    b.record_failure(Unavailable("x"))
    assert st(b) is BreakerState.CLOSED


def test_half_open_allows_exactly_one_probe_then_success_closes() -> None:
    b, clock, changes = make()
    for _ in range(3):
        b.record_failure(Unavailable("x"))
    clock.t += 29.9
    assert not b.allow()
    clock.t += 0.2
    assert b.allow()  # the probe
    assert st(b) is BreakerState.HALF_OPEN
    assert not b.allow()  # only one in flight
    assert not b.allow()
    b.record_success()
    assert st(b) is BreakerState.CLOSED
    assert b.allow() and b.allow()
    assert changes == [("closed", "open"), ("open", "half_open"), ("half_open", "closed")]


def test_probe_failure_reopens_with_new_cooldown() -> None:
    b, clock, _ = make()
    for _ in range(3):
        b.record_failure(Unavailable("x"))
    clock.t += 31
    assert b.allow()
    b.record_failure(RateLimited("429"))
    assert st(b) is BreakerState.OPEN
    clock.t += 10
    assert not b.allow()
    clock.t += 25
    assert b.allow()


def test_cancelled_probe_frees_the_slot() -> None:
    b, clock, _ = make()
    for _ in range(3):
        b.record_failure(Unavailable("x"))
    clock.t += 31
    assert b.allow()
    b.record_failure(asyncio.CancelledError())
    assert st(b) is BreakerState.HALF_OPEN
    assert b.allow()  # a new probe may go


def test_cancellations_and_4xx_do_not_count() -> None:
    b, _, _ = make()
    for _ in range(10):
        b.record_failure(asyncio.CancelledError())
        b.record_failure(BadRequest("400"))
    assert st(b) is BreakerState.CLOSED


def test_error_rate_over_window_with_min_calls() -> None:
    b, _, _ = make(failure_threshold=100, min_calls=10, error_rate=0.5)
    for i in range(9):  # alternate: 4-5 failures in 9 calls, below min_calls
        if i % 2:
            b.record_success()
        else:
            b.record_failure(Unavailable("x"))
    assert st(b) is BreakerState.CLOSED
    b.record_success()
    b.record_failure(Unavailable("x"))  # 11 calls, 6 failures
    assert st(b) is BreakerState.OPEN


def test_old_calls_leave_the_window() -> None:
    b, clock, _ = make(failure_threshold=100, min_calls=4, error_rate=0.5, window_s=10)
    b.record_failure(Unavailable("x"))
    b.record_failure(Unavailable("x"))
    b.record_failure(Unavailable("x"))
    clock.t += 20
    for _ in range(3):
        b.record_success()
    b.record_failure(Unavailable("x"))  # 1 of 4 in window
    assert st(b) is BreakerState.CLOSED
