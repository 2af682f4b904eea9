"""Issue 13 over real stdio: stale versions, symlinks around exclusion, default endpoints.

Each test starts the real `lsp-assist serve` against the loopback fake model and checks
what the fake received (the prompt) or, for remote hosts, what the network trap saw.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import doc_uri, inline, lsp_session, open_doc, openai_tiers, texts
from tests.e2e.test_governance_e2e import shown, trap_env, trapped, wait_until
from tests.fakes.fake_model_server import FakeModelServer, Script, prompt_of


def _opts(fake: FakeModelServer, **governance: Any) -> dict[str, Any]:
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False, "enrichment": False}
    opts["governance"] = governance
    return opts


def _change(client: LanguageClient, uri: str, version: int, change: Any) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[change],
        )
    )


def prompts(fake: FakeModelServer) -> list[str]:
    return [prompt_of(r.body) + str((r.body or {}).get("suffix", "")) for r in fake.model_requests()]


# --------------------------------------------------------------------------- stale didChange


async def test_a_late_full_text_change_for_an_older_version_is_not_applied(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="1\n")
    async with lsp_session(tmp_path, _opts(fake)) as client:
        uri = doc_uri(tmp_path, "stale.py")
        open_doc(client, uri, "a = 1\n")
        _change(client, uri, 6, types.TextDocumentContentChangeWholeDocument(text="current = 6\n"))
        # Version 5 arrives after 6 (a client that reorders, or a replay).
        _change(client, uri, 5, types.TextDocumentContentChangeWholeDocument(text="rolled_back = 5\n"))
        # The client's next edit is computed against version 6's text: append "x = " on line 1.
        pos = types.Position(line=1, character=0)
        _change(
            client,
            uri,
            7,
            types.TextDocumentContentChangePartial(range=types.Range(start=pos, end=pos), text="x = "),
        )
        assert texts(await inline(client, uri, 1, 4)) == ["1"]
    sent = prompts(fake)
    assert sent and "current = 6\nx = " in sent[-1]
    assert all("rolled_back" not in p for p in sent)


# --------------------------------------------------------------------------- symlinks

HIDDEN = "payroll_marker_q7"
VISIBLE = "tool_marker_k2"
MAIN = "def run():\n    s = make_session()\n    t = make_tool()\n    \n"


async def test_symlinks_to_excluded_files_get_no_call_and_give_no_context(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return s\n")
    ws = tmp_path / "ws"
    (ws / "private").mkdir(parents=True)
    (ws / ".lsp-assist-ignore").write_text("private/\n")
    env_text = "def add(a, b):\n    \n"
    (ws / ".env.production").write_text(env_text)
    (ws / "settings.py").symlink_to(ws / ".env.production")
    helper = f'def make_session():\n    """{HIDDEN}"""\n    return 1\n'
    (ws / "private" / "session.py").write_text(helper)
    (ws / "session_helper.py").symlink_to(ws / "private" / "session.py")
    tool = f'def make_tool():\n    """{VISIBLE}"""\n    return 2\n'
    (ws / "tools.py").write_text(tool)
    async with lsp_session(tmp_path, _opts(fake)) as client:
        link_uri = doc_uri(tmp_path, "settings.py")
        open_doc(client, link_uri, env_text)
        assert texts(await inline(client, link_uri, 1, 4)) == []
        assert fake.model_requests() == []
        # Tabs: the link into the ignored directory, a normal helper, then the file edited.
        open_doc(client, doc_uri(tmp_path, "session_helper.py"), helper)
        open_doc(client, doc_uri(tmp_path, "tools.py"), tool)
        uri = doc_uri(tmp_path, "main.py")
        open_doc(client, uri, MAIN)
        assert texts(await inline(client, uri, 3, 4)) == ["return s"]
    sent = prompts(fake)
    assert len(sent) == 1
    assert VISIBLE in sent[0], "the normal sibling tab gave no context (the test could not fail)"
    assert HIDDEN not in sent[0]


# --------------------------------------------------------------------------- default endpoints


async def test_a_default_provider_url_outside_allowed_hosts_is_refused_and_shown(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    env, trap = trap_env(tmp_path, TEST_ANTHROPIC_KEY="test-key-not-real")
    opts = _opts(fake, allowed_hosts=["api.example.com"])
    opts["tiers"]["quality"] = {
        "provider": "anthropic",
        "model": "claude-haiku-4-5",
        "api_key_env": "TEST_ANTHROPIC_KEY",
    }
    opts["tiers"]["backup"] = {"provider": "mistral", "model": "codestral-latest"}
    async with lsp_session(tmp_path, opts, env=env) as client:
        assert await wait_until(lambda: "codestral.mistral.ai" in shown(client)), shown(client)
        text = shown(client)
        assert "api.anthropic.com" in text and "allowed_hosts" in text and "tiers.quality" in text
        assert "test-key-not-real" not in text
        uri = doc_uri(tmp_path, "m.py")
        open_doc(client, uri, "def add(a, b):\n    \n")
        await asyncio.wait_for(
            client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="lspAssist.escalate", arguments=[uri, {"line": 1, "character": 4}]
                )
            ),
            timeout=20,
        )
        await asyncio.sleep(0.3)  # room for a (wrong) warm-up to fire
    seen = trapped(trap)
    assert "api.anthropic.com" not in seen and "codestral.mistral.ai" not in seen, seen


# --------------------------------------------------------------------------- secrets in tabs

AZ_KEY = "q3Vx" + "Zm9vYmFyYmF6cXV4" * 5 + "Kp7Lw9Rt2Yz4Nb6Mc8Vd1Fg3Hj5Qs0Ux=="
HEX_KEY = "7c1e21b048733302b26c953b4f1a193a7613b661964e5e22b9efbe88121bddee"
HELPERS = {
    "blob_helper.py": (
        f'def make_blob_client(conn="AccountName=acme;AccountKey={AZ_KEY}"):\n'
        "    return BlobServiceClient.from_connection_string(conn)\n"
    ),
    "crypto_helper.py": (
        f'def seal(data, ENCRYPTION_KEY="{HEX_KEY}"):\n    return encrypt(data, ENCRYPTION_KEY)\n'
    ),
}
BUFFERS = {
    "upload.py": (
        f'STORAGE = "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZ_KEY[::-1]}"\n\n'
        "def upload(data):\n    client = make_blob_client()\n    \n"
    ),
    "store.py": f'SIGNING_KEY = "{HEX_KEY[::-1]}"\n\ndef store(data):\n    sealed = seal(data)\n    \n',
}


async def test_azure_connection_strings_and_hex_keys_are_redacted_in_the_buffer_and_in_tabs(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return client\n")
    async with lsp_session(tmp_path, _opts(fake)) as client:
        for name, text in HELPERS.items():
            open_doc(client, doc_uri(tmp_path, name), text)
        for name, text in BUFFERS.items():
            uri = doc_uri(tmp_path, name)
            open_doc(client, uri, text)
            assert texts(await inline(client, uri, 4, 4)) == ["return client"]
    bodies = [json.dumps(r.body) for r in fake.model_requests()]
    assert len(bodies) == 2
    # Each prompt carries the open buffer's assignment and the sibling tab's signature.
    signatures = ("def make_blob_client(conn=", "def seal(data, ENCRYPTION_KEY=")
    for body, context in zip(bodies, signatures, strict=True):
        assert context in body, "a sibling tab gave no context (the test could not fail)"
    assert bodies[0].count("AccountName=acme") >= 2 and "SIGNING_KEY" in bodies[1]  # buffer and tab
    for secret in (AZ_KEY, AZ_KEY[::-1], HEX_KEY, HEX_KEY[::-1]):
        assert secret[:24] not in bodies[0] + bodies[1]
