"""An answer given at once (typing-through, the cache) is rewritten at the user's rest too.

With token healing the typing model's line more often agrees with the keys typed after it,
so the last keys before a rest are answered from the typing-through memory and start no
stream; the refine model's rewrite used to follow only a stream's end, so those rests got
none (`benchmarks/rest_rewrite.py`: 2 of 8 rests rewritten where 4 of 8 were). The whole
runtime on a loopback model; its provider is given a refine model by a stand-in `stream`
for rewrites (the OpenAI provider has none of its own). No timing is asserted: the rest is
a few ms and the tests wait, bounded, for the outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from lsp_assist.documents.store import TextChange
from lsp_assist.domain import Cursor, ModelRequest, Outcome, StreamChunk
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.server import Runtime
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.fakes.runtimes import openai_runtime
from tests.unit.pipeline.launcher_harness import settle

TEXT = "def total(items):\n    t"
REWRITE = "tal = sum(item.price for item in items)"
MORE_LINES = 8  # 48 pieces: within the enrichment's token budget


def _with_refine_model(
    rt: Runtime, rest: float, lines_after: list[int] | None = None, rewrite: str = REWRITE
) -> list[ModelRequest]:
    """The fast tier's provider gets a refine model that writes `rewrite`; the requests it
    is sent, in order. `lines_after`: the typing model writes `MORE_LINES` after its first
    line, a token each few ms, and the list gets how many of them it wrote."""
    assert rt.engine is not None
    provider: Any = rt.engine.launcher.provider("fast")
    typing_stream: Callable[[ModelRequest], AsyncIterator[StreamChunk]] = provider.stream
    seen: list[ModelRequest] = []

    async def typing(request: ModelRequest) -> AsyncIterator[StreamChunk]:
        async for chunk in typing_stream(request):
            yield chunk
        if lines_after is None:
            return
        lines_after.append(0)
        for n in range(MORE_LINES):
            for piece in ("count", f"_{n}", " =", " len", "(items)"):  # distinct lines
                await asyncio.sleep(0.03)
                yield StreamChunk(piece)
            yield StreamChunk("\n    ")
            lines_after[-1] += 1

    async def stream(request: ModelRequest) -> AsyncIterator[StreamChunk]:
        seen.append(request)
        if not request.refine:
            async for chunk in typing(request):
                yield chunk
            return
        for piece in (rewrite[:9], rewrite[9:], "\n"):
            await asyncio.sleep(0.001)
            yield StreamChunk(piece)

    provider.stream = stream
    provider.refine_after_s = rest
    return seen


@contextlib.asynccontextmanager
async def _runtime(
    fake: FakeModelServer, root: Path, rest: float, **options: Any
) -> AsyncIterator[tuple[Runtime, list[ModelRequest], str]]:
    """A runtime on `fake` whose fast tier has a refine model (`_with_refine_model`), the
    requests it is sent, and the URI of the document the tests type in."""
    lines_after = options.pop("lines_after", None)
    rewrite = options.pop("rewrite", REWRITE)
    rt = openai_runtime(fake, root, **options)
    assert rt.engine is not None
    seen = _with_refine_model(rt, rest, lines_after, rewrite)
    try:
        yield rt, seen, (root / "t.py").as_uri()
    finally:
        await rt.aclose()


async def _waiting(rt: Runtime, uri: str) -> None:
    """Until a rewrite waits for the user's rest in `uri` (bounded)."""
    assert rt.engine is not None
    launcher = rt.engine.launcher
    for _ in range(300):
        if launcher.refine_waiting(uri):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no rewrite waits for the rest")


async def _typed_through(rt: Runtime, uri: str) -> None:
    """The first key's answer from the model (its rewrite held off by a long rest), then a
    key typed into it: answered from the typing-through memory, no stream."""
    assert rt.engine is not None
    rt.store.open(uri, "python", 1, TEXT, None)
    first = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 5)))
    assert first.outcome == Outcome.MODEL and first.text.startswith("otal")
    await _waiting(rt, uri)  # the stream ended; its rewrite waits for a 30 s rest
    rt.store.change(uri, 2, [TextChange(Cursor(1, 5), Cursor(1, 5), "o")])
    rt.engine.note_change(uri)  # the key: the first answer's rewrite gives up


async def _rewritten(rt: Runtime, uri: str, seen: list[ModelRequest]) -> None:
    assert rt.engine is not None
    for _ in range(300):  # bounded: the task starts after the reply, then rests ~20 ms
        await settle(rt.engine.launcher, uri)
        if any(r.refine for r in seen):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no rewrite after the rest")


