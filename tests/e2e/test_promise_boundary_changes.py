"""The data boundary as a promise when the policy is not the one the server started with.

Two variants of the exclusion-marker promise (`test_promise_boundary.py`):

- **Exclusion added live.** A file's text reaches suggestions (its own, and another file's
  through cross-file context); then it is excluded while the editor is open: by the editor's
  settings (`workspace/didChangeConfiguration`), by a `.lsp-assist-ignore` file, or by the
  folder's `.lsp-assist.toml` (both reported through `workspace/didChangeWatchedFiles`).
  From then on no answer holds the marker, through any memory (typing-through, the answer
  and prompt caches, the Invoked choices, prefetch, next-edit history), Invoked or
  Automatic, over every feature: N re-asks at the very positions whose answers held it.
- **Several workspace folders.** Each folder's `.lsp-assist.toml` governs its own files
  only, in both directions; a folder added at run time (`workspace/didChangeWorkspaceFolders`)
  has its exclusions in force before its first file is answered.

The fake model answers with every marker its prompt holds, like a model that completes with
the names it was shown: an answer holds a marker exactly when it was worked out from a
prompt that held it.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import inline, lsp_session, open_doc, texts
from tests.e2e.test_promise_boundary import _ask_next_edit, _marker, _module, _type
from tests.fakes.fake_model_server import FakeModelServer, Script

REASKS = 3  # re-asks per position, kind and feature after the change
# A line to complete at the end of every module: (row, column) of its cursor.
USE = "\n\ndef use(total):\n    value = \n"
USE_AT = (13, 12)


def _echo(marker: str) -> Script:
    """A model whose answer names every marker its request holds (none: a plain answer)."""
    pattern = re.compile(re.escape(marker) + r"_[a-z_]+")

    def answer(body: dict[str, Any]) -> str:
        names = sorted(set(pattern.findall(json.dumps(body))))
        return (" + ".join(names) or "total * 2") + "\n"

    return Script(text=answer, ttft_ms=2, tokens_per_s=4000)


def _tiers(fake: FakeModelServer) -> dict[str, Any]:
    tier = {
        "provider": "openai",
        "api": "completions",
        "base_url": fake.base_url,
        "model": "fake-coder",
        "first_token_timeout_ms": 3000,
        "total_timeout_ms": 6000,
    }
    return {
        "tiers": {
            "fast": tier,
            "quality": {**tier, "model": "quality-coder"},
            "backup": {"provider": "offline"},
        },
        "completion": {"prefetch": True, "enrichment": True, "invoked_choices": 3},
        "next_edit": {"predictor": "model", "format": "sweep"},
    }


def _said(result: Any) -> str:
    """Everything an answer offers: every item's text, or a command's / next edit's JSON."""
    if isinstance(result, (list, types.InlineCompletionList)) or result is None:
        return "\n".join(texts(result))
    return json.dumps(result, default=lambda o: getattr(o, "__dict__", str(o)))


async def _escalate(client: Any, uri: str, row: int, col: int) -> Any:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="lspAssist.escalate", arguments=[uri, {"line": row, "character": col}]
            )
        ),
        timeout=20,
    )


# ---------------------------------------------------------------------------- live change


def _main_text(functions: int) -> str:
    body = "".join(
        f"\n\ndef run{i}(total):\n    result{i} = \n    return result{i}\n" for i in range(functions)
    )
    return "from helper import *\n" + body


def _positions(text: str) -> list[tuple[int, int]]:
    lines = text.split("\n")
    return [
        (i, len(line))
        for i, line in enumerate(lines)
        if line.startswith("    result") and line.endswith("= ")
    ]


async def _exclude_live(client: Any, how: str, ws: Path) -> None:
    """Exclude `helper.py` while the editor is open, the way `how` names."""
    if how == "settings":
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"lspAssist": {"governance": {"exclude": ["helper.py"]}}}
            )
        )
        return
    if how == "ignore_file":
        changed = ws / ".lsp-assist-ignore"
        changed.write_text("helper.py\n")
    else:
        changed = ws / ".lsp-assist.toml"
        changed.write_text('[governance]\nexclude = ["helper.py"]\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=changed.as_uri(), type=types.FileChangeType.Created)]
        )
    )


async def _ask_everything(client: Any, main: Path, helper: Path, spots: list[tuple[int, int]]) -> list[str]:
    """Every feature at every spot, Automatic and Invoked; what each answer offered."""
    said: list[str] = []
    for row, col in spots:
        for invoked in (False, True):
            said.append(_said(await inline(client, main.as_uri(), row, col, invoked=invoked)))
        said.append(_said(await _escalate(client, main.as_uri(), row, col)))
    for invoked in (False, True):
        # helper.py was edited: one line more above its `use` function.
        said.append(_said(await inline(client, helper.as_uri(), USE_AT[0] + 1, USE_AT[1], invoked=invoked)))
    return said


