"""Where the server's own time goes on the request path, stage by stage (issue 40).

In-process, with a real `Runtime` (its store, context engine, workspace index and
pipeline) and the loopback fake model (`tests/fakes/`): a workspace of real standard-library
files, two of them open, and requests at many fresh positions of those unchanged documents
(the user moved there, no edit in between: a click then Alt+\\, or a client that asks on
cursor moves). Per request it records the CPU time (the event loop's thread) of each
pipeline stage (gate, typing_through, debounce, typed_meanwhile, prompt, cached, attach,
generate, answer), inside `prompt` of the context build's steps (the cross-file step, the
local window, the far rows and names line, the mode), the boundary gate, the redaction and
the cache key, and from the token the request needed (the stream's first answer) to
`complete`'s return ("after the token"); then the p50 of each, and a cProfile top list
(`--cprofile-of`: a fresh prompt build, a whole request at a rested position, or that
request from the token it needed to its return).

Scenarios (`--scenario`, repeatable):
- `fresh`: a request at a fresh position, nothing prebuilt (what a request pays today);
- `rest`: the cursor-rest notification first (`lspAssist/cursorRest`), the request after
  the background work it queues has run;
- `jump`: a click (the cursor rests there), then the first key: a space typed at the
  cursor, its request sent with the edit (it races the edit's own prebuild), the key then
  taken back;
- `idle`: an idle wait before the request (what background work after didOpen leaves).

Timings are CPU time of this thread (`time.thread_time`), so a busy machine changes them
less than wall time; still, compare two checkouts in the same sitting, under a lock:

    flock /tmp/lsp-bench.lock .venv/bin/python -m benchmarks.request_profile [--positions 120]
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.common import FakeModelServer, arg_parser
from lsp_assist.documents.store import TextChange
from lsp_assist.domain import Cursor
from lsp_assist.pipeline import stages as stage_pkg
from lsp_assist.pipeline.request import CompletionRequest

FILES = (
    "json/decoder.py",
    "json/encoder.py",
    "json/scanner.py",
    "json/__init__.py",
    "textwrap.py",
    "shlex.py",
)
OPEN = ("json/decoder.py", "textwrap.py")
# The stages before the model call (`generate` starts it: its own work is the launcher's).
BEFORE_THE_CALL = ("gate", "typing_through", "debounce", "typed_meanwhile", "prompt", "cached", "attach")


class Recorder:
    """CPU milliseconds per label, per request (labels may nest: both are recorded)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, float]] = []
        self.current: dict[str, float] = defaultdict(float)
        self.on = False
        self.token_at: float | None = None  # this thread's CPU clock when `quick` got its answer
        self.after_prof: cProfile.Profile | None = None  # `--cprofile-of after`: from the token
        self.after_on = False

    @contextmanager
    def span(self, label: str) -> Iterator[None]:
        t0 = time.thread_time()
        try:
            yield
        finally:
            if self.on:
                self.current[label] += (time.thread_time() - t0) * 1000.0

    def end_request(self) -> None:
        if self.token_at is not None:
            self.current["after the token"] = (time.thread_time() - self.token_at) * 1000.0
        self.token_at = None
        self.requests.append(dict(self.current))
        self.current = defaultdict(float)

    def medians(self) -> dict[str, float]:
        """p50 per label over every request (0 where a request did not pass there)."""
        labels = {k for r in self.requests for k in r}
        return {k: statistics.median([r.get(k, 0.0) for r in self.requests]) for k in sorted(labels)}


def _wrap_method(rec: Recorder, owner: Any, name: str, label: str) -> Callable[[], None]:
    orig = getattr(owner, name)

    def wrapped(*a: Any, **k: Any) -> Any:
        with rec.span(label):
            return orig(*a, **k)

    setattr(owner, name, wrapped)
    return lambda: setattr(owner, name, orig)


def _time_the_token(rec: Recorder) -> Callable[[], None]:
    """Mark when a stream's first answer (`quick`) is set: the token the request needed.
    From there to `complete`'s return is the answer path (post-processing, the stream's
    own bookkeeping that runs before the request resumes, the answer stage, the engine's
    tail)."""
    from lsp_assist.pipeline import inflight

    class Marked(asyncio.Future[str]):
        def set_result(self, result: str) -> None:
            if rec.on and rec.token_at is None:
                rec.token_at = time.thread_time()
            if rec.after_prof is not None and not rec.after_on:
                rec.after_on = True
                rec.after_prof.enable()
            super().set_result(result)

    orig = inflight.InflightStream.__init__

    def init(self: Any, *a: Any, **k: Any) -> None:
        orig(self, *a, **k)
        self.quick = Marked(loop=asyncio.get_running_loop())

    inflight.InflightStream.__init__ = init  # type: ignore[method-assign]
    return lambda: setattr(inflight.InflightStream, "__init__", orig)


