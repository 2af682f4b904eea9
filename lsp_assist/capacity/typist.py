"""A developer at the keyboard: what they type, how fast, and what they do with ghost text.

Inter-key intervals are log-normal (median 170 ms, about 60 words a minute in bursts, with
the long right tail measured keystroke logs show), a longer log-normal pause at the end of
each line, and occasional "thinking" pauses (exponential, mean 3.5 s). A few keys are typos
followed by a backspace. When ghost text is on screen the developer accepts it (Tab) with
`accept_prob`, types its first characters themselves with `type_through_prob` (which the
server answers by typing-through), and otherwise keeps typing their own code.

The developer talks to an `Editor`: the in-process one (`sim.InProcessEditor`, the real
pipeline of one server per developer) or, in benchmarks/capacity.py, a real stdio server.
Like VS Code, every keystroke asks for an inline completion and cancels the previous request.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
from dataclasses import dataclass, field
from typing import Protocol

NAMES = (
    "total",
    "items",
    "rate",
    "price",
    "count",
    "user",
    "order",
    "result",
    "value",
    "limit",
    "row",
    "key",
)
FUNCS = ("compute_total", "load_items", "apply_rate", "find_user", "parse_order", "merge_rows", "validate")
TEMPLATES = (
    "{a} = {f}({b}, {c})",
    "if {a} > {n}:",
    "return {a} * {b}",
    "for {a} in {b}:",
    "{c}.append({a})",
    "{a} += {b}.get({n})",
    'log.info("{f} %s", {a})',
    "return {f}({a}, {b}={c})",
    "{a}, {b} = {f}({c})",
    "assert {a} is not None",
)


@dataclass(frozen=True)
class TypingModel:
    key_median_ms: float = 170.0
    key_sigma: float = 0.55
    line_pause_median_ms: float = 900.0
    line_pause_sigma: float = 0.6
    think_prob: float = 0.02
    think_mean_ms: float = 3500.0
    typo_prob: float = 0.03
    accept_prob: float = 0.25
    type_through_prob: float = 0.15

    def key_gap(self, rng: random.Random) -> float:
        s = rng.lognormvariate(math.log(self.key_median_ms), self.key_sigma) / 1000.0
        if rng.random() < self.think_prob:
            s += rng.expovariate(1000.0 / self.think_mean_ms)
        return min(s, 15.0)

    def line_pause(self, rng: random.Random) -> float:
        return min(
            rng.lognormvariate(math.log(self.line_pause_median_ms), self.line_pause_sigma) / 1000.0, 15.0
        )


class Editor(Protocol):
    """What a simulated developer needs from an editor connected to a server."""

    async def open(self, uri: str, text: str) -> None: ...

    def edit(self, uri: str, version: int, line: int, col: int, end_col: int, text: str) -> None:
        """Replace [col, end_col) on `line` with `text` (a didChange)."""
        ...

    async def complete(self, uri: str, line: int, col: int) -> str:
        """An Automatic inline completion at the position: the suggestion's text ("" for none)."""
        ...

    async def close(self) -> None: ...


@dataclass
class TypistCounts:
    keystrokes: int = 0
    requests: int = 0
    cancelled_by_editor: int = 0
    shown: int = 0
    accepted: int = 0
    typed_through: int = 0


def code_line(rng: random.Random) -> str:
    t = rng.choice(TEMPLATES)
    a, b, c = rng.sample(NAMES, 3)
    return t.format(a=a, b=b, c=c, f=rng.choice(FUNCS), n=rng.randint(0, 99))


@dataclass
class Typist:
    editor: Editor
    uri: str
    seed: int
    model: TypingModel = field(default_factory=TypingModel)
    counts: TypistCounts = field(default_factory=TypistCounts)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.lines = ["import logging", "", "log = logging.getLogger(__name__)", "", "",
                      f"def handler_{self.seed}(items, rate, user):"]  # fmt: skip
        self.line = len(self.lines)
        self.col = 0
        self.version = 1
        self._pending: asyncio.Task[str] | None = None

    async def run(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        await self.editor.open(self.uri, "\n".join(self.lines) + "\n    \n")
        self.col = 4
        try:
            while loop.time() < until:
                await self._type_line(until)
                if loop.time() >= until:
                    break
                self._newline()
                await asyncio.sleep(self.model.line_pause(self.rng))
        finally:
            if self._pending is not None and not self._pending.done():
                self._pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._pending

    async def _type_line(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        text = code_line(self.rng)
        i = 0
        while i < len(text) and loop.time() < until:
            if self.rng.random() < self.model.typo_prob:
                self._insert(self.rng.choice("qjxz"))
                await asyncio.sleep(self.model.key_gap(self.rng))
                self._backspace()
                await asyncio.sleep(self.model.key_gap(self.rng))
            self._insert(text[i])
            i += 1
            await asyncio.sleep(self.model.key_gap(self.rng))
            shown = self._shown()
            if not shown:
                continue
            self.counts.shown += 1
            r = self.rng.random()
            first = shown.split("\n", 1)[0]
            if r < self.model.accept_prob and first:
                self.counts.accepted += 1
                self._insert(first)
                await asyncio.sleep(self.model.line_pause(self.rng))
                return  # the line is done: the developer moves on
            if r < self.model.accept_prob + self.model.type_through_prob and first:
                self.counts.typed_through += 1
                for ch in first[: self.rng.randint(1, min(6, len(first)))]:
                    self._insert(ch)
                    await asyncio.sleep(self.model.key_gap(self.rng))
                return

    def _shown(self) -> str:
        """The suggestion on screen: the answer to the last request, if it came back."""
        t = self._pending
        if t is None or not t.done() or t.cancelled() or t.exception() is not None:
            return ""
        return t.result()

    def _insert(self, text: str) -> None:
        self.version += 1
        self.editor.edit(self.uri, self.version, self.line, self.col, self.col, text)
        self.col += len(text)
        self.counts.keystrokes += 1
        self._ask()

    def _newline(self) -> None:
        """Enter, with the editor's auto-indent."""
        self.version += 1
        self.editor.edit(self.uri, self.version, self.line, self.col, self.col, "\n    ")
        self.line += 1
        self.col = 4
        self.counts.keystrokes += 1
        self._ask()

    def _backspace(self) -> None:
        self.version += 1
        self.editor.edit(self.uri, self.version, self.line, self.col - 1, self.col, "")
        self.col -= 1
        self.counts.keystrokes += 1
        self._ask()

    def _ask(self) -> None:
        if self._pending is not None and not self._pending.done():
            self._pending.cancel()  # as VS Code does on the next keystroke
            self.counts.cancelled_by_editor += 1
        self.counts.requests += 1
        self._pending = asyncio.get_running_loop().create_task(
            self.editor.complete(self.uri, self.line, self.col)
        )
        self._pending.add_done_callback(_quiet)


def _quiet(task: asyncio.Task[str]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: a failed request is just "nothing shown"


__all__ = ["Editor", "TypingModel", "Typist", "TypistCounts", "code_line"]
