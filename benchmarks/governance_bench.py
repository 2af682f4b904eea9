"""Per-call cost of the governance layer on the request path; prints figures.

    .venv/bin/python -m benchmarks.governance_bench

Measures: redaction of a ~10 KB prompt (clean code, and with planted secrets),
`DataBoundary.excluded`, `QuotaStore.try_consume` (one BEGIN IMMEDIATE transaction),
`AuditLog.write` (one O_APPEND line), and a full `admit` + `finish` cycle.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsp_assist.domain import Usage
from lsp_assist.governance.audit import AuditLog
from lsp_assist.governance.boundaries import DataBoundary
from lsp_assist.governance.guard import Governance
from lsp_assist.governance.quota import QuotaStore
from lsp_assist.governance.record import CallRecord
from lsp_assist.governance.redaction import redact
from lsp_assist.governance.settings import QuotaLimit, QuotaSettings, parse_settings


def bench(name: str, fn: Callable[[], object], n: int = 2000) -> None:
    for _ in range(min(50, n)):
        fn()
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e6)
    samples.sort()
    print(f"{name:<44} p50 {statistics.median(samples):8.1f} us   p95 {samples[int(0.95 * n)]:8.1f} us")


def load_code() -> str:
    root = Path(__file__).resolve().parents[1] / "lsp_assist"
    return "".join(p.read_text() for p in sorted(root.rglob("*.py")))


async def main() -> None:
    code = load_code()
    prompt = code[:10_000]
    planted = prompt[:9_000] + "\nkey = 'AKIAIOSFODNN7EXAMPLE'\npassword = 'S3cr3t!Passw0rd#2024'\n"
    bench("redact 10 KB clean code", lambda: redact(prompt), 1000)
    bench("redact 10 KB with 2 secrets", lambda: redact(planted), 1000)
    with tempfile.TemporaryDirectory() as d:
        b = DataBoundary([d])
        (Path(d) / ".lsp-assist-ignore").write_text("generated/\n")
        target = str(Path(d) / "src" / "pkg" / "mod.py")
        bench("DataBoundary.excluded (3 levels deep)", lambda: b.excluded(target))
        q = QuotaStore(Path(d) / "q", QuotaSettings(features={"completion": QuotaLimit(10**9, 10**12)}))
        bench("QuotaStore.try_consume (sqlite, WAL)", lambda: q.try_consume("completion", "fast"))

        def consume_with_tokens() -> None:
            q.add_tokens("completion", "fast", 120)
            q.try_consume("completion", "fast")

        bench("add_tokens + try_consume", consume_with_tokens)
        log = AuditLog(Path(d) / "a" / "audit.jsonl", max_bytes=50_000_000)
        stages = {"ttft": 1.0, "total": 2.0}
        rec = {"feature": "completion", "tier": "fast", "model": "m", "stages_ms": stages}
        bench("AuditLog.write (one line)", lambda: log.write(rec))
        settings, _ = parse_settings(
            {
                "quotas": {"completion": {"requests_per_day": 10**9}},
                "rate_limits": {"default": {"requests_per_minute": 10**9, "max_concurrent": 4}},
            }
        )
        gov = Governance(settings, Path(d) / "cache", [d])

        def cycle() -> None:
            p = gov.admit("completion", "fast", "openai@h")
            p.finish(
                CallRecord(
                    "model",
                    model="m",
                    endpoint_host="h",
                    usage=Usage(900, 30),
                    stages={"ttft": 80.0, "total": 120.0},
                    request_bytes=4000,
                )
            )

        bench("Governance.admit + Permit.finish", cycle)
        gov.close()
        q.close()


if __name__ == "__main__":
    asyncio.run(main())