def _instrument(rec: Recorder) -> list[Callable[[], None]]:
    """Timers around the stages and the prompt's steps (class attributes: every instance)."""
    from lsp_assist.context import assembler as asm
    from lsp_assist.context.builder import ContextEngine
    from lsp_assist.context.sources import other_files as of
    from lsp_assist.pipeline import prompt as pr

    undo: list[Callable[[], None]] = []
    undo.append(_time_the_token(rec))
    wrapped_stages = []
    for st in stage_pkg.STAGES:

        def make(st: Any = st) -> Any:
            async def timed(s: Any, sv: Any) -> Any:
                # The stage's own CPU: the thread's time while the stage runs, less what other
                # tasks ran during its awaits (one request at a time here: nothing else runs
                # but background work it queued, which is charged to "background").
                t0 = time.thread_time()
                try:
                    return await st(s, sv)
                finally:
                    if rec.on:
                        rec.current["stage." + st.__name__] += (time.thread_time() - t0) * 1000.0

            return timed

        wrapped_stages.append(make())
    from lsp_assist.pipeline import engine as eng

    orig_stages = eng.STAGES
    eng.STAGES = tuple(wrapped_stages)
    undo.append(lambda: setattr(eng, "STAGES", orig_stages))
    for owner, name, label in (
        (pr.PromptBuilder, "for_open", "prompt.total"),
        (pr.PromptBuilder, "_others", "prompt.others"),
        (pr.PromptBuilder, "_finish", "prompt.finish (gate, redact, key)"),
        (pr.PromptBuilder, "key", "prompt.finish.key"),
        (ContextEngine, "build", "prompt.context_build"),
        (asm.Assembler, "_start", "build.start (tree, around)"),
        (asm.Assembler, "_other_files", "build.other_files"),
        (of.OtherFiles, "_inputs", "build.other_files.inputs"),
        (of.OtherFiles, "_gather", "build.other_files.gather"),
        (asm.Assembler, "_local", "build.local"),
        (asm.Assembler, "_rest_and_names", "build.rest_and_names"),
        (asm, "mode_at", "build.mode"),
    ):
        undo.append(_wrap_method(rec, owner, name, label))
    return undo


def _workspace(tmp: Path) -> Path:
    lib = Path(json.__file__).resolve().parents[1]
    root = tmp / "ws"
    for name in FILES:
        dst = root / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lib / name, dst)
    return root


def _positions(text: str, n: int, rng: random.Random) -> list[Cursor]:
    """Fresh positions: the end of a random non-blank code line."""
    lines = text.split("\n")
    rows = [i for i, ln in enumerate(lines) if ln.strip() and not ln.strip().startswith("#")]
    return [Cursor(r, len(lines[r])) for r in rng.sample(rows, min(n, len(rows)))]


