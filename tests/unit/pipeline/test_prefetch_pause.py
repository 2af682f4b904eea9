"""A prefetch waits for a pause in the user's typing: mid-burst the next key would drop it,
and its model call would be one more the burst paid for nothing (issue 40)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsp_assist.documents.store import TextChange
from lsp_assist.domain import Cursor, Outcome
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.pipeline.scheduler import Scheduler
from tests.fakes.fake_model_server import FakeModelServer
from tests.fakes.runtimes import openai_runtime


def test_pause_left_is_zero_outside_a_burst_and_twice_the_gap_within_one() -> None:
    s = Scheduler()
    assert s.pause_left("u") == 0.0  # never typed
    st = s._state("u")
    st.last_change = time.monotonic()
    st.interval_ewma = 1.0  # the first key after a pause
    assert s.pause_left("u") == 0.0
    st.interval_ewma = 0.2  # a burst at 200 ms a key: quiet for 400 ms
    assert 0.35 < s.pause_left("u") <= 0.4
    st.interval_ewma = 0.05  # a fast burst: at least the burst gap itself
    assert 0.2 < s.pause_left("u") <= 0.25
    st.last_change = time.monotonic() - 1.0  # the pause came
    assert s.pause_left("u") == 0.0


async def test_a_prefetch_scheduled_mid_burst_calls_the_model_only_after_the_pause(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    rt = openai_runtime(fake, tmp_path / "ws", completion={"prefetch": True, "enrichment": False})
    try:
        engine = rt.engine
        assert engine is not None
        path = tmp_path / "ws" / "a.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        uri = path.as_uri()
        rt.store.open(uri, "python", 1, "def f():\n    ", str(path))
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
