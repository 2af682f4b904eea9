"""The data boundary as a promise: nothing excluded reaches a model, by any channel, in any
feature.

A unique marker is planted in every way a file can be excluded:
- a glob in the workspace's `.lsp-assist.toml` (`secret/**`);
- a glob in the editor's settings only (`initializationOptions`, `vault/**`);
- the `.lsp-assist-ignore` file;
- a symlink to an excluded file, and a symlink to a `.env` file (a built-in secret pattern);
- a path outside the workspace that a built-in secret pattern covers.
Those files then reach the server through every channel it has: open as tabs next to the
file being typed in (cross-file context from the open documents and from the symbol index),
imported by it, in the workspace index, as the editor's own definitions
(`lspAssist/definitions`), and edited (recent edits). Every feature then runs: Automatic and
Invoked completions (with the Invoked choices' second sample), enrichment, prefetch,
escalation, cache warmup and next-edit suggestions (the model predictor, whose prompt
carries the edit history and the recently viewed files; asked for the excluded files too).
No request the fake model receives may hold the marker.

Redaction, the same way for next edits: secrets planted in the file being edited (around
the cursor and in its edits) and in a recently viewed file never reach a next-edit prompt,
in any prompt format.

A file that is not excluded gets a marker of its own through the same channels, and that
marker must reach a prompt: the channels are live, so the test can fail.
"""

from __future__ import annotations

import asyncio
import random
import string
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.data.secrets_corpus import PLANTED
from tests.e2e.conftest import inline, lsp_session, open_doc
from tests.fakes.fake_model_server import FakeModelServer, Script

NEXT_EDIT = "textDocument/copilotInlineEdit"
# What marks a next-edit prompt in each format (nextedit/formats/).
NEXT_EDIT_MARKS = ("### User Excerpt:", "<|file_sep|>current/", "<|editable_region_start|>")

EXCLUSIONS = ("glob", "settings", "ignored", "linked", "envlink", "outside")


def _marker() -> str:
    rng = random.Random()
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(10))


def _module(name: str, amount: int) -> str:
    return (
        f"{name.upper()}_RATE = {amount}\n\n\n"
        f"class {name.title().replace('_', '')}Ledger:\n"
        f"    def {name}_total(self, amount):\n"
        f"        return amount * {amount}\n\n\n"
        f"def {name}(amount):\n"
        f"    return amount * {amount}\n"
    )


def _definition(name: str, path: Path, text: str) -> dict[str, Any]:
    pos = {"line": 0, "character": 4}
    return {"name": name, "uri": path.as_uri(), "range": {"start": pos, "end": pos}, "text": text}


def _layout(tmp_path: Path, marker: str) -> tuple[Path, dict[str, Path], Path]:
    """The workspace: excluded files in every way, a visible helper, and main.py."""
    ws = tmp_path / "ws"
    (ws / "secret").mkdir(parents=True)
    (ws / "vault").mkdir()
    (ws / ".lsp-assist.toml").write_text('[governance]\nexclude = ["secret/**"]\n')
    (ws / ".lsp-assist-ignore").write_text("private_notes.py\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    files = {
        "glob": ws / "secret" / "keys.py",
        "settings": ws / "vault" / "tokens.py",
        "ignored": ws / "private_notes.py",
        "envlink": ws / ".env",
        "outside": outside / "secrets.py",
    }
    for kind, path in files.items():
        path.write_text(_module(f"{marker}_{kind}", 3))
    # Symlinks: one to an excluded file (the link's own name is innocent), one to `.env`.
    (ws / "linked.py").symlink_to(files["glob"])
    (ws / "settings_view.py").symlink_to(files["envlink"])
    files["linked"] = ws / "linked.py"
    files["envlink"] = ws / "settings_view.py"
    (ws / "helpers.py").write_text(_module(f"{marker}_visible", 5))
    main = ws / "main.py"
    imports = "".join(
        f"from {m} import *\n"
        for m in ("secret.keys", "vault.tokens", "private_notes", "linked", "settings_view", "helpers")
    )
    main.write_text(imports + "\n\ndef run(total):\n    result = \n    return result\n")
    return ws, files, main


def _prompts(fake: FakeModelServer) -> list[str]:
    return [str(r.body) for r in fake.model_requests()]


def _next_edit_prompts(fake: FakeModelServer) -> list[str]:
    return [p for p in _prompts(fake) if any(m in p for m in NEXT_EDIT_MARKS)]


def _type(client: Any, uri: str, version: int, line: int, character: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(line, character), types.Position(line, character)),
                    text=text,
                )
            ],
        )
    )


async def _ask_next_edit(client: Any, uri: str, version: int, line: int, character: int) -> Any:
    params = {
        "textDocument": {"uri": uri, "version": version},
        "position": {"line": line, "character": character},
    }
    return await asyncio.wait_for(client.protocol.send_request_async(NEXT_EDIT, params), timeout=20)


