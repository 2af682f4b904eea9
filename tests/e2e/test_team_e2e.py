"""Issue 15 end to end: three real `lsp-assist serve` processes share one real Redis.

Each process has its own cache dir (so its own local quota file): only the team store
connects them. The fake model counts the model calls that really happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import doc_uri, inline, isolated_env, lsp_session, open_doc
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.fakes.redis_server import RedisServer

PROCESSES = 3
MODEL = "team-coder"


def options(fake: FakeModelServer, redis: RedisServer, governance: dict[str, Any]) -> dict[str, Any]:
    tier = {
        "provider": "openai",
        "base_url": fake.base_url,
        "model": MODEL,
        "first_token_timeout_ms": 2000,
        "total_timeout_ms": 4000,
    }
    return {
        "tiers": {"fast": tier, "quality": tier, "backup": {"provider": "offline"}},
        "completion": {"deadline_ms": 5000},
        "governance": governance,
        "team": {
            "store": redis.url,
            "business_line": "payments",
            "timeout_ms": 300,
            "attribution": {"headers": {"X-Business-Line": "{business_line}", "X-Feature": "{feature}"}},
        },
    }


def calls(fake: FakeModelServer) -> int:
    return sum(1 for r in fake.model_requests() if (r.body or {}).get("model") == MODEL)


def change(client: LanguageClient, uri: str, version: int, line: int, col: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=line, character=col),
                        end=types.Position(line=line, character=col),
                    ),
                    text=text,
                )
            ],
        )
    )


async def typing(client: LanguageClient, root: Path, tag: str, docs: int, keys: int = 4) -> list[bool]:
    """Type a few keys in each of `docs` new files, asking for ghost text on every key as an
    editor does, then pause (the last request of a burst outlives the debounce).
    Returns, per request, whether it was answered before its deadline."""
    answered: list[bool] = []
    for d in range(docs):
        uri = doc_uri(root, f"{tag}_{d}.py")
        line = f"def {tag}_{d}(a, b):"
        open_doc(client, uri, line + "\n    \n")
        col = 4
        for k in range(keys):
            change(client, uri, k + 2, 1, col, "xyzw"[k])
            col += 1
            try:
                await inline(client, uri, 1, col, invoked=k == keys - 1, timeout=8)
                answered.append(True)
            except asyncio.TimeoutError:
                answered.append(False)
            await asyncio.sleep(0.03)
    return answered


@contextlib.asynccontextmanager
async def servers(tmp_path: Path, opts: dict[str, Any]) -> Any:
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for i in range(PROCESSES):
            d = tmp_path / f"p{i}"
            d.mkdir()
            env = isolated_env(d, LSP_ASSIST_LOG_FILE=str(d / "server.log"), LSP_ASSIST_USER=f"dev{i}")
            clients.append(await stack.enter_async_context(lsp_session(d, opts, env=env)))
        yield clients


async def test_daily_quota_lets_exactly_n_calls_through_across_processes(
    tmp_path: Path, fake: FakeModelServer, redis_server: RedisServer
) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=30)
    quota = 7
    opts = options(fake, redis_server, {"quotas": {"completion": {"requests_per_day": quota}}})
    # Without prefetch every admitted call is one a request waits for, so none is dropped
    # before it is sent (a call the store admitted counts against the quota either way).
    opts["completion"]["prefetch"] = False
    async with servers(tmp_path, opts) as clients:
        results = await asyncio.gather(
            *(typing(c, tmp_path / f"p{i}", f"q{i}", docs=5) for i, c in enumerate(clients))
        )
        await asyncio.to_thread(
            fake.wait_for, lambda st: st.streams_completed + st.streams_aborted >= calls(fake)
        )
    assert all(all(r) for r in results), "every request is answered before its deadline"
    # Locally each process would allow 7 (21 in all); the store admits exactly 7 ...
    day = time.strftime("%Y-%m-%d", time.gmtime())
    counted = redis_server.command("HGET", f"lsp-assist:dev:q:{day}:feature:completion", "r")
    assert counted.split(b"\r\n")[1] == str(quota).encode()
    # ... and those are the model calls that happened.
    assert calls(fake) == quota
    # Each call says who made it, as a gateway reads it (OpenAI `user`, the header map).
    reqs = [r for r in fake.model_requests() if (r.body or {}).get("model") == MODEL]
    assert {(r.body or {}).get("user") for r in reqs} <= {f"dev{i}" for i in range(PROCESSES)}
    assert all(r.headers.get("x-business-line") == "payments" for r in reqs)
    assert all(r.headers.get("x-feature") == "completion" for r in reqs)


async def test_rate_limit_holds_across_processes(
    tmp_path: Path, fake: FakeModelServer, redis_server: RedisServer
) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=10)
    rpm = 6  # bucket of 6, refilled at 0.1 per second
    opts = options(fake, redis_server, {"rate_limits": {"default": {"requests_per_minute": rpm}}})
    opts["completion"]["prefetch"] = False
    async with servers(tmp_path, opts) as clients:
        t0 = time.monotonic()
        await asyncio.gather(*(typing(c, tmp_path / f"p{i}", f"r{i}", docs=4) for i, c in enumerate(clients)))
        elapsed = time.monotonic() - t0
    allowed = rpm + int(elapsed * rpm / 60.0) + 1
    # 12 invoked requests (plus typing) each wanted a call; per-process buckets would allow 18.
    assert rpm <= calls(fake) <= allowed


async def test_redis_killed_mid_run_then_back(
    tmp_path: Path, fake: FakeModelServer, redis_server: RedisServer
) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=20)
    quota = 3
    opts = options(fake, redis_server, {"quotas": {"completion": {"requests_per_day": quota}}})
    opts["completion"]["prefetch"] = False
    async with servers(tmp_path, opts) as clients:

        async def ask(round_: str, docs: int) -> list[bool]:
            res = await asyncio.gather(
                *(
                    typing(c, tmp_path / f"p{i}", f"{round_}{i}", docs=docs, keys=1)
                    for i, c in enumerate(clients)
                )
            )
            return [a for r in res for a in r]

        # 1. Store up: 3 calls in total, then the shared quota refuses.
        assert all(await ask("a", 2))
        assert calls(fake) == quota
        # 2. Store killed: every request is still answered; each process's own local quota
        #    (3 per day, counted from zero: the store held the count) applies.
        redis_server.kill()
        assert all(await ask("b", 4))
        assert calls(fake) == quota + PROCESSES * quota
        # 3. Store back (empty, as a restarted cache is): shared limits apply again.
        redis_server.start()
        # The reconnect probe runs every 0.5 s: wait (bounded) until each process has seen
        # the store come back rather than sleeping a guess that a loaded machine outlasts.
        for _ in range(300):
            if all(any("reachable again" in m.message for m in c.messages) for c in clients):
                break
            await asyncio.sleep(0.05)
        before = calls(fake)
        assert all(await ask("c", 2))
        assert calls(fake) - before == quota
        # The user is told, once per change, with the store's address and what applies now.
        where = f"127.0.0.1:{redis_server.port}"
        for c in clients:
            shown = [m.message for m in c.messages if "team store" in m.message]
            assert len(shown) == 2, shown
            assert where in shown[0] and "unreachable" in shown[0] and "own quotas" in shown[0]
            assert where in shown[1] and "reachable again" in shown[1]
    for i in range(PROCESSES):
        log = (tmp_path / f"p{i}" / "server.log").read_text()
        assert log.count("team store unreachable") == 1, "the outage is reported once per process"
        assert log.count("team store reachable again") == 1


def test_doctor_reports_the_team_store(
    tmp_path: Path, fake: FakeModelServer, redis_server: RedisServer
) -> None:
    from tests.e2e.test_cli import openai_config, run, write_config

    body = (
        openai_config(fake.base_url) + f'\n[team]\nstore = "{redis_server.url}"\nbusiness_line = "payments"\n'
    )
    env = write_config(tmp_path, body)
    out = run(["doctor", "--workspace", str(tmp_path)], env)
    assert f"team store: redis://127.0.0.1:{redis_server.port}/0 reachable" in out.stdout, out.stdout
    redis_server.kill()
    down = run(["doctor", "--workspace", str(tmp_path)], env)
    assert "UNREACHABLE (local limits apply" in down.stdout and down.returncode == 1
    plain = write_config(
        tmp_path, openai_config(fake.base_url) + '\n[team]\nstore = "redis://10.9.9.9:6379/0"\n'
    )
    bad = run(["doctor", "--workspace", str(tmp_path)], plain)
    assert "must use TLS" in bad.stdout and "NOT IN USE" in bad.stdout
