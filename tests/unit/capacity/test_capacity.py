"""The capacity planner against a loopback fake model with a concurrency cap: it finds the knee."""

from __future__ import annotations

import json
import subprocess
import sys

from lsp_assist.capacity.report import format_report
from lsp_assist.capacity.sim import LevelReport, Workload, endpoint_options, find_knee, run_level
from tests.fakes.fake_model_server import FakeModelServer, Script

ANSWER = 'return total * rate\n    log.info("done")\n'


async def test_finds_the_knee_of_a_capped_endpoint() -> None:
    cap = 2
    with FakeModelServer(max_concurrent=cap) as fake:
        fake.default = Script(text=ANSWER, ttft_ms=150, tokens_per_s=100)
        opts = endpoint_options(fake.base_url, "fake")
        light = await run_level(1, Workload(4.0, opts, seed=3))
        heavy = await run_level(10, Workload(4.0, opts, seed=3))
        stats = fake.stats
    assert light.model_calls > 0 and light.keystrokes > 5
    assert light.tokens_in_per_s > 0 and light.tokens_out_per_s > 0
    assert sum(light.saved.values()) + sum(heavy.saved.values()) > 0  # typing-through / cache
    assert stats.max_active <= cap and stats.queued > 0, "the fake really capped concurrency"
    assert find_knee([light], cap) is None
    knee = find_knee([light, heavy], cap)
    assert knee is heavy
    assert heavy.ttft_p95_ms > light.ttft_p95_ms
    text = format_report([light, heavy], cap)
    assert "knee: at 10 developers" in text


def test_no_knee_when_the_endpoint_keeps_up() -> None:
    def lv(n: int, ttft: float, streams: float) -> LevelReport:
        saved = {"cache": 1, "typing_through": 2, "attached": 0}
        return LevelReport(n, 10, 100, 100, 50, 5, 2, 100, 20, 40, 3, streams, ttft, ttft, 200, 250,
                           saved, 10, 0, 0, 10, 2, 1.0)  # fmt: skip

    assert find_knee([lv(1, 100, 0.2), lv(5, 120, 1.0), lv(10, 150, 2.0)], 8) is None
    assert find_knee([lv(1, 100, 0.2), lv(5, 120, 1.0), lv(10, 400, 2.0)], 8) is not None
    assert find_knee([lv(1, 100, 0.2), lv(20, 120, 8.0)], 8) is not None


def test_cli_prints_json_levels(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with FakeModelServer() as fake:
        fake.default = Script(text=ANSWER, ttft_ms=20)
        env = {
            "LSP_ASSIST_CONFIG": str(tmp_path / "none.toml"),
            "LSP_ASSIST_POLICY": str(tmp_path / "p.toml"),
        }
        out = subprocess.run(
            [sys.executable, "-m", "lsp_assist", "capacity", "--endpoint", fake.base_url, "--model", "fake",
             "--developers", "2", "--duration", "2", "--json"],
            capture_output=True, text=True, timeout=90, env={**__import__("os").environ, **env},
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    (level,) = data["levels"]
    assert level["developers"] == 2 and level["model_calls"] > 0
