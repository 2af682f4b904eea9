"""Quotas: exhaustion, isolation per feature, persistence, file mode, two processes."""

from __future__ import annotations

import multiprocessing as mp
import os
import stat
from pathlib import Path

from lsp_assist.governance.quota import DB_NAME, QuotaStore
from lsp_assist.governance.settings import QuotaLimit, QuotaSettings


def limits(**features: QuotaLimit) -> QuotaSettings:
    return QuotaSettings(features=dict(features))


def test_request_quota_exhaustion_and_isolation(tmp_path: Path) -> None:
    q = QuotaStore(tmp_path, limits(escalation=QuotaLimit(requests_per_day=2)))
    assert q.try_consume("escalation", "quality")
    assert q.try_consume("escalation", "quality")
    assert not q.try_consume("escalation", "quality")
    assert q.remaining("escalation").requests == 0
    assert q.exhausted("escalation", "quality")
    # Other features keep working.
    for _ in range(10):
        assert q.try_consume("completion", "fast")
    assert not q.exhausted("completion", "fast")


def test_token_quota_and_batching(tmp_path: Path) -> None:
    q = QuotaStore(tmp_path, limits(completion=QuotaLimit(tokens_per_day=100)))
    assert q.try_consume("completion", "fast")
    q.add_tokens("completion", "fast", 60)
    assert q.remaining("completion").tokens == 40  # pending tokens are counted
    assert q.try_consume("completion", "fast")  # flushes the 60
    q.add_tokens("completion", "fast", 50)
    assert not q.try_consume("completion", "fast")  # 110 >= 100


def test_tier_quota(tmp_path: Path) -> None:
    q = QuotaStore(tmp_path, QuotaSettings(tiers={"quality": QuotaLimit(requests_per_day=1)}))
    assert q.try_consume("escalation", "quality")
    assert not q.try_consume("completion", "quality")
    assert q.try_consume("completion", "fast")


def test_persists_across_restart_and_is_private(tmp_path: Path) -> None:
    q = QuotaStore(tmp_path, limits(warmup=QuotaLimit(requests_per_day=3)))
    assert q.try_consume("warmup", "fast")
    q.close()
    mode = stat.S_IMODE(os.stat(tmp_path / DB_NAME).st_mode)
    assert mode == 0o600
    q2 = QuotaStore(tmp_path, limits(warmup=QuotaLimit(requests_per_day=3)))
    assert q2.remaining("warmup").requests == 2


def test_new_day_resets(tmp_path: Path) -> None:
    now = [1_700_000_000.0]
    q = QuotaStore(tmp_path, limits(completion=QuotaLimit(requests_per_day=1)), wall_clock=lambda: now[0])
    assert q.try_consume("completion", "fast")
    assert not q.try_consume("completion", "fast")
    now[0] += 86400
    assert q.try_consume("completion", "fast")


def test_no_limits_no_file(tmp_path: Path) -> None:
    q = QuotaStore(tmp_path / "q", QuotaSettings())
    assert q.try_consume("completion", "fast")
    assert not (tmp_path / "q" / DB_NAME).exists()


def _worker(directory: str, n: int, out: mp.Queue[int]) -> None:
    q = QuotaStore(directory, limits(completion=QuotaLimit(requests_per_day=150)))
    ok = sum(1 for _ in range(n) if q.try_consume("completion", "fast"))
    q.close()
    out.put(ok)


def test_two_processes_share_one_store_without_losing_counts(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    out: mp.Queue[int] = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), 100, out)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    # 200 attempts against a quota of 150: exactly 150 admitted, none lost or doubled.
    assert sum(results) == 150
    q = QuotaStore(tmp_path, limits(completion=QuotaLimit(requests_per_day=150)))
    assert q.used("completion")["feature:completion"][0] == 150
