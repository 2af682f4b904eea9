"""The standard scenarios, played against one server as an editor would drive it.

- cold, Automatic / Invoked: a fresh position with no edit (a module just opened, the cursor
  on an empty function body), one request;
- jump, no edit: the cursor moved to another empty body of an open module, one request;
- key after a pause / after a jump: Enter typed at the end of a `def` line after a 0.3 s
  pause (in a module just opened / in an open module the cursor jumped in), then the request
  the editor sends `EDITOR_GAP_S` after the change;
- cache hit: the same request again, nothing changed;
- typing through: the suggestion's first character typed;
- accept: the rest of the suggestion's first line inserted (its command run, as an editor
  does), then the request at the line's end;
- burst: 12 keys at log-normal gaps, each a change and an Automatic request, the previous
  one cancelled: model calls per burst and the last key's answer.
Every wait has a timeout; a request unanswered in `ANSWER_TIMEOUT_S` is counted, not fatal.
"""

from __future__ import annotations

import asyncio
import math
import random
from dataclasses import dataclass, field
from typing import Any

from lsp_assist.bench.client import LspClient
from lsp_assist.bench.documents import BURST_KEYS, FIRST_LINE, INDENT, def_end, def_line, module
from lsp_assist.bench.figures import Answer, Figures, calls_since, first_item, item_text
from lsp_assist.bench.model import ModelProcess
from lsp_assist.bench.recipes import Recipe

MISSES = ("cold, Automatic", "cold, Invoked", "jump, no edit", "key after a pause", "key after a jump")
FOLLOWS = ("cache hit", "typing through", "accept")
SCENARIOS = (*MISSES, *FOLLOWS, "burst")
ANSWER_TIMEOUT_S = 20.0
PAUSE_S = 0.3  # a pause before a fresh request (and a didOpen settled)
SETTLE_S = 0.15  # after an answer: background work (enrichment, prefetch) shows in the records
EDITOR_GAP_S = 0.05  # VS Code asks for inline completions 50 ms after a change
TYPIST = (170.0, 0.55)  # inter-key gap: log-normal median ms, sigma (an average typist)
MAX_GAP_S = 0.6  # a longer gap ends a burst


@dataclass
class Session:
    client: LspClient
    recipe: Recipe
    model: ModelProcess
    figures: dict[str, Figures] = field(default_factory=lambda: {s: Figures() for s in SCENARIOS})
    _modules: int = 0
    _versions: dict[str, int] = field(default_factory=dict)

    def open(self, stubs: int = 1, body: bool = True) -> tuple[str, int]:
        """A new module (its own number): its URI and number."""
        self._modules += 1
        i = self._modules
        uri = f"file:///bench/{self.recipe.name}/module_{i}.py"
        self._versions[uri] = 1
        doc = {"uri": uri, "languageId": "python", "version": 1, "text": module(i, stubs, body)}
        self.client.notify("textDocument/didOpen", {"textDocument": doc})
        return uri, i

    def type(self, uri: str, line: int, col: int, text: str) -> None:
        self._versions[uri] += 1
        at = {"line": line, "character": col}
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self._versions[uri]},
                "contentChanges": [{"range": {"start": at, "end": at}, "text": text}],
            },
        )

    def send(self, uri: str, line: int, col: int, invoked: bool = False) -> tuple[int, asyncio.Future[Any]]:
        params: dict[str, Any] = {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}}
        if self.recipe.request == "inline":
            params["context"] = {"triggerKind": 1 if invoked else 2}
        else:  # an editor asks for completions as-you-type with triggerKind Invoked too
            params["context"] = {"triggerKind": 1}
        return self.client.request(self.recipe.method, params)

    async def ask(self, uri: str, line: int, col: int, invoked: bool = False) -> Answer | None:
        msg_id, fut = self.send(uri, line, col, invoked)
        try:
            response = await asyncio.wait_for(fut, ANSWER_TIMEOUT_S)
        except (TimeoutError, asyncio.TimeoutError, ConnectionError):
            return None
        item = first_item(response)
        return Answer(self.client.sent_at[msg_id], self.client.received_at[msg_id], item_text(item), item)

    async def measure(
        self, scenario: str, uri: str, at: tuple[int, int], invoked: bool = False
    ) -> Answer | None:
        """One request timed and split into `scenario`'s figures (after a settle)."""
        answer = await self.ask(uri, *at, invoked=invoked)
        fig = self.figures[scenario]
        if answer is None:
            fig.unanswered += 1
            return None
        await asyncio.sleep(SETTLE_S)
        records = self.model.records()
        fig.add(answer, records, calls_since(records, answer.sent, self.recipe.background))
        return answer

    def accepted(self, answer: Answer | None) -> None:
        """Run the accepted item's command, as an editor does (its answer is not awaited)."""
        command = (answer.item.get("command") if answer else None) or {}
        if isinstance(command, dict) and command.get("command"):
            self.client.request(
                "workspace/executeCommand",
                {"command": command["command"], "arguments": command.get("arguments") or []},
            )


async def warm_up(s: Session, tries: int = 10) -> bool:
    """Requests until one is answered with text (connections, imports, a peer's health check
    of the model): not counted. False when none was."""
    uri, _ = s.open()
    for _ in range(tries):
        answer = await s.ask(uri, def_line(0) + 1, len(INDENT))
        if answer is not None and answer.text.strip():
            return True
        await asyncio.sleep(0.5)
    return False


