"""Issue 5 end to end: tiers, fallback, breaker, limits, quotas, audit, secrets, boundaries.

Every test starts the real `lsp-assist serve` over stdio against loopback fake model
servers (one server process per test, two for the shared-quota test). The fast tier is
the `fake` fixture (model "fast-coder"); the backup tier is either the offline engine or a
second fake server (model "backup-coder"), so each tier's request count is observable.
Prefetch is off so that every model request is one the test asked for.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import ROOT, doc_uri, inline, isolated_env, lsp_session, open_doc, texts
from tests.fakes.fake_model_server import FakeModelServer, Script

FAST = "fast-coder"
QUALITY = "quality-coder"
BACKUP = "backup-coder"

# Planted secrets: none of these strings may leave the process or reach a log.
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GH_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0"
PLANTED = (AWS_KEY, AWS_SECRET, GH_TOKEN, PEM_BODY)


@pytest.fixture
def backup() -> Iterator[FakeModelServer]:
    srv = FakeModelServer().start()
    try:
        yield srv
    finally:
        srv.stop()


def _tier(base_url: str, model: str, **over: Any) -> dict[str, Any]:
    return {
        "provider": "openai",
        "api": "completions",
        "base_url": base_url,
        "model": model,
        "first_token_timeout_ms": 2000,
        "total_timeout_ms": 5000,
        **over,
    }


def options(
    fast: FakeModelServer,
    backup: FakeModelServer | None = None,
    *,
    governance: dict[str, Any] | None = None,
    fast_over: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "tiers": {
            "fast": _tier(fast.base_url, FAST, **(fast_over or {})),
            "quality": _tier(fast.base_url, QUALITY, max_tokens=128),
            "backup": _tier(backup.base_url, BACKUP) if backup else {"provider": "offline"},
        },
        "completion": {"prefetch": False, "enrichment": False},
        "governance": governance or {},
    }


def calls(srv: FakeModelServer, model: str) -> int:
    return sum(1 for r in srv.model_requests() if (r.body or {}).get("model") == model)


def source(i: int) -> str:
    return f"def add_{i}(a, b):\n    \n"


async def ask(client: LanguageClient, tmp_path: Path, i: int) -> list[str]:
    """Open a fresh document (a fresh cache key) and ask at its empty body line."""
    uri = doc_uri(tmp_path, f"m{i}.py")
    open_doc(client, uri, source(i))
    return texts(await inline(client, uri, 1, 4))


async def command(client: LanguageClient, name: str, *args: Any) -> Any:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(args) or None)
        ),
        timeout=20,
    )


async def gov_status(client: LanguageClient) -> dict[str, Any]:
    out = await command(client, "lspAssist.stats")
    assert "governance" in out, "lspAssist.stats does not expose governance status"
    status: dict[str, Any] = out["governance"]
    return status


async def breakers_closed(client: LanguageClient, timeout: float = 5.0) -> dict[str, Any]:
    """The governance status once no breaker is open (or at `timeout`): a probe's success is
    recorded when its stream ends, and the stream ends after its reply is written."""
    st = await gov_status(client)
    for _ in range(int(timeout / 0.05)):
        if not st["open_breakers"]:
            break
        await asyncio.sleep(0.05)
        st = await gov_status(client)
    return st


def audit_lines(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "cache" / "audit" / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def wait_until(predicate: Any, timeout: float = 5.0) -> bool:
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())


def track_status(client: LanguageClient) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    @client.feature("lspAssist/status")  # type: ignore[untyped-decorator]
    def _status(ls: LanguageClient, params: Any) -> None:
        # pygls hands unknown notifications over as a namedtuple-like `Object`.
        seen.append(params if isinstance(params, dict) else params._asdict())

    return seen


def shown(client: LanguageClient) -> str:
    return "\n".join(m.message for m in client.messages)


# --------------------------------------------------------------------------- 1. fallback


async def test_fast_500_is_answered_by_the_backup_tier(
    tmp_path: Path, fake: FakeModelServer, backup: FakeModelServer
) -> None:
    fake.default = Script(fault="http500")
    backup.default = Script(text="return 'from backup'\n")
    async with lsp_session(tmp_path, options(fake, backup)) as client:
        assert await ask(client, tmp_path, 0) == ["return 'from backup'"]
        # At most one retry before any token: two calls to fast, then backup.
        assert 1 <= calls(fake, FAST) <= 2
        assert calls(backup, BACKUP) == 1


async def test_fast_stall_answers_from_offline_without_waiting(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(fault="stall")
    opts = options(fake, fast_over={"first_token_timeout_ms": 300, "total_timeout_ms": 60000})
    opts["completion"]["deadline_ms"] = 60000
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    \n")
        # The stall never ends (until the client goes away) and the deadline is 60 s: an answer
        # within 10 s can only come from the first-token timeout's fallback.
        res = await inline(client, uri, 5, 4, timeout=10)
        assert calls(fake, FAST) == 1
        out = await command(client, "lspAssist.stats")
        assert out["summary"]["requests"] >= 1
        assert any(k in out["summary"]["outcomes"] for k in ("fallback", "empty")), out["summary"]
        del res


async def test_429_retry_after_is_honoured_with_one_retry(
    tmp_path: Path, fake: FakeModelServer, backup: FakeModelServer
) -> None:
    fake.default = Script(text="return 'from fast'\n")
    backup.default = Script(text="return 'from backup'\n")
    async with lsp_session(tmp_path, options(fake, backup)) as client:
        fake.push(Script(fault="http429", retry_after="0.3"))
        assert await ask(client, tmp_path, 0) == ["return 'from fast'"]  # retried after 0.3 s
        assert calls(fake, FAST) == 2 and calls(backup, BACKUP) == 0
        # Retry-After beyond a keystroke's patience: no retry, the backup tier answers.
        fake.push(Script(fault="http429", retry_after="30"))
        assert await ask(client, tmp_path, 1) == ["return 'from backup'"]
        assert calls(fake, FAST) == 3 and calls(backup, BACKUP) == 1


async def test_slow_first_token_falls_back_and_the_stream_finishes_into_the_cache(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return 'late but good'\n", ttft_ms=700)
    opts = options(fake, fast_over={"first_token_timeout_ms": 300, "total_timeout_ms": 5000})
    async with lsp_session(tmp_path, opts) as client:
        first = await ask(client, tmp_path, 0)
        assert first != ["return 'late but good'"]  # answered before the first token came
        assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_completed >= 1, 5)
        uri = doc_uri(tmp_path, "m0.py")
        assert await wait_until(lambda: len(audit_lines(tmp_path)) >= 1)
        assert texts(await inline(client, uri, 1, 4)) == ["return 'late but good'"]
        assert calls(fake, FAST) == 1  # the second answer came from the cache


# --------------------------------------------------------------------------- 2. breaker


async def test_breaker_opens_skips_fast_then_half_open_probe_closes_it(
    tmp_path: Path, fake: FakeModelServer, backup: FakeModelServer
) -> None:
    fake.default = Script(fault="http500")
    backup.default = Script(text="return 'from backup'\n")
    gov = {"breaker": {"failure_threshold": 2, "cooldown_s": 1.0}}
    async with lsp_session(tmp_path, options(fake, backup, governance=gov)) as client:
        statuses = track_status(client)
        assert await ask(client, tmp_path, 0) == ["return 'from backup'"]
        assert calls(fake, FAST) == 2  # a failure and its retry: the breaker opens
        st = await gov_status(client)
        assert st["open_breakers"], st
        assert await wait_until(lambda: any(s.get("state") == "warning" for s in statuses))
        # While open: fast gets no request at all, backup answers.
        for i in (1, 2, 3):
            assert await ask(client, tmp_path, i) == ["return 'from backup'"]
        assert calls(fake, FAST) == 2
        assert calls(backup, BACKUP) == 4
        # After the cool-down exactly one probe reaches fast; its success closes the breaker.
        fake.default = Script(text="return 'from fast'\n")
        await asyncio.sleep(1.2)
        assert await ask(client, tmp_path, 4) == ["return 'from fast'"]
        assert calls(fake, FAST) == 3
        st = await breakers_closed(client)
        assert not st["open_breakers"], st
        assert await ask(client, tmp_path, 5) == ["return 'from fast'"]
        assert calls(fake, FAST) == 4
        assert calls(backup, BACKUP) == 4
        assert await wait_until(lambda: statuses[-1].get("state") == "ok"), statuses[-3:]


async def test_half_open_probe_failure_reopens(
    tmp_path: Path, fake: FakeModelServer, backup: FakeModelServer
) -> None:
    fake.default = Script(fault="http500")
    backup.default = Script(text="return 'from backup'\n")
    gov = {"breaker": {"failure_threshold": 2, "cooldown_s": 1.0}}
    async with lsp_session(tmp_path, options(fake, backup, governance=gov)) as client:
        await ask(client, tmp_path, 0)
        assert calls(fake, FAST) == 2
        await asyncio.sleep(1.2)
        # One probe (no retry of a probe: the breaker re-opens on its failure).
        assert await ask(client, tmp_path, 1) == ["return 'from backup'"]
        assert calls(fake, FAST) == 3
        assert await ask(client, tmp_path, 2) == ["return 'from backup'"]
        assert calls(fake, FAST) == 3
        assert (await gov_status(client))["open_breakers"]


# --------------------------------------------------------------------------- 3. rate limits


async def test_rate_limit_skips_the_third_request_and_counts_it(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    gov = {"rate_limits": {"default": {"requests_per_minute": 2}}}
    async with lsp_session(tmp_path, options(fake, governance=gov)) as client:
        assert await ask(client, tmp_path, 0) == ["return a + b"]
        assert await ask(client, tmp_path, 1) == ["return a + b"]
        assert calls(fake, FAST) == 2
        third = await ask(client, tmp_path, 2)  # skipped, not queued: offline or empty
        assert calls(fake, FAST) == 2
        assert third != ["return a + b"] or third == []
        st = await gov_status(client)
        skips = sum(sum(lim["skips"].values()) for lim in st["limits"].values())
        assert skips >= 1, st
        assert any(k.startswith("limit:") for k in st["refusals"]), st


# --------------------------------------------------------------------------- 4. quotas


async def test_completion_quota_spent_degrades_completions_not_escalation(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text=lambda b: "return 'q'\n" if b.get("model") == QUALITY else "return a + b\n")
    gov = {"quotas": {"completion": {"requests_per_day": 1}}}
    async with lsp_session(tmp_path, options(fake, governance=gov)) as client:
        assert await ask(client, tmp_path, 0) == ["return a + b"]
        assert calls(fake, FAST) == 1
        await ask(client, tmp_path, 1)
        assert calls(fake, FAST) == 1  # spent: offline, no model call
        uri = doc_uri(tmp_path, "m1.py")
        out = await command(client, "lspAssist.escalate", uri, {"line": 1, "character": 4})
        assert out.get("error") is None, out
        assert out["text"].startswith("return 'q'")
        assert calls(fake, QUALITY) == 1
        st = await gov_status(client)
        assert "completion" in st["quota_spent_features"], st
        assert any(k == "quota:completion" for k in st["refusals"]), st


async def test_escalation_quota_spent_gives_a_message_completions_unaffected(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    gov = {"quotas": {"escalation": {"requests_per_day": 0}}}
    async with lsp_session(tmp_path, options(fake, governance=gov)) as client:
        uri = doc_uri(tmp_path, "m0.py")
        open_doc(client, uri, source(0))
        out = await command(client, "lspAssist.escalate", uri, {"line": 1, "character": 4})
        assert out["text"] == ""
        assert "quota" in out["error"]
        assert await wait_until(lambda: "quota" in shown(client)), shown(client)
        assert calls(fake, QUALITY) == 0
        assert await ask(client, tmp_path, 1) == ["return a + b"]
        assert calls(fake, FAST) == 1


# --------------------------------------------------------------------------- 5. shared quota


async def test_two_processes_share_one_quota_store(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=20)
    quota = 5
    gov = {"quotas": {"completion": {"requests_per_day": quota}}}
    env = isolated_env(tmp_path)  # one cache dir (one quota store) for both processes
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    async with lsp_session(a_dir, options(fake, governance=gov), env=env) as a:
        async with lsp_session(b_dir, options(fake, governance=gov), env=env) as b:

            async def burst(client: LanguageClient, root: Path, tag: str) -> None:
                for i in range(quota):
                    uri = doc_uri(root, f"{tag}{i}.py")
                    open_doc(client, uri, f"def {tag}_{i}(a, b):\n    \n")
                    await inline(client, uri, 1, 4)

            await asyncio.gather(burst(a, a_dir, "a"), burst(b, b_dir, "b"))
    assert calls(fake, FAST) == quota


# --------------------------------------------------------------------------- 6. secrets

SECRET_FILE = (
    f'''import boto3

AWS_ACCESS_KEY_ID = "{AWS_KEY}"
aws_secret_access_key = "{AWS_SECRET}"
GITHUB_TOKEN = "{GH_TOKEN}"
PRIVATE_KEY = """-----BEGIN RSA PRIVATE KEY-----
{PEM_BODY}
{PEM_BODY[::-1]}
-----END RSA PRIVATE KEY-----"""


def connect_cloud(region):
    client = boto3.client("s3", aws_access_key_id=AWS_ACCESS_KEY_ID, aws_secret_access_key="{AWS_SECRET}")
    return client


def use_it():
    c = make_session()
    d = connect_cloud("eu-west-1")
'''
    + "    \n"
)

HELPER_FILE = f'''def make_session(token="{GH_TOKEN}"):
    """helper_marker_xyz"""
    key = "{AWS_KEY}"
    secret_key = "{AWS_SECRET}"
    return (token, key, secret_key)

PEM = """-----BEGIN RSA PRIVATE KEY-----
{PEM_BODY}
-----END RSA PRIVATE KEY-----"""
'''


async def test_planted_secrets_never_leave_or_get_logged(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return c\n")
    log_file = tmp_path / "server.log"
    env = isolated_env(tmp_path, LSP_ASSIST_LOG_FILE=str(log_file), LSP_ASSIST_LOG_LEVEL="debug")
    async with lsp_session(tmp_path, options(fake), env=env) as client:
        helper = doc_uri(tmp_path, "session_helper.py")
        open_doc(client, helper, HELPER_FILE)
        uri = doc_uri(tmp_path, "cloud.py")
        open_doc(client, uri, SECRET_FILE)
        line = SECRET_FILE.count("\n") - 1  # the empty body line after `d = connect_cloud(...)`
        await inline(client, uri, line, 4)
        await command(client, "lspAssist.escalate", uri, {"line": line, "character": 4})
        await inline(client, helper, 4, 4)
        await command(client, "lspAssist.stats")
    reqs = fake.model_requests()
    assert len(reqs) >= 2
    sent = "\n".join(json.dumps(r.body) + json.dumps(r.headers) for r in reqs)
    assert "connect_cloud" in sent  # the prompt did carry the file around the secrets
    first = json.dumps(reqs[0].body)
    assert "def make_session" in first, "no cross-file snippet of the helper in the first prompt"
    places = {
        "model requests": sent,
        "audit log": "\n".join(json.dumps(x) for x in audit_lines(tmp_path)),
        "server log": log_file.read_text(errors="replace") if log_file.exists() else "",
        "stats file": "\n".join(
            p.read_text(errors="replace") for p in (tmp_path / "cache").glob("stats*") if p.is_file()
        ),
    }
    assert places["server log"], "the server wrote no log"
    for where, text in places.items():
        for secret in PLANTED:
            assert secret not in text, f"a planted secret reached the {where}"
        assert "BEGIN RSA PRIVATE KEY-----\n" not in text.replace("\\n", "\n"), where


# --------------------------------------------------------------------------- 7. exclusions


async def test_ignored_files_make_no_model_request(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".lsp-assist-ignore").write_text("private/\n*.secret.py\n")
    async with lsp_session(tmp_path, options(fake)) as client:
        for name, lang in (
            (".env", "dotenv"),
            ("secrets.pem", "plaintext"),
            ("private/notes.py", "python"),
            ("db.secret.py", "python"),
        ):
            uri = doc_uri(tmp_path, name)
            open_doc(client, uri, "def add(a, b):\n    \n", language=lang)
            assert texts(await inline(client, uri, 1, 4)) == [], name
            out = await command(client, "lspAssist.escalate", uri, {"line": 1, "character": 4})
            assert out["text"] == "", name
        assert fake.model_requests() == []
        # A normal file still works (the test can fail).
        assert await ask(client, tmp_path, 0) == ["return a + b"]
        assert len(fake.model_requests()) == 1


# --------------------------------------------------------------------------- 8. endpoints


def trap_env(tmp_path: Path, **extra: str) -> tuple[dict[str, str], Path]:
    """Run the server with `tests/e2e/nonet` on its path: any non-loopback lookup is recorded
    in the returned file and refused, so no test depends on (or touches) the network."""
    trap = tmp_path / "net-trap.txt"
    env = isolated_env(tmp_path, LSP_ASSIST_NET_TRAP=str(trap), **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent / "nonet"), env["PYTHONPATH"]])
    return env, trap


def trapped(trap: Path) -> list[str]:
    return trap.read_text().split() if trap.exists() else []


async def test_plain_http_key_to_remote_host_is_refused(tmp_path: Path, fake: FakeModelServer) -> None:
    env, trap = trap_env(tmp_path, TEST_GOV_KEY="sk-test-0123456789abcdef")
    opts = options(fake)
    opts["tiers"]["fast"] = _tier("http://example.com/v1", FAST, api_key_env="TEST_GOV_KEY")
    async with lsp_session(tmp_path, opts, env=env) as client:
        assert await wait_until(lambda: "example.com" in shown(client)), shown(client)
        text = shown(client)
        assert "tiers.fast" in text and "http" in text.lower()
        assert "sk-test-0123456789abcdef" not in text
        await ask(client, tmp_path, 0)  # answered by the offline engine
        await asyncio.sleep(0.3)  # room for a (wrong) background warm-up to fire
    assert "example.com" not in trapped(trap)
    assert calls(fake, FAST) == 0
    assert [r for r in audit_lines(tmp_path) if r["tier"] == "fast"] == []


async def test_host_outside_allowed_hosts_is_refused(tmp_path: Path, fake: FakeModelServer) -> None:
    env, trap = trap_env(tmp_path)
    fake.default = Script(text="return a + b\n")
    opts = options(fake, governance={"allowed_hosts": ["api.company.example"]})
    opts["tiers"]["quality"] = _tier("https://elsewhere.example.net/v1", QUALITY)
    # An allowed remote tier: its warm-up does try the network, which shows the trap works.
    opts["tiers"]["backup"] = _tier("https://api.company.example/v1", BACKUP)
    async with lsp_session(tmp_path, opts, env=env) as client:
        assert await wait_until(lambda: "elsewhere.example.net" in shown(client)), shown(client)
        assert "tiers.quality" in shown(client)
        assert "tiers.backup" not in shown(client)
        # Loopback (the fast tier) stays allowed by design.
        assert await ask(client, tmp_path, 0) == ["return a + b"]
        uri = doc_uri(tmp_path, "m0.py")
        await command(client, "lspAssist.escalate", uri, {"line": 1, "character": 4})
        assert await wait_until(lambda: "api.company.example" in trapped(trap))
    assert "elsewhere.example.net" not in trapped(trap)
    assert calls(fake, QUALITY) == 0
    assert [r for r in audit_lines(tmp_path) if r["tier"] == "quality"] == []  # no model call


# --------------------------------------------------------------------------- 9. audit

AUDIT_FIELDS = {
    "ts", "environment", "feature", "tier", "provider", "model", "endpoint_host", "request_bytes",
    "prompt_tokens", "completion_tokens", "stages_ms", "outcome", "workspace",
}  # fmt: skip


async def test_audit_one_line_per_model_call_private_and_without_code(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    async with lsp_session(tmp_path, options(fake)) as client:
        for i in range(3):
            await ask(client, tmp_path, i)
        fake.push(Script(fault="http500"))
        fake.push(Script(fault="http500"))
        await ask(client, tmp_path, 3)  # two failed calls, then offline
        uri = doc_uri(tmp_path, "m0.py")
        await command(client, "lspAssist.escalate", uri, {"line": 1, "character": 4})
        n = len(fake.model_requests())
        assert n == 6
        assert await wait_until(lambda: len(audit_lines(tmp_path)) >= n)
    records = audit_lines(tmp_path)
    assert len(records) == n
    for rec in records:
        assert AUDIT_FIELDS <= set(rec), AUDIT_FIELDS - set(rec)
        assert rec["endpoint_host"] == "127.0.0.1"
        assert rec["request_bytes"] > 0
        assert "ttft" in rec["stages_ms"] or rec["outcome"] == "error"
        assert "/" not in rec["workspace"] and str(tmp_path) not in json.dumps(rec)
    assert sorted(r["feature"] for r in records).count("escalation") == 1
    assert sum(1 for r in records if r["outcome"] == "error") == 2
    raw = (tmp_path / "cache" / "audit" / "audit.jsonl").read_text()
    for code in ("def add_", "return a + b", "a, b"):
        assert code not in raw
    mode = stat.S_IMODE((tmp_path / "cache" / "audit" / "audit.jsonl").stat().st_mode)
    assert mode == 0o600, oct(mode)


# --------------------------------------------------------------------------- 10. usage report


async def test_usage_report_from_a_real_run(
    tmp_path: Path, fake: FakeModelServer, backup: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=15, tokens_per_s=400)
    backup.default = Script(text="return 'from backup'\n", ttft_ms=25)
    # The user config (read by the server and by `lsp-assist usage`) carries the price table.
    (tmp_path / "no-user-config.toml").write_text(
        f'[governance.prices."{FAST}"]\nprompt_per_1k = 0.15\ncompletion_per_1k = 0.6\n'
        f'[governance.prices."{QUALITY}"]\nprompt_per_1k = 2.5\ncompletion_per_1k = 10.0\n'
    )
    async with lsp_session(tmp_path, options(fake, backup)) as client:
        for i in range(5):
            await ask(client, tmp_path, i)
        fake.push(Script(fault="http500"))
        fake.push(Script(fault="http500"))
        await ask(client, tmp_path, 5)  # falls back to the backup tier
        uri = doc_uri(tmp_path, "m0.py")
        fake.push(Script(text="total = a + b\n    return total\n", ttft_ms=40))
        await command(client, "lspAssist.escalate", uri, {"line": 1, "character": 4})
        n = len(fake.model_requests()) + len(backup.model_requests())
        assert await wait_until(lambda: len(audit_lines(tmp_path)) >= n)
    audit = tmp_path / "cache" / "audit" / "audit.jsonl"
    html = tmp_path / "usage.html"
    env = isolated_env(tmp_path)
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "lsp_assist", "usage", "--audit", str(audit), "--html", str(html)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    report = proc.stdout
    for word in ("completion", "escalation", "fast", "quality", "backup", FAST, BACKUP, QUALITY):
        assert word in report, word
    rows = {line.split()[0]: line.split() for line in report.splitlines() if line.strip()}
    assert rows[BACKUP][3] == "100.0%", rows[BACKUP]  # the backup call was a fallback for fast
    assert float(rows[QUALITY][6]) > 0, rows[QUALITY]  # cost from the price table
    page = html.read_text()
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "<svg" in page and "http://" not in page.replace("http://www.w3.org", "")
    if os.environ.get("LSP_ASSIST_SAVE_USAGE_SAMPLE"):
        out = ROOT / "fixtures" / "usage"
        out.mkdir(parents=True, exist_ok=True)
        (out / "sample-report.txt").write_text(report.replace(str(tmp_path), "<tmp>"))
        (out / "sample-report.html").write_text(page)


# --------------------------------------------------------------------------- escalation


async def test_escalation_reports_progress_and_recompute_bypasses_the_cache(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    async with lsp_session(tmp_path, options(fake)) as client:
        uri = doc_uri(tmp_path, "m0.py")
        open_doc(client, uri, source(0))
        fake.push(Script(text="total = a + b\n    return total\n"))
        first = await command(client, "lspAssist.escalate", uri, {"line": 1, "character": 4})
        assert first["text"].startswith("total = a + b")
        assert calls(fake, QUALITY) == 1
        again = await command(client, "lspAssist.escalate", uri, {"line": 1, "character": 4})
        assert again["text"] == first["text"]
        assert calls(fake, QUALITY) == 1  # served from the cache
        fake.push(Script(text="result = a + b\n    return result\n"))
        fresh = await command(client, "lspAssist.recompute", uri, {"line": 1, "character": 4})
        assert calls(fake, QUALITY) == 2  # recompute: a second model call
        assert fresh["text"].startswith("result = a + b")
        assert texts(await inline(client, uri, 1, 4))[0].startswith("result = a + b")
        assert await wait_until(lambda: len(client.progress_reports) >= 2)
        for reports in client.progress_reports.values():
            kinds = [type(r).__name__ for r in reports]
            assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd", kinds
