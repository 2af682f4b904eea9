"""A developer's whole repeated change, replayed over stdio with the next-edit server.

The first-ask figures (`next_edit.py`) judge the one proposal after the first edit. That
cannot see a predictor that waits for a second matching edit: after one edit it says
nothing and is counted as a miss, though the developer who goes on gets the rest proposed.
A session replays the commit as the developer makes it, with the predictor's help:

1. the developer types the first place (one key per character, as `replay` does);
2. the client asks for a next edit; a proposal that makes one of the places still to do is
   accepted (applied as the client applies it: one didChange with its range and text) and
   counts as correct; any other proposal counts as proposed and wrong, and is not applied;
3. when nothing right was proposed, the developer types the next place still to do;
4. until every place is done, with one last ask after the last edit (a proposal there is
   wrong: nothing is left to do).

Recall = correct proposals / follow-up places (every place but the first); precision =
correct / proposed. Single-edit controls need no session: their one ask is the first-ask
figure.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.next_edit_score import Place, SessionOutcome
from benchmarks.rpc_client import RpcClient

METHOD = "textDocument/copilotInlineEdit"
Key = tuple[int, int, int, str]  # (row, start column, end column, text): one keystroke


def u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def send_key(client: RpcClient, uri: str, version: int, key: Key) -> None:
    line, a, b, text = key
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [
                {
                    "range": {"start": {"line": line, "character": a}, "end": {"line": line, "character": b}},
                    "text": text,
                }
            ],
        },
    )


def keys_for(row: str, p: Place) -> tuple[list[Key], int]:
    """The keystrokes that overtype `p` in `row` (its old text selected, then the new text
    one key at a time), and the cursor column (UTF-16) after the last."""
    col = u16(row[: p.col])
    keys: list[Key] = [(p.line, col, col + u16(p.old), (p.new or "")[:1])]
    pos = col + u16(keys[0][3])
    for ch in (p.new or "")[1:]:
        keys.append((p.line, pos, pos, ch))
        pos += u16(ch)
    return keys, pos


def _shifted(places: list[Place], line: int, col: int, delta: int) -> list[Place]:
    """The places still to do after `delta` characters were inserted at (`line`, `col`)."""
    return [replace(p, col=p.col + delta) if p.line == line and p.col > col else p for p in places]


def _applied_row(lines: list[str], p: Place) -> str:
    row = lines[p.line]
    return row[: p.col] + p.new + row[p.col + len(p.old) :]


class _Session:
    """One case's document on the server, its text here, and the places still to do."""

    def __init__(self, client: RpcClient, uri: str, case: dict[str, Any]) -> None:
        self.client, self.uri = client, uri
        self.lines = case["before"].split("\n")
        self.version = 1
        self.cursor = (0, 0)

    async def type_place(self, p: Place) -> None:
        keys, pos = keys_for(self.lines[p.line], p)
        for key in keys:
            self.version += 1
            send_key(self.client, self.uri, self.version, key)
        self.lines[p.line] = _applied_row(self.lines, p)
        self.cursor = (p.line, pos)

    async def ask(self) -> dict[str, Any] | None:
        line, character = self.cursor
        msg = await self.client.call(
            METHOD,
            {
                "textDocument": {"uri": self.uri, "version": self.version},
                "position": {"line": line, "character": character},
            },
        )
        edits = ((msg or {}).get("result") or {}).get("edits") or []
        return edits[0] if edits else None

    def matching(self, edit: dict[str, Any], todo: list[Place]) -> Place | None:
        r = edit["range"]
        row = r["start"]["line"]
        if row != r["end"]["line"] or not 0 <= row < len(self.lines):
            return None
        units = self.lines[row].encode("utf-16-le")
        a, b = 2 * r["start"]["character"], 2 * r["end"]["character"]
        got = (units[:a] + edit["text"].encode("utf-16-le") + units[b:]).decode("utf-16-le", "replace")
        return next((p for p in todo if p.line == row and got == _applied_row(self.lines, p)), None)

    def accept(self, edit: dict[str, Any], p: Place) -> None:
        self.version += 1
        r = edit["range"]
        key = (r["start"]["line"], r["start"]["character"], r["end"]["character"], edit["text"])
        send_key(self.client, self.uri, self.version, key)
        self.lines[p.line] = _applied_row(self.lines, p)
        self.cursor = (p.line, r["start"]["character"] + u16(edit["text"]))


async def session(client: RpcClient, root: Path, i: int, case: dict[str, Any]) -> SessionOutcome:
    """Replay case `i` (a repeated change) as a session; see the module docstring."""
    places = [Place(p["line"], p["col"], p["old"], p["new"]) for p in case["places"]]
    uri = (root / f"session{i}" / Path(case["path"]).name).as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": case["before"]}},
    )
    s = _Session(client, uri, case)
    first, todo = places[0], places[1:]
    await s.type_place(first)
    todo = _shifted(todo, first.line, first.col, len(first.new) - len(first.old))
    proposed = correct = 0
    for _ in range(2 * len(places)):
        edit = await asyncio.wait_for(s.ask(), 30)
        done = s.matching(edit, todo) if edit is not None else None
        proposed += edit is not None
        if done is not None:
            correct += 1
            s.accept(edit or {}, done)
        else:
            if not todo:
                break
            done = todo[0]
            await s.type_place(done)
        todo = [p for p in todo if p is not done]
        todo = _shifted(todo, done.line, done.col, len(done.new) - len(done.old))
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return SessionOutcome(i, len(places) - 1, proposed, correct)
