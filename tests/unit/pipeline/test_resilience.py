"""Retry, hedge and race rules of the tier chain."""

from __future__ import annotations

import asyncio

import pytest

from lsp_assist.domain import PromptContext
from lsp_assist.errors import (
    BadRequest,
    BadResponse,
    ProviderTimeout,
    QuotaExceeded,
    RateLimited,
    Unauthorized,
    Unavailable,
)
from lsp_assist.pipeline.inflight import Anchor, InflightStream
from lsp_assist.pipeline.resilience import first_success, hedge_after, retry_delay


def test_one_retry_only_before_any_token_and_within_the_deadline() -> None:
    exc = Unavailable("refused")
    d = retry_delay(exc, produced=False, retried=False, remaining_s=5.0)
    assert d is not None and 0.05 <= d <= 0.15
    assert retry_delay(exc, produced=True, retried=False, remaining_s=5.0) is None
    assert retry_delay(exc, produced=False, retried=True, remaining_s=5.0) is None
    assert retry_delay(exc, produced=False, retried=False, remaining_s=0.3) is None
    assert retry_delay(BadResponse("cut"), produced=False, retried=False, remaining_s=5.0) is not None


def test_what_is_never_retried() -> None:
    for exc in (
        BadRequest("400"),
        Unauthorized("401"),
        QuotaExceeded("spent"),
        ProviderTimeout("slow", first_token=True),
    ):
        assert retry_delay(exc, produced=False, retried=False, remaining_s=5.0) is None


def test_429_honours_a_short_retry_after_and_defers_a_long_one() -> None:
    assert (
        retry_delay(RateLimited("429", retry_after=0.3), produced=False, retried=False, remaining_s=5) == 0.3
    )
    assert (
        retry_delay(RateLimited("429", retry_after=30), produced=False, retried=False, remaining_s=60) is None
    )
    assert retry_delay(RateLimited("429"), produced=False, retried=False, remaining_s=5) is None


def test_hedge_after_the_recent_p95() -> None:
    assert hedge_after([100.0, 120.0]) is None  # too few samples
    samples = [float(x) for x in range(100, 200)]
    assert hedge_after(samples) == pytest.approx(0.195)


def _flight() -> InflightStream:
    ctx = PromptContext(language="python", path="/a.py", prefix="x = ", suffix="")
    return InflightStream(anchor=Anchor("file:///a.py", 1, 4, "x = ", ""), tier="fast", context=ctx)


async def test_race_returns_the_first_success_and_skips_failures() -> None:
    a, b = _flight(), _flight()
    a.quick.set_exception(Unavailable("down"))
    asyncio.get_running_loop().call_later(0.01, b.quick.set_result, "42")
    winner, text = await first_success([a, b], timeout=2)
    assert winner is b and text == "42"


async def test_race_raises_the_last_error_or_times_out() -> None:
    a = _flight()
    a.quick.set_exception(Unavailable("down"))
    with pytest.raises(Unavailable):
        await first_success([a], timeout=1)
    with pytest.raises(asyncio.TimeoutError):
        await first_success([_flight()], timeout=0.05)
