"""Rate-limit skips, concurrency cap and Retry-After cooling (never waiting)."""

from __future__ import annotations

from lsp_assist.governance.limits import ProviderLimits
from lsp_assist.governance.settings import RateLimit


async def test_rate_limit_skips_instead_of_waiting() -> None:
    lim = ProviderLimits("p", RateLimit(requests_per_minute=3))
    leases = [lim.try_acquire() for _ in range(5)]
    assert [lease is not None for lease in leases] == [True, True, True, False, False]
    assert lim.skips["rate"] == 2
    for lease in leases:
        if lease:
            lease.release()
    assert lim.try_acquire() is None  # releasing a slot does not refill the bucket


async def test_concurrency_cap_and_release() -> None:
    lim = ProviderLimits("p", RateLimit(max_concurrent=2))
    a = lim.try_acquire()
    b = lim.try_acquire()
    assert a is not None and b is not None
    assert lim.try_acquire() is None
    assert lim.skips["concurrency"] == 1
    a.release()
    a.release()  # idempotent
    assert lim.in_flight == 1
    with lim.try_acquire() as c:  # type: ignore[union-attr]
        assert c is not None
        assert lim.in_flight == 2
    assert lim.in_flight == 1


async def test_retry_after_cools_the_provider() -> None:
    now = [100.0]
    lim = ProviderLimits("p", RateLimit(), clock=lambda: now[0])
    lim.cool_down(5)
    assert lim.try_acquire() is None
    assert lim.skips["cooling"] == 1
    now[0] += 5.1
    lease = lim.try_acquire()
    assert lease is not None


async def test_unlimited_by_default() -> None:
    lim = ProviderLimits("p")
    leases = [lim.try_acquire() for _ in range(100)]
    assert all(leases)
