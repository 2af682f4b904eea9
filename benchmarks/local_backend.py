"""Compare the two ways to run the embedded model, on the real model.

A) a managed `llama_cpp.server` child process, streamed over loopback HTTP
   (LocalServerProvider; the in-process default is measured by local_latency.py);
B) `llama_cpp.Llama` in a worker thread, bridged to asyncio with a queue.

For each: start-up time, time to first token (cold and warm), how long generation goes on
after the consumer stops (cancellation latency), and the longest event-loop stall seen by
a 1 ms ticker while generating. Prints figures; asserts nothing.

    .venv/bin/python -m benchmarks.local_backend [--model gemma3-270m|smollm2|PATH] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import threading
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.context.templates import render_completion
from lsp_assist.domain import ModelRequest, PromptContext
from lsp_assist.providers.http import ClientPool
from lsp_assist.providers.local_server import LocalServerProvider
from lsp_assist.providers.models import resolve_model

PREFIX = "import math\n\n\ndef circle_area(radius):\n    "
CTX = PromptContext("python", "geometry.py", PREFIX, "\n")


class Ticker:
    """Measures the longest gap between 1 ms sleeps: how long the loop was blocked."""

    def __init__(self) -> None:
        self.max_gap = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            self.max_gap = max(self.max_gap, now - last)
            last = now

    def __enter__(self) -> Ticker:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


def ms(x: float) -> str:
    return f"{x * 1000:7.1f} ms"


async def bench_server(model: str, runs: int) -> None:
    pool = ClientPool()
    cache = Path(tempfile.gettempdir()) / "lsp-assist-bench"
    p = LocalServerProvider(TierConfig(provider="local", model=model), LocalConfig(n_ctx=2048), pool, cache)
    t0 = time.perf_counter()
    await p.warm()
    print(f"A server  start-up (process + model load + health): {ms(time.perf_counter() - t0)}")
    ttfts, stalls = [], []
    for i in range(runs):
        ctx = PromptContext("python", "geometry.py", PREFIX + "#" * i, "\n")
        with Ticker() as tick:
            t = time.perf_counter()
            first = None
            async for c in p.stream(ModelRequest(ctx, max_tokens=24, temperature=0.0)):
                if c.text and first is None:
                    first = time.perf_counter() - t
        ttfts.append(first or 0.0)
        stalls.append(tick.max_gap)
    print(f"A server  TTFT first/median: {ms(ttfts[0])} / {ms(statistics.median(ttfts[1:] or ttfts))}")
    print(f"A server  longest loop stall while streaming: {ms(max(stalls))}")
    # Cancellation: stop after 2 tokens of a long answer, then time a 1-token request.
    # Its extra TTFT over an idle baseline is how long the aborted generation went on.
    base = []
    for _ in range(3):
        t = time.perf_counter()
        async for _c in p.stream(ModelRequest(CTX, max_tokens=1, temperature=0.0)):
            pass
        base.append(time.perf_counter() - t)
    extra = []
    for _ in range(3):
        agen = p.stream(ModelRequest(CTX, max_tokens=200, temperature=0.7))
        n = 0
        async for c in agen:
            n += bool(c.text)
            if n >= 2:
                break
        await agen.aclose()
        t = time.perf_counter()
        async for _c in p.stream(ModelRequest(CTX, max_tokens=1, temperature=0.0)):
            pass
        extra.append(time.perf_counter() - t - statistics.median(base))
    print(
        f"A server  generation after stop (next request's extra wait): median {ms(statistics.median(extra))}"
    )
    await p.aclose()
    await pool.aclose_all()


async def bench_thread(model: str, runs: int) -> None:
    from llama_cpp import Llama

    path = resolve_model(model, Path(tempfile.gettempdir()) / "lsp-assist-bench")
    t0 = time.perf_counter()
    llm = await asyncio.to_thread(lambda: Llama(model_path=str(path), n_ctx=2048, verbose=False))
    print(f"B thread  start-up (model load in this process):       {ms(time.perf_counter() - t0)}")
    lock = threading.Lock()

    async def stream(prompt: str, max_tokens: int, stop: threading.Event) -> AsyncGenerator[str, None]:
        loop = asyncio.get_running_loop()
        q: asyncio.Queue[str | None] = asyncio.Queue()

        def work() -> None:
            with lock:
                try:
                    out: Any
                    for out in llm.create_completion(
                        prompt, max_tokens=max_tokens, temperature=0.0, stream=True
                    ):
                        if stop.is_set():
                            break
                        loop.call_soon_threadsafe(q.put_nowait, out["choices"][0]["text"])
                finally:
                    loop.call_soon_threadsafe(q.put_nowait, None)

        fut = loop.run_in_executor(None, work)
        try:
            while (item := await q.get()) is not None:
                yield item
        finally:
            stop.set()
            await fut

    prompt = render_completion(CTX, "none", "gemma").prompt
    ttfts, stalls = [], []
    for i in range(runs):
        with Ticker() as tick:
            t = time.perf_counter()
            first = None
            async for txt in stream(prompt + "#" * i, 24, threading.Event()):
                if txt and first is None:
                    first = time.perf_counter() - t
        ttfts.append(first or 0.0)
        stalls.append(tick.max_gap)
    print(f"B thread  TTFT first/median: {ms(ttfts[0])} / {ms(statistics.median(ttfts[1:] or ttfts))}")
    print(f"B thread  longest loop stall while streaming: {ms(max(stalls))}")
    lat = []
    for _ in range(3):
        stop = threading.Event()
        agen = stream(prompt, 200, stop)
        n = 0
        async for _t in agen:
            n += 1
            if n >= 2:
                break
        t = time.perf_counter()
        await agen.aclose()  # waits for the worker to notice the flag and finish
        lat.append(time.perf_counter() - t)
    print(f"B thread  generation after stop (worker finish time):   median {ms(statistics.median(lat))}")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gemma3-270m")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"model: {args.model}")
    await bench_server(args.model, args.runs)
    await bench_thread(args.model, args.runs)


if __name__ == "__main__":
    asyncio.run(main())