@pytest.mark.parametrize("how", ["settings", "ignore_file", "folder_toml"])
async def test_an_exclusion_added_live_reaches_no_later_answer(
    tmp_path: Path, fake: FakeModelServer, how: str
) -> None:
    marker = _marker()
    ws = tmp_path / "ws"
    ws.mkdir()
    helper = ws / "helper.py"
    helper.write_text(_module(f"{marker}_helper", 3) + USE)
    main = ws / "main.py"
    main_text = _main_text(6)
    main.write_text(main_text)
    fake.default = _echo(marker)
    async with lsp_session(tmp_path, _tiers(fake)) as client:
        open_doc(client, helper.as_uri(), helper.read_text())
        _type(client, helper.as_uri(), 2, 0, 0, f"{marker}_helper_edited = 1\n")  # next-edit history
        open_doc(client, main.as_uri(), main_text)
        await asyncio.sleep(0.5)  # the workspace index is read

        # Before: find the positions of main.py whose answers were worked out from helper.py.
        spots = []
        for row, col in _positions(main_text):
            if marker in _said(await inline(client, main.as_uri(), row, col, invoked=False)):
                spots.append((row, col))
        before = await _ask_everything(client, main, helper, spots)
        assert spots, "no answer in main.py held helper.py's marker: the cross-file channel is dead"
        assert any(marker in s for s in before[-2:]), "helper.py's own answers never held its marker"
        await asyncio.sleep(0.3)  # enrichment, prefetch and choices settle into the memories

        await _exclude_live(client, how, ws)
        sent = len(fake.model_requests())
        after: list[str] = []
        for _ in range(REASKS):
            after += await _ask_everything(client, main, helper, spots)
        _type(client, main.as_uri(), 2, spots[0][0], spots[0][1], "total + 1")
        after.append(_said(await _ask_next_edit(client, main.as_uri(), 2, spots[0][0], spots[0][1] + 9)))
        await asyncio.sleep(0.3)

    leaked = [s for s in after if marker in s]
    assert leaked == [], (
        f"{len(leaked)} of {len(after)} answers after the change held the excluded file's text"
    )
    late = [str(r.body) for r in fake.model_requests()[sent:] if marker in str(r.body)]
    assert late == [], f"{len(late)} prompts after the change held the excluded file's text"


# ---------------------------------------------------------------------------- folders


def _folder(root: Path, marker: str, excluded: str, other: str) -> dict[str, Path]:
    """A folder whose `.lsp-assist.toml` excludes `excluded/**`; a file under `other/` (the
    other folder's excluded directory name) is visible here."""
    (root / excluded).mkdir(parents=True)
    (root / other).mkdir()
    (root / ".lsp-assist.toml").write_text(f'[governance]\nexclude = ["{excluded}/**"]\n')
    files = {
        "excluded": root / excluded / "keys.py",
        "visible": root / other / "notes.py",
    }
    for kind, path in files.items():
        path.write_text(_module(f"{marker}_{root.name}_{kind}", 7) + USE)
    files["main"] = root / "main.py"
    files["main"].write_text(
        f"from {excluded}.keys import *\nfrom {other}.notes import *\n\n\ndef run(total):\n    result = \n"
    )
    return files


async def _ask_folder(client: Any, files: dict[str, Path]) -> dict[str, str]:
    """Open every file of a folder and ask in each, Automatic and Invoked."""
    for path in files.values():
        open_doc(client, path.as_uri(), path.read_text())
    said: dict[str, str] = {}
    for kind, path in files.items():
        row, col = (5, 13) if kind == "main" else USE_AT
        said[kind] = "".join(
            [
                _said(await inline(client, path.as_uri(), row, col, invoked=invoked))
                for invoked in (False, True)
            ]
        )
    return said


async def test_each_folder_is_governed_by_its_own_layer(tmp_path: Path, fake: FakeModelServer) -> None:
    marker = _marker()
    a = _folder(tmp_path / "alpha", marker, "private", "internal")
    b = _folder(tmp_path / "beta", marker, "internal", "private")
    c = _folder(tmp_path / "gamma", marker, "hidden", "shown")
    fake.default = _echo(marker)
    async with lsp_session(tmp_path, _tiers(fake), folders=[tmp_path / "alpha", tmp_path / "beta"]) as client:
        caps = client.init_result.capabilities  # type: ignore[attr-defined]
        folders = caps.workspace.workspace_folders if caps.workspace is not None else None
        assert folders is not None and folders.change_notifications, "folder changes are not asked for"
        said = {"alpha": await _ask_folder(client, a), "beta": await _ask_folder(client, b)}
        # A third folder comes while the editor is open; its files are asked about at once.
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=(tmp_path / "gamma").as_uri(), name="gamma")], removed=[]
                )
            )
        )
        said["gamma"] = await _ask_folder(client, c)
        await asyncio.sleep(0.3)

    prompts = [json.dumps(r.body) for r in fake.model_requests()]
    for name in ("alpha", "beta", "gamma"):
        own = f"{marker}_{name}_excluded"
        shown = f"{marker}_{name}_visible"
        assert said[name]["excluded"] == "", f"{name}: a file its own folder excludes was answered"
        assert not any(own in p for p in prompts), f"{name}: its excluded file reached a prompt"
        assert not any(own in s for s in said[name].values()), f"{name}: its excluded file reached an answer"
        # The other folder's exclusion does not reach this folder's files (both directions).
        assert shown in said[name]["visible"], f"{name}: a file only another folder excludes got no answer"
