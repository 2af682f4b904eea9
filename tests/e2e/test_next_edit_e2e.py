"""Next-edit suggestions over real stdio, driven as an editor drives them.

A parameter is renamed in a real file of a few hundred lines (this repository's
documents/store.py, copied into the workspace) one keystroke at a time with didChange;
`textDocument/copilotInlineEdit` then proposes the same rename at the parameter's next use.
A request for a version the document has left answers no edit; an excluded file gets no
edit and its edits are never recorded (the history's bytes in `lspAssist.stats` stay 0).
"""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import ROOT, lsp_session, open_doc
from tests.fakes.fake_model_server import FakeModelServer, Script

SOURCE = ROOT / "lsp_assist" / "documents" / "store.py"
METHOD = "textDocument/copilotInlineEdit"


def plain(value: Any) -> Any:
    """A response as dicts and lists, however the client library hands it over."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_asdict"):
        return [plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: plain(v) for k, v in vars(value).items()}
    return value


def edit(client: LanguageClient, uri: str, version: int, line: int, start: int, end: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(line, start), types.Position(line, end)), text=text
                )
            ],
        )
    )


def rename_as_typed(client: LanguageClient, uri: str, line: int, col: int, old: str, new: str) -> int:
    """Select `old` at (line, col) and type `new` over it; returns the last version sent."""
    edit(client, uri, 2, line, col, col + len(old), new[0])
    for i, ch in enumerate(new[1:], start=1):
        edit(client, uri, 2 + i, line, col + i, col + i, ch)
    return 1 + len(new)


async def next_edit(client: LanguageClient, uri: str, version: int, line: int, character: int) -> list[Any]:
    params = {
        "textDocument": {"uri": uri, "version": version},
        "position": {"line": line, "character": character},
    }
    result = plain(await asyncio.wait_for(client.protocol.send_request_async(METHOD, params), timeout=20))
    edits: list[Any] = result["edits"]
    return edits


async def history_bytes(client: LanguageClient) -> int:
    stats = plain(
        await asyncio.wait_for(
            client.workspace_execute_command_async(types.ExecuteCommandParams(command="lspAssist.stats")),
            timeout=20,
        )
    )
    return int(stats["memory"]["next_edit_history"])


async def events(client: LanguageClient) -> dict[str, int]:
    """The suggestion events recorded so far (`lspAssist.stats`)."""
    stats = plain(
        await asyncio.wait_for(
            client.workspace_execute_command_async(types.ExecuteCommandParams(command="lspAssist.stats")),
            timeout=20,
        )
    )
    out: dict[str, int] = stats["suggestions"]["events"]
    return out


def _clamp_parameter(text: str) -> tuple[int, int, int, int]:
    """(row of `def clamp(self, cursor`, its column, row and column of the next `cursor`)."""
    lines = text.split("\n")
    row = next(i for i, x in enumerate(lines) if "def clamp(self, cursor" in x)
    col = lines[row].index("cursor")
    for r in range(row + 1, len(lines)):
        m = re.search(r"\bcursor\b", lines[r])
        if m:
            return row, col, r, m.start()
    raise AssertionError("no use of the parameter")


async def test_renamed_parameter_proposes_the_next_use_and_stale_versions_get_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    path = ws / "store.py"
    shutil.copy(SOURCE, path)
    text = path.read_text()
    assert text.count("\n") > 300  # a real file of a few hundred lines
    row, col, next_row, next_col = _clamp_parameter(text)
    async with lsp_session(tmp_path) as client:
        experimental = plain(client.init_result.capabilities.experimental)  # type: ignore[attr-defined]
        assert experimental["nextEdit"] == {"method": METHOD, "version": 1}
        uri = path.as_uri()
        open_doc(client, uri, text)
        version = rename_as_typed(client, uri, row, col, "cursor", "pos")
        edits = await next_edit(client, uri, version, row, col + 3)
        assert len(edits) == 1, edits
        e = edits[0]
        assert e["text"] == "pos"
        assert e["textDocument"] == {"uri": uri, "version": version}
        assert e["range"] == {
            "start": {"line": next_row, "character": next_col},
            "end": {"line": next_row, "character": next_col + len("cursor")},
        }
        assert e["command"]["command"] == "lspAssist.nextEdit.accept"
        assert e["command"]["arguments"] == [e["id"]] and isinstance(e["id"], str)

        # A version the document has left (older, or not reached yet): no edit.
        assert await next_edit(client, uri, version - 1, row, col + 3) == []
        assert await next_edit(client, uri, version + 1, row, col + 3) == []

        # Shown (as copilot-lsp reports it: the item's command only), then applied by the
        # client and accepted; the next use comes next.
        client.protocol.notify("textDocument/didShowInlineEdit", {"item": {"command": e["command"]}})
        assert (await events(client)) == {"shown": 1}
        r = e["range"]
        edit(client, uri, version + 1, next_row, r["start"]["character"], r["end"]["character"], e["text"])
        accepted = plain(
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command=e["command"]["command"], arguments=e["command"]["arguments"]
                )
            )
        )
        assert accepted == {"ok": True}
        assert (await events(client)) == {"shown": 1, "accepted": 1}
        follow = await next_edit(client, uri, version + 1, next_row, next_col + 3)
        assert follow and follow[0]["text"] == "pos"
        assert follow[0]["range"]["start"]["line"] > next_row or (
            follow[0]["range"]["start"]["line"] == next_row
            and follow[0]["range"]["start"]["character"] > next_col
        )
        rejected = plain(
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="lspAssist.nextEdit.reject", arguments=[follow[0]["id"]])
            )
        )
        assert rejected == {"ok": True}


async def test_excluded_file_gets_no_edit_and_is_never_recorded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "secret").mkdir(parents=True)
    (ws / ".lsp-assist.toml").write_text('[governance]\nexclude = ["secret/**"]\n')
    hidden = ws / "secret" / "store.py"
    shutil.copy(SOURCE, hidden)
    text = hidden.read_text()
    row, col, _, _ = _clamp_parameter(text)
    async with lsp_session(tmp_path) as client:
        uri = hidden.as_uri()
        open_doc(client, uri, text)
        version = rename_as_typed(client, uri, row, col, "cursor", "pos")
        assert await next_edit(client, uri, version, row, col + 3) == []
        assert await history_bytes(client) == 0
        # Malformed params and documents that are not open get no edit, not an error.
        for params in ({"textDocument": {"uri": uri}}, {"position": {"line": 0}}, {}):
            got = plain(
                await asyncio.wait_for(client.protocol.send_request_async(METHOD, params), timeout=20)
            )
            assert got == {"edits": []}
        assert await next_edit(client, (ws / "closed.py").as_uri(), 1, 0, 0) == []
        # The same file outside the exclusion is recorded: the measure can see a history.
        visible = ws / "store.py"
        shutil.copy(SOURCE, visible)
        open_doc(client, visible.as_uri(), text)
        rename_as_typed(client, visible.as_uri(), row, col, "cursor", "pos")
        assert await history_bytes(client) > 0


async def test_a_cancelled_request_answers_no_edit(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="<|editable_region_start|>\nx\n<|editable_region_end|>", ttft_ms=10_000)
    tier = {"provider": "openai", "api": "completions", "base_url": fake.base_url, "model": "nes"}
    init = {
        "tiers": {"fast": tier, "quality": tier, "backup": {"provider": "offline"}},
        "completion": {"prefetch": False, "enrichment": False},
        "next_edit": {"predictor": "model", "timeout_ms": 30_000},
    }
    (tmp_path / "ws").mkdir()
    uri = (tmp_path / "ws" / "m.py").as_uri()
    async with lsp_session(tmp_path, init) as client:
        open_doc(client, uri, "def f(total):\n    result = \n")
        edit(client, uri, 2, 1, 13, 13, "total + 1")  # new code: the rules have nothing, the model is asked
        before = set(client.protocol._request_futures)
        params = {"textDocument": {"uri": uri, "version": 2}, "position": {"line": 1, "character": 22}}
        pending = asyncio.ensure_future(client.protocol.send_request_async(METHOD, params))
        await asyncio.sleep(0)
        (msg_id,) = set(client.protocol._request_futures) - before
        assert fake.wait_for(lambda s: s.streams_started >= 1, timeout=10)  # the model call is under way
        client.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))
        result = plain(await asyncio.wait_for(pending, timeout=8))  # well before the model's 10 s
        assert result == {"edits": []}
