"""A prefetch waits for a rest in the user's typing: mid-burst the next key would drop it,
and its model call would be one more the burst paid for nothing (issue 40)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsp_assist.documents.store import TextChange
from lsp_assist.domain import Cursor, Outcome
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.pipeline.scheduler import Scheduler
from lsp_assist.server import Runtime
from tests.fakes.fake_model_server import FakeModelServer
from tests.fakes.runtimes import openai_runtime


def test_pause_left_waits_for_a_rest_of_twice_the_gap_and_at_least_half_a_second() -> None:
    s = Scheduler()
    assert s.pause_left("u") == 0.0  # never typed
    st = s._state("u")
    st.last_change = time.monotonic()
    st.rhythm = 0.0  # the first key after a pause: another usually follows it
    assert 0.45 < s.pause_left("u") <= 0.5
    st.rhythm = 0.4  # keys 400 ms apart: quiet for 800 ms
    assert 0.75 < s.pause_left("u") <= 0.8
    st.rhythm = 0.9  # a slow typist: at most the gap that ends the typing
    assert 0.95 < s.pause_left("u") <= 1.0
    st.last_change = time.monotonic() - 1.0  # the rest came
    assert s.pause_left("u") == 0.0


def test_the_rhythm_spans_gaps_longer_than_the_burst_gap_and_ends_at_a_long_one() -> None:
    s = Scheduler()
    st = s._state("u")
    for gap in (0.3, 0.1):  # a 300 ms gap resets the debounce's estimate, not the rhythm
        st.last_change = time.monotonic() - gap
        s.note_change("u")
    assert 0.15 < st.rhythm < 0.25
    st.last_change = time.monotonic() - 2.0  # a pause: the typing starts over
    s.note_change("u")
    assert st.rhythm == 0.0


def _opened(tmp_path: Path, fake: FakeModelServer) -> tuple[Runtime, str]:
    """A runtime on `fake` with prefetch on, and a function's body opened to type into."""
    rt = openai_runtime(fake, tmp_path / "ws", completion={"prefetch": True, "enrichment": False})
    path = tmp_path / "ws" / "a.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    rt.store.open(path.as_uri(), "python", 1, "def f():\n    ", str(path))
    return rt, path.as_uri()


async def test_a_prefetch_scheduled_mid_burst_calls_the_model_only_after_the_pause(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    rt, uri = _opened(tmp_path, fake)
    try:
        engine = rt.engine
        assert engine is not None
        for k, ch in enumerate("ret"):  # a burst: a key every 200 ms
            if k:
                await asyncio.sleep(0.2)
            rt.store.change(uri, k + 2, [TextChange(Cursor(1, 4 + k), Cursor(1, 4 + k), ch)])
            engine.note_change(uri)  # as the didChange handler does
        fake.push(text="urn 1\n")
        result = await engine.complete(CompletionRequest(uri, Cursor(1, 7)))
        assert result.outcome == Outcome.MODEL
        calls = len(fake.model_requests())
        await asyncio.sleep(0.1)  # the prefetch's own start delay has passed; the pause has not
        assert len(fake.model_requests()) == calls
        assert engine.prefetcher.waited_for_pause == 1
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            if len(fake.model_requests()) > calls:
                break
            await asyncio.sleep(0.02)
        assert len(fake.model_requests()) == calls + 1  # the pause came: the prefetch ran
    finally:
        await rt.aclose()


async def test_a_burst_with_a_longer_gap_makes_one_call_per_key_and_no_prefetch(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    """Keys 300 ms apart (longer than the debounce's burst gap): each answered suggestion
    used to start a prefetch there, which the next key dropped after its call was made."""
    rt, uri = _opened(tmp_path, fake)
    try:
        engine = rt.engine
        assert engine is not None
        keys = "ret"
        for k, ch in enumerate(keys):
            if k:
                await asyncio.sleep(0.3)  # the prefetch of the last answer would start meanwhile
            rt.store.change(uri, k + 2, [TextChange(Cursor(1, 4 + k), Cursor(1, 4 + k), ch)])
            engine.note_change(uri)  # as the didChange handler does
            fake.push(text="x = 1\n")  # never what the user types next: no typing-through
            result = await engine.complete(CompletionRequest(uri, Cursor(1, 5 + k)))
            assert result.outcome == Outcome.MODEL
        assert len(fake.model_requests()) == len(keys)  # one call per key, no prefetch
    finally:
        await rt.aclose()