async def _run(args: Any, root: Path, fake: FakeModelServer) -> dict[str, Any]:
    from tests.fakes.runtimes import openai_runtime

    rt = openai_runtime(fake, root)
    rt.start_background_index()
    for _ in range(200):  # the workspace index, as after start-up
        await asyncio.sleep(0.05)
        if rt.context.symbols.file_count() >= len(FILES):
            break
    engine = rt.engine
    assert engine is not None
    uris = {}
    for name in OPEN:
        p = root / name
        uri = p.as_uri()
        rt.store.open(uri, "python", 1, p.read_text(encoding="utf-8"), str(p))
        uris[name] = uri
    await asyncio.sleep(0.2)
    # What the background does after didOpen (every row's cross-file memos, in slices) is
    # done before the first request: its slices would run during the requests' awaits and
    # be charged to their labels. A user who opened the file a second ago finds it done.
    for _ in range(500):
        if rt.prebuilder.rows_warmed >= len(OPEN):
            break
        await asyncio.sleep(0.02)
    rng = random.Random(args.seed)
    todo = []
    for uri in uris.values():
        doc = rt.store.get(uri)
        assert doc is not None
        for c in _positions(doc.text, args.positions // len(uris), rng):
            todo.append((uri, c))
    rng.shuffle(todo)
    # Each scenario and kind its own positions: a position asked once is answered from the
    # typing-through memory or the cache afterwards, not from a fresh build.
    groups = 2 * len(args.scenario)
    per = len(todo) // groups
    rec = Recorder()
    undo = _instrument(rec)
    out: dict[str, Any] = {}
    try:
        for g, (scenario, invoked) in enumerate((s, i) for s in args.scenario for i in (False, True)):
            rec.requests = []
            rec.current = defaultdict(float)
            label = f"{scenario} {'Invoked' if invoked else 'Automatic'}"
            for uri, cursor in todo[g * per : (g + 1) * per]:
                fake.push(text="x = 1")
                c = Cursor(cursor.line, cursor.character)
                if scenario in ("rest", "jump"):
                    rt.note_cursor_rest(uri, None, cursor)
                    await asyncio.sleep(0.03)
                elif scenario == "idle":
                    await asyncio.sleep(0.03)
                doc = rt.store.get(uri)
                assert doc is not None
                if scenario == "jump":  # the first key there: the request comes with the edit
                    rt.store.change(uri, doc.version + 1, [TextChange(cursor, cursor, " ")])
                    c = Cursor(cursor.line, cursor.character + 1)
                rec.on = True
                await engine.complete(CompletionRequest(uri, c, invoked=invoked))
                rec.on = False
                rec.end_request()
                if scenario == "jump":  # the key taken back: the same text for the next ones
                    rt.store.change(uri, doc.version + 1, [TextChange(cursor, c, "")])
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.002)
            out[label] = rec.medians()
            out[label]["n"] = per
        if args.cprofile:
            prof = cProfile.Profile()
            for k, (uri, cursor) in enumerate(todo):
                if args.cprofile_of in ("prompt", "fresh"):
                    engine.prompts._memo.forget(uri)  # a fresh build at each
                    if args.cprofile_of == "prompt":  # `fresh`: the version's memos kept
                        engine.prompts.context.other_files.clear()
                    prof.enable()
                    engine.prompts.for_open(uri, cursor, "fast")
                    prof.disable()
                    continue
                # The whole request at a rested position, a new answer each time.
                fake.push(text=f"x = {k}")
                engine.answers.forget(uri)
                rt.note_cursor_rest(uri, None, cursor)
                await asyncio.sleep(0.03)
                built = engine.prompts.for_open(uri, cursor, "fast")
                if built is not None:  # asked before in a scenario: not from the cache now
                    engine.answers.cache.delete(built.key)
                if args.cprofile_of == "after":  # from the token the request needed
                    rec.after_prof, rec.after_on = prof, False
                else:
                    prof.enable()
                await engine.complete(CompletionRequest(uri, cursor, invoked=True))
                prof.disable()
                rec.after_prof, rec.after_on = None, False
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats(args.cprofile_sort).print_stats(args.cprofile)
            out["cprofile"] = s.getvalue()
    finally:
        for u in undo:
            u()
        await engine.aclose()
    return out


def main() -> None:
    ap = arg_parser(__doc__)
    ap.add_argument("--positions", type=int, default=240, help="fresh positions, split among the scenarios")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scenario", action="append", choices=["fresh", "rest", "jump", "idle"], default=None)
    ap.add_argument("--cprofile", type=int, default=25, help="rows of the cProfile top list (0: none)")
    ap.add_argument(
        "--cprofile-of",
        choices=["prompt", "fresh", "request", "after"],
        default="prompt",
        help="what the top list profiles: a fresh prompt build (`fresh`: with the version's"
        " background memos kept), a whole request at a rested position, or that request from"
        " the token it needed to its return",
    )
    ap.add_argument("--cprofile-sort", default="cumulative", help="cumulative, tottime, ... (pstats)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()
    args.scenario = args.scenario or ["fresh", "rest", "jump"]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("LSP_ASSIST_CACHE_DIR", str(Path(tmp) / "cache"))
        os.environ.setdefault("LSP_ASSIST_CONFIG", str(Path(tmp) / "no-user-config.toml"))
        os.environ.setdefault("LSP_ASSIST_POLICY", str(Path(tmp) / "no-policy.toml"))
        root = _workspace(Path(tmp))
        with FakeModelServer() as fake:
            out = asyncio.run(_run(args, root, fake))
    prof = out.pop("cprofile", "")
    labels = list(out)
    rows = sorted({k for v in out.values() for k in v if k != "n"})
    print(f"CPU ms p50 per request ({out[labels[0]]['n']} positions in {', '.join(OPEN)})")
    print(f"{'':44}" + "".join(f"{lb:>20}" for lb in labels))
    for r in rows:
        print(f"{r:44}" + "".join(f"{out[lb].get(r, 0.0):>20.3f}" for lb in labels))
    before = [f"stage.{n}" for n in BEFORE_THE_CALL]
    sums = [sum(out[lb].get(r, 0.0) for r in before) for lb in labels]
    print(f"{'before the call (sum of p50s)':44}" + "".join(f"{v:>20.3f}" for v in sums))
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1))
    if prof:
        print(prof)


if __name__ == "__main__":
    main()
