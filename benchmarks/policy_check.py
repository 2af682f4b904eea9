"""What the data boundary's read-time check (the policy epoch) adds to an answer from memory.

Every memory of content answers to the policy epoch at read time (`governance/epoch.py`):
a typing-through hit compares the request's epoch with the current one, twice, and an
exact-cache hit's prompt is looked up with the epoch in its key and its answer checked
once more before it is returned. This measures, in-process on the real pipeline
(`CompletionEngine.complete`, offline tiers, a 300-line module open):

- a typing-through hit (an Automatic request where the user typed the start of the
  suggestion on screen: answered before the debounce, no model call);
- an exact-cache hit (an Invoked request whose prompt was answered before: the prompt memo
  and the suggestion cache).

`--compare BASE` runs the same measurement on the code at BASE (a checkout of the commit
before the check, e.g. `git worktree add /tmp/base <commit>`) and on this checkout, in
alternating rounds of separate processes on the same machine, and prints p50 and p95 of
both and the difference. Target: the check adds at most 0.1 ms to a cache hit's p50.

    .venv/bin/python -m benchmarks.policy_check [--samples 3000] [--rounds 3] [--compare BASE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _module(lines: int) -> str:
    body = [f"def step{i}(total):\n    return total * {i}\n\n" for i in range(lines // 3)]
    return "".join(body) + "def run(total):\n    value = \n"


async def _measure(samples: int) -> dict[str, list[float]]:
    from lsp_assist.config.loader import ConfigLayers
    from lsp_assist.domain import Cursor
    from lsp_assist.pipeline.request import CompletionRequest
    from lsp_assist.server import Runtime

    offline = {"provider": "offline"}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LSP_ASSIST_CONFIG"] = str(Path(tmp) / "none.toml")
        os.environ["LSP_ASSIST_POLICY"] = str(Path(tmp) / "no-policy.toml")
        options = {
            "cache": {"dir": str(Path(tmp) / "cache")},
            "tiers": {"fast": offline, "quality": offline, "backup": offline},
            "workspace": {"index": False},
        }
        ws = Path(tmp) / "ws"
        ws.mkdir()
        rt = Runtime(ConfigLayers(init_options=options), [ws])
        rt.build()
        text = _module(300)
        uri = (ws / "main.py").as_uri()
        rt.store.open(uri, "python", 1, text, str(ws / "main.py"))
        row = text.count("\n") - 1
        at = Cursor(row, len("    value = "))
        engine = rt.engine
        assert engine is not None
        # The typing-through hit: a suggestion remembered at the cursor, the user typed "to".
        doc = rt.store.get(uri)
        assert doc is not None
        suggestion = "total * 2"
        offset = doc.offset(at)
        snap = rt.store.snapshot(uri)
        assert snap is not None
        # Remembered as the pipeline does (under the current epoch when there is one).
        target = engine.prompts.target(snap, at) if hasattr(engine.prompts, "target") else None
        if target is not None:
            engine.answers.remember(target, suggestion, "fast")
        else:  # the code before the check
            rt.typing.remember(uri, text, offset, suggestion, "fast")
        typed = text[:offset] + "to" + text[offset:]
        rt.store.open(uri, "python", 2, typed, str(ws / "main.py"))
        typing_at = Cursor(row, at.character + 2)
        # The exact-cache hit: the prompt at `at` (in the original text) answered before.
        rt.store.open(uri, "python", 3, text, str(ws / "main.py"))
        prompt = engine.prompts.for_open(uri, at, "fast")
        assert prompt is not None
        engine.answers.cache.put(prompt.key, suggestion)
        out: dict[str, list[float]] = {}
        for kind, version, content, cursor, invoked in (
            ("typing", 4, typed, typing_at, False),
            ("cache", 5, text, at, True),
        ):
            rt.store.open(uri, "python", version, content, str(ws / "main.py"))
            req = CompletionRequest(uri=uri, cursor=cursor, invoked=invoked)
            out[kind] = await _time(engine, req, samples)
        await rt.aclose()
        return out


async def _time(engine: Any, req: Any, samples: int) -> list[float]:
    """Milliseconds per request, after 200 unmeasured ones; every one answered from memory."""
    want = "typing_through" if not req.invoked else "cache"
    out: list[float] = []
    for i in range(samples + 200):
        if req.invoked:
            engine.answers.forget(req.uri)  # the cache, not the typing-through memory
        t = time.perf_counter()
        result = await engine.complete(req)
        ms = (time.perf_counter() - t) * 1000.0
        if i >= 200:
            out.append(ms)
        assert result.outcome.value == want, f"answered by {result.outcome.value}, not {want}"
    return out


def _child(code: Path, samples: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    got = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--samples", str(samples), "--raw"],
        env=env,
        cwd=str(code),
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, list[float]] = json.loads(got.stdout.strip().splitlines()[-1])
    return data


def _compare(base: Path, samples: int, rounds: int) -> None:
    from benchmarks.common import percentile  # not at the top: a child runs under an older checkout

    runs: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    for _ in range(rounds):  # alternating, so both see the same machine load
        for name, code in (("before", base), ("after", ROOT)):
            for kind, values in _child(code, samples).items():
                runs[name].setdefault(kind, []).extend(values)
    print(f"policy check on a hit: {rounds} rounds x {samples} requests per kind and code, in-process")
    for kind in ("typing", "cache"):
        b, a = runs["before"][kind], runs["after"][kind]
        pb, pa = statistics.median(b), statistics.median(a)
        print(
            f"{kind + ' hit':<12} before p50 {pb:.4f} ms p95 {percentile(b, 95):.4f} ms | "
            f"after p50 {pa:.4f} ms p95 {percentile(a, 95):.4f} ms | added p50 {pa - pb:+.4f} ms"
        )


def _check_alone(samples: int) -> None:
    """The check by itself: `AnswerStore.admits` plus the typing index's epoch test."""
    from lsp_assist.governance.epoch import PolicyEpoch

    epoch = PolicyEpoch()
    n = samples * 100
    t = time.perf_counter()
    for _ in range(n):
        epoch.admits(0)
    print(f"PolicyEpoch.admits alone: {(time.perf_counter() - t) / n * 1e9:.0f} ns per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", type=Path, default=None, metavar="BASE")
    parser.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.raw:
        print(json.dumps(asyncio.run(_measure(args.samples))))
        return
    if args.compare is not None:
        _compare(args.compare.resolve(), args.samples, args.rounds)
        _check_alone(args.samples)
        return
    from benchmarks.common import percentile

    got: dict[str, Any] = asyncio.run(_measure(args.samples))
    for kind, values in got.items():
        print(
            f"{kind + ' hit':<12} p50 {statistics.median(values):.4f} ms p95 {percentile(values, 95):.4f} ms"
        )
    _check_alone(args.samples)


if __name__ == "__main__":
    main()
