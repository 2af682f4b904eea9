"""`lsp-assist demo`: ghost text in the terminal on the embedded model, with timings.

It opens a sample file from fixtures/ and walks through cursor positions as an editor
would: for each, the rest of the line is "not typed yet", the pipeline is asked for a
suggestion at the cursor, and the line is shown with the suggestion as dim ghost text,
followed by what the original file had and the time to first token and total. With a
rewrite model (the code model, on the default setup), the demo then rests there as a user
would and shows the rewrite's line too, with the time it appeared after the rest: the
server announces it (`suggestionReady`) and the editor asks again.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from lsp_assist.logs import setup_logging

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "demo" / "shapes.py"
# (1-based line, text on that line the user has typed before the cursor stops)
_STOPS = (
    ("    def distance_to", "        return math.hypot("),
    ("    def circumference", "        return 2 * math"),
    ("    def contains", "        return self.center"),
    ("    def perimeter", "        return 2 * (self."),
    ("def total_area", "    return sum("),
    ("def largest", "    return max(shapes, key="),
)
#: How long the demo rests at each stop for the rewrite model's line.
REWRITE_WAIT_S = 12.0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="show ghost-text suggestions on a sample file, with timings")
    p.add_argument("--file", type=Path, default=None, help="a Python file to use instead of the sample")
    p.add_argument("--no-color", action="store_true")
    p.set_defaults(run=run)


def _positions(lines: list[str]) -> list[tuple[int, int, str]]:
    """(0-based line, column, the rest of the line) for each demo stop found in the file."""
    out: list[tuple[int, int, str]] = []
    for anchor, typed in _STOPS:
        for i, line in enumerate(lines):
            if line.startswith(anchor):
                for j in range(i + 1, min(i + 4, len(lines))):
                    if lines[j].startswith(typed):
                        out.append((j, len(typed), lines[j][len(typed) :]))
                        break
                break
    if not out:  # an arbitrary file: stop in the middle of a few non-trivial lines
        for i, line in enumerate(lines):
            stripped = line.strip()
            if len(stripped) > 20 and not stripped.startswith(("#", '"', "'")):
                col = len(line) - len(stripped) + len(stripped) // 2
                out.append((i, col, line[col:]))
            if len(out) >= 6:
                break
    return out


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_level or "warning", args.log_file)
    path = (args.file or SAMPLE).resolve()
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"lsp-assist demo: cannot read {path}: {exc}", file=sys.stderr)
        return 1
    color = sys.stdout.isatty() and not args.no_color
    return asyncio.run(_demo(path, source, color))


async def _demo(path: Path, source: str, color: bool) -> int:
    from lsp_assist.cli.session import complete_at, open_runtime, open_text

    dim, bold, reset = ("\x1b[2;37m", "\x1b[1m", "\x1b[0m") if color else ("", "", "")
    # The demo shows the model at work: no suggestion cache (a second run would show cache
    # hits) and no speculative prefetch competing for the local model's single slot.
    # The rewrite model stays (a one-shot command drops it): the demo rests for its line.
    overrides = {
        "cache": {"enabled": False},
        "completion": {"prefetch": False},
        "local": {"refine_model": "auto"},
    }
    rt = open_runtime(path.parent, overrides)
    rewriter = await _start(rt, path, bold, reset)
    lines = source.split("\n")
    shown = 0
    ready = asyncio.Event()
    assert rt.engine is not None
    rt.engine.on_suggestion_ready = lambda _uri, _version, _cursor: ready.set()
    try:
        for line_no, col, rest in _positions(lines):
            typed_lines = list(lines)
            typed_lines[line_no] = lines[line_no][:col]  # the rest of the line is not typed yet
            text = "\n".join(typed_lines)
            ready.clear()
            uri = open_text(rt, path, text)
            result = await complete_at(rt, uri, line_no, col)
            rest_at = time.perf_counter()
            st = result.stages
            ghost = result.text.split("\n")
            print()
            for k in range(max(0, line_no - 2), line_no):
                print(f"{k + 1:4} | {lines[k]}")
            print(f"{line_no + 1:4} | {lines[line_no][:col]}{dim}{ghost[0]}{reset}")
            for extra in ghost[1:4]:
                print(f"     | {dim}{extra}{reset}")
            ttft = st.get("ttft")
            print(
                f"       {result.outcome.value} via {result.tier}: "
                + (f"first token {ttft:.0f} ms, " if ttft else "")
                + f"total {st.get('total', 0.0):.0f} ms   (file had: {rest.strip()!r})"
            )
            if rewriter:
                await _show_rewrite(
                    rt, uri, (line_no, col), (ghost[0], rest_at), ready, (lines[line_no][:col], dim, reset)
                )
            shown += 1
    finally:
        await rt.aclose()
    print()
    print(f"{shown} suggestions. `lsp-assist stats` shows the latency stages of every request.")
    return 0 if shown else 1


async def _rewrite_model(rt: Any) -> str:
    """The rewrite model's name once it is loaded ("" when there is none)."""
    for model in rt.local_models():
        if model.refiner_name and await model.refiner_ready(urgent=True):
            return str(model.refiner_name)
    return ""


