"""The Redis team store against a real redis-server: atomic quotas, buckets, caps, fallback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lsp_assist.config.schema import TeamConfig
from lsp_assist.errors import QuotaExceeded, RateLimitSkip
from lsp_assist.governance.guard import Governance
from lsp_assist.governance.record import CallRecord
from lsp_assist.governance.settings import GovernanceSettings, QuotaLimit, QuotaSettings, RateLimit
from lsp_assist.governance.shared_store import (
    BucketCheck,
    ConcurrencyCheck,
    QuotaCheck,
    RedisStore,
    Refusal,
    SharedLease,
    StoreUnavailable,
)
from lsp_assist.governance.team import TeamGovernance, TeamStoreUnavailable
from lsp_assist.governance.team_settings import check_store_url, parse_team
from tests.fakes.redis_server import RedisServer


def test_store_url_rules() -> None:
    assert check_store_url("redis://127.0.0.1:6379/0") is None
    assert check_store_url("redis://localhost:6379/1") is None
    assert check_store_url("rediss://cache.example.com:6380/0") is None
    assert "TLS" in (check_store_url("redis://cache.example.com:6379/0") or "")
    assert "credentials" in (check_store_url("redis://:hunter2@127.0.0.1:6379/0") or "")
    assert check_store_url("http://127.0.0.1") is not None


def test_parse_team_policy_pins_and_stricter_limits() -> None:
    cfg = TeamConfig(
        store="redis://127.0.0.1:1/0",
        on_unavailable="open",
        business_line="payments",
        user="alice",
        quotas={"business_lines": {"payments": {"requests_per_day": 100}}},
    )
    policy = {
        "on_unavailable": "closed",
        "quotas": {"business_lines": {"payments": {"requests_per_day": 10}}, "users": {"default": {}}},
    }
    team, errors = parse_team(cfg, policy, environ={})
    assert errors == []
    assert team.on_unavailable == "closed"
    assert team.limits.business_lines["payments"].requests_per_day == 10
    assert "team.on_unavailable" in team.locked
    bad, errs = parse_team(TeamConfig(store="redis://10.1.2.3:6379/0", on_unavailable="maybe"), environ={})
    assert not bad.shared and bad.on_unavailable == "local"
    assert any("TLS" in e for e in errs) and any("on_unavailable" in e for e in errs)


async def test_quota_is_exact_under_concurrency_from_several_clients(redis_server: RedisServer) -> None:
    # Exactness, not speed: 40 admits at once over three fresh connections outlasted the
    # request path's 0.25 s socket timeout on a loaded CI machine.
    stores = [RedisStore(redis_server.url, namespace="t1", timeout_s=5.0) for _ in range(3)]
    q = [QuotaCheck("feature:completion", 7, None)]
    try:
        results = await asyncio.gather(*(stores[i % 3].admit(q, [], []) for i in range(40)))
        admitted = [r for r in results if isinstance(r, SharedLease)]
        refused = [r for r in results if isinstance(r, Refusal)]
        assert len(admitted) == 7
        assert len(refused) == 33 and all(r.reason == "quota" for r in refused)
        assert await stores[0].usage("feature:completion") == (7, 0)
        admitted[0].release(tokens=120)
        await asyncio.sleep(0.1)
        assert await stores[1].usage("feature:completion") == (7, 120)
        ttl = redis_server.command("TTL", stores[0].quota_key(stores[0].day(), "feature:completion"))
        assert int(ttl[1:].strip()) > 86400  # namespaced and expiring
    finally:
        for s in stores:
            await s.aclose()


async def test_token_quota_refuses_once_spent(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, namespace="t2")
    q = [QuotaCheck("user:bob", None, 100)]
    try:
        lease = await store.admit(q, [], [])
        assert isinstance(lease, SharedLease)
        lease.release(tokens=150)
        await asyncio.sleep(0.1)
        assert isinstance(await store.admit(q, [], []), Refusal)
    finally:
        await store.aclose()


async def test_token_bucket_and_concurrency_cap(redis_server: RedisServer) -> None:
    a, b = RedisStore(redis_server.url, namespace="t3"), RedisStore(redis_server.url, namespace="t3")
    try:
        bucket = [BucketCheck("provider:p", 6.0)]  # burst 6, then one every 10 s
        got = await asyncio.gather(*(x.admit([], bucket, []) for x in (a, b) for _ in range(6)))
        assert sum(isinstance(r, SharedLease) for r in got) == 6
        refusal = await a.admit([], bucket, [])
        assert isinstance(refusal, Refusal) and refusal.reason == "rate"
        assert 0 < refusal.retry_ms <= 10_000

        cap = [ConcurrencyCheck("bl:payments", 2)]
        l1, l2 = await a.admit([], [], cap), await b.admit([], [], cap)
        assert isinstance(l1, SharedLease) and isinstance(l2, SharedLease)
        third = await b.admit([], [], cap)
        assert isinstance(third, Refusal) and third.reason == "concurrency"
        l1.release()
        await asyncio.sleep(0.1)
        assert isinstance(await b.admit([], [], cap), SharedLease)
        # Nothing is taken when one check refuses: the quota is not counted for a capped call.
        both = await a.admit([QuotaCheck("feature:x", 100, None)], [], cap)
        assert isinstance(both, Refusal)
        assert await a.usage("feature:x") == (0, 0)
    finally:
        await a.aclose()
        await b.aclose()


async def test_store_down_is_reported_at_once_and_recovers(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, namespace="t4")
    changes: list[bool] = []
    store.on_change = changes.append
    q = [QuotaCheck("feature:completion", 1000, None)]
    try:
        assert isinstance(await store.admit(q, [], []), SharedLease)
        redis_server.kill()
        with pytest.raises(StoreUnavailable):
            await store.admit(q, [], [])
        tried = (store.round_trips, store.errors)
        with pytest.raises(StoreUnavailable):  # known down: no round trip at all
            await store.admit(q, [], [])
        # A round trip counts either way (answered or failed): none was tried.
        assert (store.round_trips, store.errors) == tried
        assert changes == [False]
        redis_server.start()
        for _ in range(100):
            if store.available:
                break
            await asyncio.sleep(0.05)
        assert store.available and changes == [False, True]
        assert isinstance(await store.admit(q, [], []), SharedLease)
        assert store.outages == 1
    finally:
        await store.aclose()


def _gov(tmp_path: Path, url: str, mode: str, **gov: object) -> Governance:
    settings = GovernanceSettings(
        quotas=QuotaSettings(features={"completion": QuotaLimit(requests_per_day=2)}),
        rate_limits={"default": RateLimit(max_concurrent=1)},
        audit=GovernanceSettings().audit,
        **gov,  # type: ignore[arg-type]
    )
    team_settings, errors = parse_team(TeamConfig(store=url, on_unavailable=mode, user="u"), environ={})
    assert errors == []
    team = TeamGovernance(team_settings, settings, environ={})
    return Governance(settings, tmp_path / "cache", team=team)


async def test_governance_uses_the_store_then_the_fallback_policy(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    gov = _gov(tmp_path / "a", redis_server.url, "local")
    other = _gov(tmp_path / "b", redis_server.url, "local")
    try:
        p1 = await gov.admit_async("completion", "fast", "k")
        with pytest.raises(RateLimitSkip):  # the concurrency cap of 1 is shared
            await other.admit_async("completion", "fast", "k")
        p1.finish(CallRecord("model", model="m"))
        await asyncio.sleep(0.05)
        (await other.admit_async("completion", "fast", "k")).finish(CallRecord("model", model="m"))
        with pytest.raises(QuotaExceeded):  # 2 per day across both
            await gov.admit_async("completion", "fast", "k")
        assert gov.quota.used("completion") == {"feature:completion": (0, 0)}  # local not counted

        redis_server.kill()
        # Down: the local quota (2 per day, its own sqlite file) applies in this process.
        for _ in range(2):
            (await gov.admit_async("completion", "fast", "k")).finish(CallRecord("model", model="m"))
        with pytest.raises(QuotaExceeded):
            await gov.admit_async("completion", "fast", "k")
        assert "team store unreachable" in str(gov.status()["warning"])
    finally:
        await gov.aclose()
        await other.aclose()


async def test_fail_open_and_fail_closed(tmp_path: Path, redis_server: RedisServer) -> None:
    opened = _gov(tmp_path / "o", redis_server.url, "open")
    closed = _gov(tmp_path / "c", redis_server.url, "closed")
    redis_server.kill()
    try:
        permits = [await opened.admit_async("completion", "fast", "k") for _ in range(5)]
        assert len(permits) == 5  # no limits at all while down (not even the local cap of 1)
        with pytest.raises(TeamStoreUnavailable):
            await closed.admit_async("completion", "fast", "k")
        for p in permits:
            p.finish(CallRecord("model", model="m"))
    finally:
        await opened.aclose()
        await closed.aclose()


@pytest.mark.parametrize(
    ("mode", "consequence"),
    [("local", "own quotas"), ("open", "no quotas or limits"), ("closed", "completions are refused")],
)
def test_health_message_names_the_store_and_what_applies(tmp_path: Path, mode: str, consequence: str) -> None:
    gov = _gov(tmp_path, "rediss://redis.corp.example:6380/2", mode)
    assert gov.team is not None
    down = gov.team.health_message(False)
    assert "rediss://redis.corp.example:6380/2 unreachable" in down and consequence in down
    assert "reachable again" in gov.team.health_message(True)
    gov.close()
