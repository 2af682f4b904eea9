"""A suggestion that arrives while a request waits in its debounce answers it: no prompt, no
second model call (the request used to start a call for an answer already there)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_assist.documents.store import TextChange
from lsp_assist.domain import Cursor, Outcome
from lsp_assist.pipeline.request import CompletionRequest
from tests.fakes.fake_model_server import FakeModelServer, Script
from tests.fakes.runtimes import openai_runtime

TEXT = "def total(items):\n    "


async def test_the_previous_keys_stream_ending_during_the_debounce_answers_the_next_key(
    tmp_path: Path, isolated: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="otal = sum(items)\n", ttft_ms=80)
    # A burst's debounce longer than the first stream takes, so it ends while the second key
    # waits (the first key after a pause would not wait at all).
    rt = openai_runtime(fake, tmp_path / "ws", completion={"debounce_min_ms": 400, "debounce_max_ms": 400})
    assert rt.engine is not None
    try:
        uri = (tmp_path / "ws" / "t.py").as_uri()
        rt.store.open(uri, "python", 1, TEXT + "t", None)
        rt.engine.note_change(uri)  # the key that typed "t": the next one is in the same burst
        first = asyncio.ensure_future(
            rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 5), invoked=True))
        )
        assert await asyncio.to_thread(fake.wait_for, lambda st: st.streams_started == 1, 5.0)
        # The next key before the first answer: the editor cancels the first request, and the
        # second waits its debounce while the first stream ends (remembered for typing-through).
        rt.store.change(uri, 2, [TextChange(Cursor(1, 5), Cursor(1, 5), "o")])
        rt.engine.note_change(uri)
        first.cancel()
        second = await rt.engine.complete(CompletionRequest(uri=uri, cursor=Cursor(1, 6)))
        assert second.outcome == Outcome.TYPING_THROUGH and second.text.startswith("tal = sum")
        assert fake.stats.streams_started == 1
    finally:
        await rt.aclose()
