"""Headless Neovim reports suggestion events: shown when the extmark is drawn, a word
accepted, dismissed with <C-]>, accepted whole with <Tab>, typed over; the server follows the
accepted text through an edit, and `lsp-assist usage --json` shows the counts and the
retained characters (checkpoints on the server's scaled clock, LSP_ASSIST_TIME_SCALE)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.test_nvim_features import FAST_LINE, FAST_MODEL, HEADER, TYPED, _answer, _run
from tests.fakes.fake_model_server import FakeModelServer

pytestmark = pytest.mark.nvim

AFTER_WORD = "total = compute_total"
NEW_LINE = "grand = compute_total(prices, rate=0.3)"  # what the model offers on an empty line
CUT = "rate="


def test_events_and_retention_from_a_real_neovim(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = _answer({FAST_MODEL: [NEW_LINE, FAST_LINE]})
    row = 3
    cut_from = FAST_LINE.index(CUT)
    _run(
        tmp_path,
        fake,
        "events",
        HEADER + TYPED + "\n",
        {
            "row": row,
            "ghost": FAST_LINE.removeprefix(TYPED),
            "after_word": AFTER_WORD,
            "type_after_dismiss": "(",
            "ghost_after_edit": FAST_LINE.removeprefix(AFTER_WORD + "("),
            "full_line": FAST_LINE,
            "new_line_ghost": NEW_LINE,
            "type_over": "x",
            "cut_from": cut_from,
            "cut_to": cut_from + len(CUT),
            "after_cut": FAST_LINE.replace(CUT, ""),
            "hold_until_file": str(tmp_path / "cache" / "audit" / "audit.jsonl"),
            "hold_until_text": '"checkpoint_s":600',
            "hold_until_count": 2,  # the word's accept and the whole line's
        },
        # The server's retention clock runs 100x: the 10 min checkpoint 6 s after an accept,
        # long after the edit; the 30 s and 2 min ones may come before or after it.
        extra_env={"LSP_ASSIST_TIME_SCALE": "0.01"},
        timeout_s=90,
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "LSP_ASSIST_CACHE_DIR": str(tmp_path / "cache"),
        "LSP_ASSIST_CONFIG": str(tmp_path / "none.toml"),
        "LSP_ASSIST_POLICY": str(tmp_path / "none.toml"),
        "HOME": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, "-m", "lsp_assist", "usage", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)["overall"]["suggestions"]
    word = len(AFTER_WORD) - len(TYPED)  # "ute_total"
    whole = len(FAST_LINE) - len(AFTER_WORD + "(")  # "prices, rate=0.2)"
    assert (s["shown"], s["accepted"], s["accepted_partial"], s["accepted_whole"]) == (3, 2, 1, 1), s
    assert (s["dismissed"], s["typed_over"]) == (1, 1), s
    assert s["accepted_chars"] == word + whole
    kept = word + whole - len(CUT)
    assert s["retained_chars"]["10m"] == kept, s
    assert {s["retained_chars"]["30s"], s["retained_chars"]["2m"]} <= {kept, word + whole}, s
