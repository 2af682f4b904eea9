"""Audit allowlist and rotation; the Governance facade's admission order and finish()."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest

from lsp_assist.config.schema import TierConfig
from lsp_assist.domain import Usage
from lsp_assist.errors import (
    BreakerOpen,
    EndpointRefused,
    Excluded,
    QuotaExceeded,
    RateLimited,
    RateLimitSkip,
    Unavailable,
)
from lsp_assist.governance.audit import FIELDS, AuditLog, audit_files
from lsp_assist.governance.guard import Governance, Surroundings
from lsp_assist.governance.record import CallRecord
from lsp_assist.governance.settings import parse_settings

AWS = "AKIAIOSFODNN7EXAMPLE"
GHP = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1y2z3\n-----END RSA PRIVATE KEY-----"
PLANTED = f"key = '{AWS}'\ntoken = '{GHP}'\n{PEM}\n"


def test_audit_keeps_only_allowlisted_fields(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a" / "audit.jsonl")
    assert log.write(
        {
            "feature": "completion",
            "model": "m",
            "prompt": PLANTED,
            "completion": PLANTED,
            "api_key": GHP,
            "error": PLANTED,
            "stages_ms": {"ttft": 12.345, "total": "x", "evil": PLANTED},
            "outcome": f"model {AWS}",  # even an allowlisted field is redacted
            "request_bytes": 10,
        }
    )
    raw = (tmp_path / "a" / "audit.jsonl").read_text()
    for secret in (AWS, GHP, "MIIEowIBAAKCAQEA", "PRIVATE KEY"):
        assert secret not in raw
    rec = json.loads(raw)
    assert set(rec) <= set(FIELDS)
    assert rec["stages_ms"] == {"ttft": 12.35}
    assert stat.S_IMODE(os.stat(tmp_path / "a" / "audit.jsonl").st_mode) == 0o600


def test_audit_rotation(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, max_bytes=1024, backups=2)
    for i in range(200):
        log.write({"feature": "completion", "request_bytes": i})
    files = audit_files(path)
    assert [f.name for f in files] == ["audit.jsonl.2", "audit.jsonl.1", "audit.jsonl"]
    assert all(f.stat().st_size <= 1024 + 200 for f in files)
    assert log.write_errors == 0


def test_audit_write_failure_does_not_raise(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where a directory should be")
    log = AuditLog(tmp_path / "blocked" / "audit.jsonl")
    assert log.write({"feature": "completion"}) is False
    assert log.write_errors == 1


def make_gov(tmp_path: Path, raw: dict[str, object], now: list[float] | None = None) -> Governance:
    settings, errors = parse_settings(raw, environ={})
    assert errors == []
    around = Surroundings(environ={}) if now is None else Surroundings(clock=lambda: now[0], environ={})
    return Governance(settings, tmp_path / "cache", [str(tmp_path / "ws")], surroundings=around)


async def read_audit(gov: Governance) -> list[dict[str, object]]:
    """The audit lines, once the loop has run what waits for the reply (`after_reply`)."""
    for _ in range(3):
        await asyncio.sleep(0)
    return [json.loads(line) for line in gov.audit.path.read_text().splitlines()]


async def test_admit_finish_writes_audit_and_counts(tmp_path: Path) -> None:
    gov = make_gov(tmp_path, {"quotas": {"completion": {"requests_per_day": 5, "tokens_per_day": 1000}}})
    permit = gov.admit("completion", "fast", "openai@api.example.com")
    permit.finish(
        CallRecord(
            "model",
            model="gpt-4o-mini",
            endpoint_host="api.example.com",
            usage=Usage(prompt_tokens=100, completion_tokens=20, estimated=False),
            stages={"ttft": 80.0, "total": 140.0},
            request_bytes=4096,
            redactions=3,
        )
    )
    permit.finish(CallRecord("model", model="x"))  # idempotent
    # The line is written after the reply, not on the path of the request that finished it.
    assert not gov.audit.path.exists()
    [rec] = await read_audit(gov)
    assert rec["feature"] == "completion" and rec["tier"] == "fast" and rec["model"] == "gpt-4o-mini"
    assert rec["prompt_tokens"] == 100 and rec["tokens_estimated"] is False
    assert rec["stages_ms"] == {"ttft": 80.0, "total": 140.0}
    assert rec["environment"] == "dev" and rec["redactions"] == 3
    assert isinstance(rec["workspace"], str) and "ws" not in rec["workspace"]
    assert gov.quota.remaining("completion").requests == 4
    assert gov.quota.remaining("completion").tokens == 880
    assert gov.limits_for("openai@api.example.com").in_flight == 0


async def test_quota_exhaustion_is_per_feature(tmp_path: Path) -> None:
    gov = make_gov(tmp_path, {"quotas": {"escalation": {"requests_per_day": 1}}})
    gov.admit("escalation", "quality", "q").finish(CallRecord("model", model="m"))
    with pytest.raises(QuotaExceeded):
        gov.admit("escalation", "quality", "q")
    gov.admit("completion", "fast", "f").finish(CallRecord("model", model="m"))
    assert gov.status()["quota_spent_features"] == ["escalation"]
    assert "escalation" in str(gov.status()["warning"])


async def test_breaker_opens_from_failures_and_refuses(tmp_path: Path) -> None:
    now = [0.0]
    gov = make_gov(tmp_path, {"breaker": {"failure_threshold": 2, "cooldown_s": 10}}, now)
    for _ in range(2):
        gov.admit("completion", "fast", "p").finish(
            CallRecord("error", model="m", endpoint_host="h", error=Unavailable("503"))
        )
    with pytest.raises(BreakerOpen):
        gov.admit("completion", "fast", "p")
    assert "p failing" in str(gov.status()["warning"])
    now[0] = 11.0
    probe = gov.admit("completion", "fast", "p")
    with pytest.raises(BreakerOpen):  # one probe only
        gov.admit("completion", "fast", "p")
    probe.finish(CallRecord("model", model="m", endpoint_host="h"))
    gov.admit("completion", "fast", "p").finish(CallRecord("model", model="m", endpoint_host="h"))
    assert gov.status()["open_breakers"] == []
    assert gov.status()["warning"] == ""
    outcomes = [r["error_class"] for r in await read_audit(gov)]
    assert outcomes[:2] == ["Unavailable", "Unavailable"]


async def test_rate_limit_and_concurrency_skip_without_spending_quota(tmp_path: Path) -> None:
    gov = make_gov(
        tmp_path,
        {
            "rate_limits": {"default": {"max_concurrent": 1}},
            "quotas": {"completion": {"requests_per_day": 10}},
        },
    )
    first = gov.admit("completion", "fast", "p")
    with pytest.raises(RateLimitSkip):
        gov.admit("completion", "fast", "p")
    assert gov.quota.remaining("completion").requests == 9  # the skip cost nothing
    assert gov.limits_for("p").skips["concurrency"] == 1
    first.finish(CallRecord("cancelled", model="m"))
    gov.admit("completion", "fast", "p").finish(CallRecord("model", model="m"))


async def test_429_retry_after_cools_provider(tmp_path: Path) -> None:
    gov = make_gov(tmp_path, {})
    gov.admit("completion", "fast", "p").finish(
        CallRecord("error", model="m", error=RateLimited("429", 30.0))
    )
    with pytest.raises(RateLimitSkip, match="cooling"):
        gov.admit("completion", "fast", "p")


async def test_tier_not_allowed_and_endpoint_checks(tmp_path: Path) -> None:
    gov = make_gov(tmp_path, {"tiers_allowed": ["fast"], "allowed_hosts": ["api.example.com"]})
    with pytest.raises(EndpointRefused):
        gov.admit("escalation", "quality", "q")
    with pytest.raises(EndpointRefused):
        gov.check_tier_endpoint("fast", TierConfig(provider="openai", base_url="https://other.com/v1"))
    gov.check_tier_endpoint("fast", TierConfig(provider="openai", base_url="https://api.example.com/v1"))
    with pytest.raises(Excluded):
        gov.check_file(str(tmp_path / "ws" / ".env"))


async def test_context_manager_releases_on_exception(tmp_path: Path) -> None:
    gov = make_gov(tmp_path, {"rate_limits": {"default": {"max_concurrent": 1}}})
    with pytest.raises(Unavailable):
        with gov.admit("completion", "fast", "p"):
            raise Unavailable("boom")
    assert gov.limits_for("p").in_flight == 0
    assert (await read_audit(gov))[0]["outcome"] == "error"