async def test_no_excluded_marker_reaches_any_prompt_of_any_feature(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    marker = _marker()
    ws, files, main = _layout(tmp_path, marker)
    fake.default = Script(text="value = compute(total)\n    return value\n", ttft_ms=5, tokens_per_s=2000)
    tier = {
        "provider": "openai",
        "api": "completions",
        "base_url": fake.base_url,
        "model": "fake-coder",
        "first_token_timeout_ms": 3000,
        "total_timeout_ms": 6000,
    }
    init = {
        "tiers": {
            "fast": tier,
            "quality": {**tier, "model": "quality-coder"},
            "backup": {"provider": "offline"},
        },
        "completion": {"prefetch": True, "enrichment": True, "invoked_choices": 3},
        "governance": {"exclude": ["vault/**"]},
        # Sweep's prompt carries the recently viewed files: the widest next-edit channel.
        "next_edit": {"predictor": "model", "format": "sweep"},
    }
    main_text = main.read_text()
    row = main_text.split("\n").index("    result = ")
    async with lsp_session(tmp_path, init) as client:
        # Channel: open tabs (and, through them, the symbol index).
        for kind in (*EXCLUSIONS, "visible"):
            path = files.get(kind, ws / "helpers.py")
            open_doc(client, path.as_uri(), path.read_text())
        # Channel: recent edits, in every excluded file.
        for kind in EXCLUSIONS:
            path = files[kind]
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
                            text=f"{marker}_{kind}_edited = 1\n",
                        )
                    ],
                )
            )
        open_doc(client, main.as_uri(), main_text)
        # Channel: the editor's own definitions, pointing into every file.
        definitions = [
            _definition(
                f"{marker}_{kind}", files.get(kind, ws / "helpers.py"), f"def {marker}_{kind}(amount): ..."
            )
            for kind in (*EXCLUSIONS, "visible")
        ]
        client.protocol.notify(
            "lspAssist/definitions", {"uri": main.as_uri(), "version": 1, "definitions": definitions}
        )
        await asyncio.sleep(1.0)  # the workspace index and the definitions' files are read

        # Features: Automatic, Invoked (choices: a second sample), escalation, warmup; the
        # enrichment and the prefetch run behind the answers.
        await inline(client, main.as_uri(), row, 13, invoked=False)
        await inline(client, main.as_uri(), row, 13, invoked=True)
        await asyncio.wait_for(
            client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="lspAssist.escalate",
                    arguments=[main.as_uri(), {"line": row, "character": 13}],
                )
            ),
            timeout=20,
        )
        await asyncio.wait_for(
            client.workspace_execute_command_async(types.ExecuteCommandParams(command="lspAssist.warmCache")),
            timeout=30,
        )
        # Next edits: an edit the rules cannot repeat (new code typed), so the model is asked;
        # and each excluded file, edited above, is asked about too (never recorded: no call).
        _type(client, main.as_uri(), 2, row, 13, "total + 1")
        await _ask_next_edit(client, main.as_uri(), 2, row, 22)
        for kind in EXCLUSIONS:
            await _ask_next_edit(client, files[kind].as_uri(), 2, 0, 3)
        await asyncio.sleep(0.5)  # prefetch and enrichment streams end

    prompts = _prompts(fake)
    next_edit = _next_edit_prompts(fake)
    assert len(next_edit) == 1, "the next-edit model was not asked (once, for main.py)"
    assert f"{marker}_visible" in next_edit[0], "the recently viewed files did not reach the prompt"
    models = {str((r.body or {}).get("model")) for r in fake.model_requests()}
    assert {"fake-coder", "quality-coder"} <= models, models  # completion and escalation ran
    assert any(f"{marker}_visible" in p for p in prompts), "the cross-file channels sent nothing"
    leaked = sorted({kind for p in prompts for kind in EXCLUSIONS if f"{marker}_{kind}" in p})
    assert leaked == [], f"excluded files reached a prompt: {leaked}"
    for name in ("secret/keys.py", "vault/tokens.py", "private_notes.py", "linked.py", "settings_view.py"):
        assert not any(name in p for p in prompts), f"the path {name} reached a prompt"


@pytest.mark.parametrize("fmt", ["zeta", "sweep", "instruct"])
async def test_no_planted_secret_reaches_a_next_edit_prompt(
    tmp_path: Path, fake: FakeModelServer, fmt: str
) -> None:
    marker = _marker()
    cases = [c for c in PLANTED if c.lang == "python"][:6]
    secrets = [x for c in cases for x in c.secrets]
    ws = tmp_path / "ws"
    ws.mkdir()
    viewed = ws / "settings.py"
    viewed.write_text("".join(c.text for c in cases[:3]) + f"{marker}_viewed = 1\n")
    main = ws / "app.py"
    main_text = "".join(c.text for c in cases[3:]) + "\n\ndef run(total):\n    result = \n    return result\n"
    main.write_text(main_text)
    row = main_text.split("\n").index("    result = ")
    fake.default = Script(text="    result = total\n", ttft_ms=1)
    tier = {"provider": "openai", "api": "completions", "base_url": fake.base_url, "model": "nes"}
    init = {
        "tiers": {"fast": tier, "quality": {**tier, "api": "chat"}, "backup": {"provider": "offline"}},
        "completion": {"prefetch": False, "enrichment": False},
        "next_edit": {"predictor": "model", "format": fmt, "region_lines": 40},
    }
    async with lsp_session(tmp_path, init) as client:
        open_doc(client, viewed.as_uri(), viewed.read_text())
        open_doc(client, main.as_uri(), main_text)
        # An edit that carries a secret too (pasted), then new code typed at the cursor.
        _type(client, main.as_uri(), 2, 0, 0, cases[0].text)
        row += cases[0].text.count("\n")
        _type(client, main.as_uri(), 3, row, 13, "total + 1")
        await _ask_next_edit(client, main.as_uri(), 3, row, 22)
    prompts = _next_edit_prompts(fake)
    assert len(prompts) == 1, "the next-edit model was not asked"
    assert "<redacted:" in prompts[0], "no secret was in reach of the prompt: the test would prove nothing"
    if fmt != "zeta":  # Zeta's prompt has no recently viewed files
        assert f"{marker}_viewed" in prompts[0]
    leaked = [x for x in secrets if any(x in p for p in _prompts(fake))]
    assert leaked == [], f"{len(leaked)} planted secrets reached a prompt"
