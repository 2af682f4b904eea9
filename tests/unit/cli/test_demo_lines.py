"""`lsp-assist demo` shows what an editor shows after each stop: the typing model's first
answer (the part written within the answer budget: `.` after `return 2 * math` on two
cores), its whole line once the stream has written it, then the rewrite model's line, each
with when it came. Before, only the first answer was printed, and "the rewrite model kept
the typing model's line" named a line the user never saw."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from lsp_assist.cli import demo_cmd
from lsp_assist.domain import Outcome, Suggestion


class _Model:
    refined_runs = 0


class _Runtime:
    def __init__(self) -> None:
        self.model = _Model()

    def local_models(self) -> list[_Model]:
        return [self.model]


async def _rest(answers: list[tuple[str, int]], capsys: pytest.CaptureFixture[str]) -> str:
    """`_show_rewrite` where each `suggestionReady` asks again and gets the next answer,
    with the rewrites started by then."""
    rt = _Runtime()
    ready = asyncio.Event()
    left = list(answers)

    async def complete_at(*_args: Any, **_kw: Any) -> Suggestion:
        text, rewrites = left.pop(0)
        rt.model.refined_runs = rewrites
        if left:
            loop.call_soon(ready.set)  # the next suggestionReady
        return Suggestion(text, Outcome.MODEL)

    loop = asyncio.get_running_loop()
    from lsp_assist.cli import session

    real = session.complete_at
    session.complete_at = complete_at  # type: ignore[assignment]
    try:
        ready.set()
        style = ("        return 2 * math", "", "")
        at = (".", time.perf_counter())
        await demo_cmd._show_rewrite(rt, "file:///shapes.py", (24, 23), at, ready, style)
    finally:
        session.complete_at = real  # type: ignore[assignment]
    return capsys.readouterr().out


async def test_the_typing_models_whole_line_is_shown_before_the_rewrite_keeps_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo_cmd, "REWRITE_WAIT_S", 0.5)
    out = await _rest([(".pi * self.radius", 0), (".pi * self.radius", 1)], capsys)
    assert "  25 |         return 2 * math.pi * self.radius\n" in out
    assert "the typing model's line" in out
    assert "(the rewrite model kept the typing model's line)" in out


async def test_a_rewrite_that_differs_follows_the_typing_models_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo_cmd, "REWRITE_WAIT_S", 0.5)
    out = await _rest([("shapes)", 0), ("shape.area() for shape in shapes)", 1)], capsys)
    lines = out.splitlines()
    typing = lines.index("  25 |         return 2 * mathshapes)")
    assert "the typing model's line" in lines[typing + 1]
    assert lines[typing + 2] == "  25 |         return 2 * mathshape.area() for shape in shapes)"
    assert "the rewrite model's line" in lines[typing + 3]