async def test_a_typed_through_answer_is_rewritten_after_the_rest(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="otal = sum(items)\n")
    async with _runtime(fake, tmp_path / "ws", rest=30.0) as (rt, seen, uri):
        assert rt.engine is not None
        ready: list[tuple[int, Cursor]] = []
        rt.engine.on_suggestion_ready = lambda _uri, version, cursor: ready.append((version, cursor))
        await _typed_through(rt, uri)
        rt.engine.launcher.provider("fast").refine_after_s = 0.02  # type: ignore[union-attr]
        second = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 6)))
        assert second.outcome == Outcome.TYPING_THROUGH and second.text == "tal = sum(items)"
        await _rewritten(rt, uri, seen)
        assert [r.refine for r in seen] == [False, True]
        assert seen[1].draft == "tal = sum(items)"  # the rewrite was told what is on screen
        # Announced where the user rests (its first line, then its end).
        assert ready and set(ready) == {(2, Cursor(1, 6))}
        again = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 6)))
        assert again.outcome == Outcome.TYPING_THROUGH and again.text == REWRITE
        # Asked again on `suggestionReady`, the rewrite itself is not rewritten.
        for _ in range(5):
            await asyncio.sleep(0.05)
            await settle(rt.engine.launcher, uri)
        assert [r.refine for r in seen] == [False, True]


async def test_a_rewrite_shorter_than_the_line_typed_into_replaces_it(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    # The typing model's line, typed into from the key before, is longer than its rewrite:
    # asked again on `suggestionReady`, the editor must get the rewrite, not the longer
    # line it replaces (`benchmarks/rest_rewrite.py`: 3 of 30 rests wrote the developer's
    # line and kept the typing model's on screen).
    fake.default = Script(text="otal = sum(item.price * item.count for item in items)\n")
    short = "tal = sum(items)"
    async with _runtime(fake, tmp_path / "ws", rest=30.0, rewrite=short) as (rt, seen, uri):
        assert rt.engine is not None
        await _typed_through(rt, uri)
        rt.engine.launcher.provider("fast").refine_after_s = 0.02  # type: ignore[union-attr]
        second = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 6)))
        assert second.outcome == Outcome.TYPING_THROUGH and second.text.startswith("tal = sum(item.price")
        await _rewritten(rt, uri, seen)
        again = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 6)))
        assert again.outcome == Outcome.TYPING_THROUGH and again.text == short


async def test_an_answer_from_the_stream_a_key_attached_to_is_rewritten_after_the_rest(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    # The first key's stream has not written its line when the next key comes; that key's
    # request attaches to it. The stream's end belongs to the first key (a version gone):
    # the rewrite must follow the attached answer.
    fake.default = Script(text="otal = sum(items)\n", ttft_ms=150)
    async with _runtime(fake, tmp_path / "ws", rest=0.02) as (rt, seen, uri):
        assert rt.engine is not None
        rt.store.open(uri, "python", 1, TEXT, None)
        first = asyncio.create_task(rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 5))))
        for _ in range(300):  # bounded: until the first key's stream is live
            if rt.engine.launcher.live_stream(uri) is not None:
                break
            await asyncio.sleep(0.005)
        rt.store.change(uri, 2, [TextChange(Cursor(1, 5), Cursor(1, 5), "o")])
        rt.engine.note_change(uri)
        second = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 6)))
        assert second.outcome == Outcome.ATTACHED and second.text == "tal = sum(items)"
        await first
        await _rewritten(rt, uri, seen)
        assert [r.refine for r in seen] == [False, True]
        again = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 6)))
        assert again.outcome == Outcome.TYPING_THROUGH and again.text == REWRITE


async def test_a_key_during_the_rest_means_no_rewrite(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="otal = sum(items)\n")
    async with _runtime(fake, tmp_path / "ws", rest=30.0) as (rt, seen, uri):
        assert rt.engine is not None
        await _typed_through(rt, uri)
        second = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 6)))
        assert second.outcome == Outcome.TYPING_THROUGH
        await _waiting(rt, uri)  # the answer's rewrite waits for the rest
        rt.store.change(uri, 3, [TextChange(Cursor(1, 6), Cursor(1, 6), "x")])
        rt.engine.note_change(uri)  # a key the answer did not say
        assert not rt.engine.launcher.refine_waiting(uri)
        await settle(rt.engine.launcher, uri)
        assert [r.refine for r in seen] == [False]


async def test_at_the_rest_the_stream_typed_into_stops_at_a_line_end_for_the_rewrite(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    # On a blank line the first key's stream writes its first line, then more lines a token
    # at a time (the enrichment); the user types into its first line and rests. The rewrite
    # must not wait for all of them: the stream stops at its next line end.
    fake.default = Script(text="total = sum(items)\n    ")
    written: list[int] = []
    root = tmp_path / "ws"
    async with _runtime(fake, root, rest=0.02, lines_after=written, completion={"enrichment": True}) as (
        rt,
        seen,
        uri,
    ):
        assert rt.engine is not None
        rt.store.open(uri, "python", 1, "def total(items):\n    ", None)
        first = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 4)))
        assert first.outcome == Outcome.MODEL and first.text.startswith("total")
        rt.store.change(uri, 2, [TextChange(Cursor(1, 4), Cursor(1, 4), "t")])
        rt.engine.note_change(uri)
        second = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 5)))
        assert second.outcome == Outcome.TYPING_THROUGH
        await _rewritten(rt, uri, seen)
        assert written and written[0] < MORE_LINES, written  # stopped, not written out
