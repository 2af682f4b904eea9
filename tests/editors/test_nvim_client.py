"""Headless Neovim 0.11: the rough edges a user hit (issue 14), each checked in the real editor.

Ghost colour without truecolor, `hl_mode = "replace"`, the ghost only in the window with the
cursor, <C-]> while a request is in flight, and the 0.12 branch (a stubbed
`vim.lsp.inline_completion`: no 0.12 binary is installable here) where <M-Right>, <M-l> and
<C-]> act on the built-in renderer and suggestionReady never draws a second ghost.
Scenarios live in nvim_scenarios.lua; the real server runs against the loopback fake model.
"""

from __future__ import annotations

import importlib.util
import re
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.editors.test_nvim_features import FAST_LINE, FAST_MODEL, HEADER, TYPED, _answer, _run, fake
from tests.fakes.fake_model_server import FakeModelServer

pytestmark = pytest.mark.nvim

__all__ = ["fake"]  # the fixture, re-used from test_nvim_features

ROW = 3
GHOST = FAST_LINE.removeprefix(TYPED)


def test_ghost_colour_replace_mode_and_only_in_the_cursor_window(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = _answer({FAST_MODEL: [FAST_LINE]})
    r = _run(tmp_path, fake, "window", HEADER + TYPED + "\n", {"row": ROW, "ghost": GHOST})
    # Explicit colours for 256-colour terminals and truecolor, not a link to Comment (whose
    # 0.11 default has only a truecolor value).
    assert "link" not in r["hl_raw"], r["hl_raw"]
    assert isinstance(r["hl"].get("ctermfg"), int) and isinstance(r["hl"].get("fg"), int), r["hl"]
    # The ghost keeps its own colours instead of combining with the bracket-match highlight.
    assert r["details"]["hl_mode"] == "replace", r["details"]
    assert r["details"]["virt_text"][0][1] == "LspAssistGhost"
    # Two windows show the buffer; the ghost is drawn in one of them only.
    assert r["windows"] == 2
    rows_with_line = [row for row in r["screen"] if TYPED in row]
    assert len(rows_with_line) == 2, r["screen"]
    assert sum(FAST_LINE in row for row in rows_with_line) == 1, rows_with_line


def test_dismiss_while_the_request_is_in_flight(tmp_path: Path, fake: FakeModelServer) -> None:
    script = _answer({FAST_MODEL: [FAST_LINE]})
    script.ttft_ms = 700  # the reply comes after <C-]>
    fake.default = script
    r = _run(
        tmp_path,
        fake,
        "inflight",
        HEADER + TYPED + "\n",
        {"row": ROW, "press_after_ms": 300, "watch_ms": 1800},
    )
    # (Under load <C-]> may even come before the request left: either way nothing may show.)
    assert r["after"]["marks"] == [], r["after"]
    assert r["after"]["mode"] == "i"
    assert r["after"]["lines"][ROW] == TYPED  # <C-]> inserted nothing
    assert r["pending_after"] is False


def test_builtin_renderer_branch_with_a_stubbed_inline_completion(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = _answer({FAST_MODEL: [FAST_LINE]})
    r = _run(
        tmp_path,
        fake,
        "builtin",
        HEADER + TYPED + "\n",
        {
            "row": ROW,
            "ghost": GHOST,
            "after_word": "total = compute_total",
            "ghost_after_word": "(prices, rate=0.2)",
            "after_line": FAST_LINE,
        },
    )
    # <M-Right> / <M-l> took the shown item from the built-in and inserted a word, then the line.
    assert r["after_word"]["lines"][ROW] == "total = compute_total"
    assert r["after_word"]["cursor"] == [ROW + 1, len("total = compute_total")]
    assert r["after_line"]["lines"][ROW] == FAST_LINE
    # <C-]> hid the built-in's item without inserting it.
    assert r["after_dismiss"]["lines"][ROW] == FAST_LINE
    assert r["get_calls"][:3] == ["on_accept", "on_accept", "on_accept"], r["get_calls"]
    # suggestionReady made the built-in ask again; the plugin drew nothing of its own.
    assert r["refreshes_after"] > r["refreshes_before"]
    assert r["after_ready"]["marks"] == [] and r["own_marks_ever"] == 0


def test_unreachable_model_is_named_once_at_the_first_failure(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"  # closed again: refused
    wanted = f"cannot connect to {url}"
    endpoint = SimpleNamespace(base_url=url)
    r = _run(tmp_path, endpoint, "unreachable", HEADER + TYPED + "\n", {"row": ROW, "wanted": wanted})  # type: ignore[arg-type]
    assert len(r["named"]) == 1, r["notes"]  # typing on brings no second message
    # Named at the first request's failure, not after a few more requests.
    assert r["named"][0]["requests"] == 1, r["notes"]
    assert r["named"][0]["level"] == 3  # vim.log.levels.WARN
    assert r["statusline"].startswith("⚠ ") and wanted in r["statusline"], r["statusline"]


def test_warmup_shows_progress_then_an_honest_summary(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = _answer({FAST_MODEL: [FAST_LINE]})
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    r = _run(tmp_path, fake, "warmup", HEADER, {"row": 0}, tiers={"quality": {"base_url": dead}})
    warm = r["warm"]
    assert warm["result"]["endpoints"]["fast"] == "ok"
    assert warm["result"]["endpoints"]["quality"] == f"cannot connect to {dead}"
    assert warm["level"] == 3, warm  # WARN: not "cache warmed" when a tier is unreachable
    assert "done with problems" in warm["msg"] and f"quality: cannot connect to {dead}" in warm["msg"]
    assert "fast: ok" in warm["msg"] and "files indexed" in warm["msg"]
    # While it ran, the status item showed the server's $/progress.
    assert any(line.startswith("lsp-assist warming up") for line in r["status_seen"]), r["status_seen"]
    assert not r["statusline"].startswith("lsp-assist warming up")  # and cleared it at the end


NO_LLAMA = importlib.util.find_spec("llama_cpp") is None


@pytest.mark.skipif(NO_LLAMA, reason="the 'local' extra is not installed")
@pytest.mark.model
def test_new_user_on_the_embedded_model_sees_the_load_then_its_ghost(tmp_path: Path) -> None:
    # The README's lazy.nvim spec (tiers.fast.provider = "local"), a fresh models directory
    # (the model is assembled and loaded), and keys typed at once, before the load ends.
    init = {"tiers": {"fast": {"provider": "local"}}, "cache": {"dir": str(tmp_path / "cache")}}
    endpoint = SimpleNamespace(base_url="")
    r = _run(
        tmp_path,
        endpoint,  # type: ignore[arg-type]
        "newuser",
        "def add(a, b):\n    return a\n",
        {"row": 1},
        init=init,
        extra_env={"LSP_ASSIST_MODELS_DIR": str(tmp_path / "models"), "LSP_ASSIST_DEADLINE_MS": "90000"},
        timeout_s=120,
    )
    # The load was shown in the status item, then the model's suggestion came unasked.
    assert any("loading the local model" in line for line in r["status_seen"]), r["status_seen"]
    assert r["ready_notes"] >= 1
    assert r["ghost"].strip(), r["after"]
    # Then its status update (written after the reply, so it may come just after the ghost;
    # the scenario waits up to 5 s for it): the tier and the request's real latency.
    assert r["latency_notes_after_ready"] >= 1, r["status_notes"]
    assert re.fullmatch(r"lsp-assist fast ([1-9][0-9]*|[0-9]\.[0-9])ms", r["statusline"]), r["statusline"]
