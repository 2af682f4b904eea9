"""`lsp-assist bench` as a user runs it: every scenario's row printed with a figure and the
floor, against lsp-assist, and against tabby-agent when it is installed. No time is asserted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_assist.bench.recipes import find_tabby_agent
from lsp_assist.bench.scenarios import FOLLOWS, MISSES, SCENARIOS
from lsp_assist.bench.table import LABEL_W
from tests.e2e.conftest import ROOT, isolated_env

FAST = ["--n", "3", "--bursts", "1", "--ttft-ms", "20", "--tokens-per-s", "1000"]
FIGURE = re.compile(r"\d+\.\d+ \(\d+\.\d+\)")  # p50 (p90)
FLOOR = re.compile(r"\d+\.\d+ / \d+\.\d+\*?$")  # the model's first line / full stream


def bench(tmp_path: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "lsp_assist", "bench", *FAST, *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        env=isolated_env(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def rows(out: str, scenario: str) -> list[str]:
    """The rows under a scenario's heading."""
    lines = out.splitlines()
    start = lines.index(scenario) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def check_table(out: str, servers: list[str]) -> None:
    head = next(line for line in out.splitlines() if line.split()[-1:] == ["floor"])
    assert head.split() == [*servers, "floor"]
    for scenario in SCENARIOS:
        under = rows(out, scenario)
        answer = next(r for r in under if r[:LABEL_W].strip() in ("answer", "the last key's answer"))
        assert len(FIGURE.findall(answer)) == len(servers), (scenario, answer)
        if scenario not in FOLLOWS:
            assert FLOOR.search(answer.rstrip()), (scenario, answer)
        if scenario in MISSES:
            for label in ("before the model call", "after the needed token", "server overhead"):
                row = next(r for r in under if label in r)
                assert len(FIGURE.findall(row)) == len(servers), (scenario, row)
        else:
            calls = next(r for r in under if "model calls" in r)
            assert len(re.findall(r"\d+\.\d\d \(\d+\)", calls)) == len(servers), (scenario, calls)


def test_bench_prints_every_scenario_for_lsp_assist(tmp_path: Path) -> None:
    out = bench(tmp_path, "--servers", "lsp-assist")
    check_table(out, ["lsp-assist"])
    assert "not run" not in out


def test_bench_runs_a_server_given_by_its_command(tmp_path: Path) -> None:
    # lsp-assist again, as a user adds any server: its command and the model URL filled in.
    init = (
        '{"tiers": {"fast": {"provider": "openai", "base_url": "{base_url}", "model": "m"},'
        ' "quality": {"provider": "offline"}, "backup": {"provider": "offline"}}}'
    )
    out = bench(
        tmp_path,
        "--servers",
        "",
        "--server",
        f"mine={sys.executable} -m lsp_assist serve",
        "--api",
        "openai",
        "--init-options",
        init,
    )
    check_table(out, ["mine"])


def test_bench_beside_tabby_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    if find_tabby_agent() is None:
        pytest.skip("tabby-agent is not installed (sh benchmarks/setup_peers.sh)")
    out = bench(tmp_path)
    check_table(out, ["lsp-assist", "tabby-agent"])