async def _start(rt: Any, path: Path, bold: str, reset: str) -> str:
    """Say what runs the demo and load its models; the rewrite model's name ("" for none)."""
    from lsp_assist.cli.session import wait_for_model

    rewriter = ""
    fast = rt.config.tier("fast")
    model = rt.providers["fast"].model if "fast" in rt.providers else "?"
    print(f"{bold}lsp-assist demo{reset}: {path.name} on tier fast = {fast.provider} ({model})")
    if fast.provider == "offline":
        print(
            "  (the embedded model is not installed: pip install 'lsp-assist[local]'; "
            "showing the offline rule engine)"
        )
    else:
        print("  warming the model (first start loads it)...", flush=True)
        t0 = time.perf_counter()
        rt.start_model_load()
        await wait_for_model(rt)
        await rt.warm()
        rewriter = await _rewrite_model(rt)
        print(
            f"  ready in {time.perf_counter() - t0:.1f} s"
            + (f"; rewrites at rest: {rewriter}" if rewriter else "")
        )
    return rewriter


def _rewrites(rt: Any) -> int:
    """Rewrites the rewrite model has started so far."""
    return sum(int(getattr(model, "refined_runs", 0)) for model in rt.local_models())


async def _show_rewrite(
    rt: Any,
    uri: str,
    at: tuple[int, int],
    shown: tuple[str, float],
    ready: asyncio.Event,
    style: tuple[str, str, str],
) -> None:
    """Rest at `at` as a user would: at each `suggestionReady` the editor asks again. Until
    the rewrite model starts, what it gets is the typing model's line grown (the first
    answer is the part written within the answer budget, `.` or `self.` on two cores): it
    is printed as it grows; after, a first line other than that is the rewrite's. Each
    with the seconds since the rest began."""
    from lsp_assist.cli.session import complete_at

    (line_no, col), (first, rest_at) = at, shown
    typed, dim, reset = style
    before = _rewrites(rt)
    deadline = rest_at + REWRITE_WAIT_S
    while (left := deadline - time.perf_counter()) > 0:
        try:
            await asyncio.wait_for(ready.wait(), left)
        except TimeoutError:
            break
        ready.clear()
        again = await complete_at(rt, uri, line_no, col)
        line = again.text.split("\n")[0]
        if _rewrites(rt) == before:
            if line.strip() and line != first:  # the typing model's stream grew
                print(f"{line_no + 1:4} | {typed}{dim}{line}{reset}")
                print(f"       the typing model's line, {time.perf_counter() - rest_at:.1f} s after the rest")
                first = line
        elif line.strip() and line != first:
            print(f"{line_no + 1:4} | {typed}{dim}{line}{reset}")
            print(f"       the rewrite model's line, {time.perf_counter() - rest_at:.1f} s after the rest")
            return
    if _rewrites(rt) > before:
        print("       (the rewrite model kept the typing model's line)")
    else:
        print(f"       (no rewrite within {REWRITE_WAIT_S:.0f} s of rest)")