async def cold_then_follow(s: Session, n: int) -> None:
    """Cold Automatic at a fresh position, then in the same place: the cache hit, typing
    through its first character, and accepting the rest of the line."""
    for _ in range(n):
        uri, _ = s.open()
        row = def_line(0) + 1
        await asyncio.sleep(PAUSE_S)
        shown = await s.measure("cold, Automatic", uri, (row, len(INDENT)))
        hit = await s.measure("cache hit", uri, (row, len(INDENT)))
        s.type(uri, row, len(INDENT), FIRST_LINE[0])
        await asyncio.sleep(EDITOR_GAP_S)
        through = await s.measure("typing through", uri, (row, len(INDENT) + 1))
        s.type(uri, row, len(INDENT) + 1, FIRST_LINE[1:])
        s.accepted(through or hit or shown)
        await asyncio.sleep(EDITOR_GAP_S)
        await s.measure("accept", uri, (row, len(INDENT) + len(FIRST_LINE)))
        s.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def cold_invoked(s: Session, n: int) -> None:
    for _ in range(n):
        uri, _ = s.open()
        await asyncio.sleep(PAUSE_S)
        await s.measure("cold, Invoked", uri, (def_line(0) + 1, len(INDENT)), invoked=True)
        s.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def jumps(s: Session, n: int) -> None:
    """One open module, the cursor jumping from empty body to empty body, no edit."""
    uri, _ = s.open(stubs=n + 1)
    await s.ask(uri, def_line(0) + 1, len(INDENT))  # the cursor was somewhere first
    for j in range(1, n + 1):
        await asyncio.sleep(PAUSE_S)
        await s.measure("jump, no edit", uri, (def_line(j) + 1, len(INDENT)))
    s.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def key_after_pause(s: Session, n: int) -> None:
    for _ in range(n):
        uri, i = s.open(body=False)
        await asyncio.sleep(PAUSE_S)
        s.type(uri, def_line(0, body=False), def_end(i, 0), "\n" + INDENT)
        await asyncio.sleep(EDITOR_GAP_S)
        await s.measure("key after a pause", uri, (def_line(0, body=False) + 1, len(INDENT)))
        s.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def key_after_jump(s: Session, n: int) -> None:
    """One open module; from the bottom up (a new line shifts only the rows below it), the
    cursor jumps to a `def` line's end and Enter is typed there."""
    uri, i = s.open(stubs=n + 1, body=False)
    await s.ask(uri, def_line(n, body=False), def_end(i, n))  # the cursor was somewhere first
    for j in range(n - 1, -1, -1):
        await asyncio.sleep(PAUSE_S)
        row = def_line(j, body=False)
        s.type(uri, row, def_end(i, j), "\n" + INDENT)
        await asyncio.sleep(EDITOR_GAP_S)
        await s.measure("key after a jump", uri, (row + 1, len(INDENT)))
    s.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def burst_gaps(seed: int, keys: int = len(BURST_KEYS) - 1) -> list[float]:
    """Seconds between the keys of one burst, seeded: every run types the same bursts."""
    median_ms, sigma = TYPIST
    rng = random.Random(f"bench:{seed}")
    return [min(MAX_GAP_S, rng.lognormvariate(math.log(median_ms), sigma) / 1000.0) for _ in range(keys - 1)]


async def burst(s: Session, seed: int) -> None:
    """Keys typed at a fresh position, each a change and an Automatic request, the previous
    request cancelled (as VS Code does)."""
    uri, _ = s.open()
    row, col = def_line(0) + 1, len(INDENT)
    await asyncio.sleep(MAX_GAP_S)
    gaps = burst_gaps(seed)
    start = asyncio.get_running_loop().time()
    first_sent: float | None = None
    pending: tuple[int, asyncio.Future[Any]] | None = None
    for k, key in enumerate(BURST_KEYS[: len(gaps) + 1]):
        if pending is not None:
            s.client.cancel(pending[0])
        s.type(uri, row, col + k, key)
        pending = s.send(uri, row, col + k + 1)
        first_sent = first_sent if first_sent is not None else s.client.sent_at[pending[0]]
        if k < len(gaps):
            await asyncio.sleep(max(0.0, start + sum(gaps[: k + 1]) - asyncio.get_running_loop().time()))
    assert pending is not None and first_sent is not None
    fig = s.figures["burst"]
    try:
        response = await asyncio.wait_for(pending[1], ANSWER_TIMEOUT_S)
    except (TimeoutError, asyncio.TimeoutError, ConnectionError):
        fig.unanswered += 1
        return
    item = first_item(response)
    last = Answer(s.client.sent_at[pending[0]], s.client.received_at[pending[0]], item_text(item), item)
    await asyncio.sleep(0.5)  # streams of cancelled keys show in the records
    records = s.model.records()
    fig.add(last, records, calls_since(records, first_sent, s.recipe.background))
    s.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def play(s: Session, n: int, bursts: int) -> dict[str, Figures]:
    """Every scenario, n trials each (bursts: `bursts`), in a fixed order."""
    await cold_then_follow(s, n)
    await cold_invoked(s, n)
    await jumps(s, n)
    await key_after_pause(s, n)
    await key_after_jump(s, n)
    for b in range(bursts):
        await burst(s, b)
    return s.figures
