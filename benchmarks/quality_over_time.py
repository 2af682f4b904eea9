"""Quality over time, as the user sees it: what is on screen 0, 1, 2 and 5 s after a rest.

Issue 36, item 5. Lines of real code (`context_recall`'s corpora: the standard library and a
PyPI package by default; each file in the tuning or the validation half by `half_of`) are cut
at a token boundary (`--cut word`: inside a word; `--cut blank`: right after a typed blank),
and an editor is played over real stdio against `lsp-assist serve`:

- **typing**: the file is opened with the line's text gone (its indentation kept); the user
  reads for 2 s (the editor sends `lspAssist/cursorRest` after 200 ms, as both clients do),
  then types the start of the line key by key, 80 ms apart, each key a didChange and an
  Automatic `inlineCompletion` (the previous request cancelled, as VS Code does), and stops;
- **jump**: a fresh file, the line already cut, opened and asked at once (Automatic).

After the last key (the rest), whenever the server sends `lspAssist/suggestionReady` for the
document's version and the cursor, the editor asks again (Automatic) unless a request is on
its way, as the Neovim client does; an answer replaces the ghost text (an empty one hides
it). What is on screen is the first line of the newest answer to a request made at the final
version (an item's `range` applied to the line, as the clients do). Scored against the rest of
the developer's line, both whitespace-trimmed:

- **exact**: the ghost text's first line is the rest of the line;
- **first tok**: its first token (identifier, number or operator) is the rest's first token;
- **sim**: `difflib` ratio of the two (0 when nothing is shown);

at 0 (the first ghost text, whenever it came), 1, 2 and 5 s after the rest. Times: the first
ghost text after the rest (p50/p90), and the **rewrite**: the first answer after it whose first
line differs from the first ghost's and does not just extend it (p50 over the positions that
got one, and how many did, within `--observe` seconds).

The **floor** per position and model, from rates measured here at the start with `llama_cpp`
(1 generation thread and up to 4 prompt threads, as the server's defaults): new prompt tokens
/ prompt rate + (line tokens + 1) / generation rate. New prompt tokens: typing, the typed
characters (the rest of the file could have been read while the user read it); jump, a cold
window of `--floor-chars` characters around the cursor (75% before it, 25% after).

Configurations, each its own server per scenario (so no answer cached in one scenario serves
the other), in one run: `gemma` (`local.model = "gemma3-270m"`, `refine_model = ""`), `coder`
(`model = "qwen2.5-coder-1.5b"`, `refine_model = ""`), `today` (no configuration, checkout
`base`), `new` (no configuration, checkout `new`). Escalation (`lspAssist.escalate`) at
`--escalations` further positions per corpus on `today` and `new`: time to the answer and its
first line scored the same way (`--single-on base`: the two single-model configurations on
today's checkout instead of the new one). Each server gets a fresh `LSP_ASSIST_CACHE_DIR`, the
shared `LSP_ASSIST_MODELS_DIR` (the 1.1 GB coder file is joined once), its own `LSP_ASSIST_CONFIG`,
and a workspace holding the positions' packages (target lines blank on disk). Before the
positions, a warm-up session (two typed lines and rests) and a wait until the server's CPU
is idle: the figures are after the model load.

    .venv/bin/python -m benchmarks.quality_over_time --checkout base=/work/wt-base \\
        --checkout new=/work/main [--positions 6] [--configs gemma,coder,today,new] [--scenarios typing]
        [--corpus stdlib --corpus pypi:rich==13.9.4] [--seed 1] [--time-limit 1500]

Run it alone (2 cores): every configuration is measured on the same machine in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, percentile
from benchmarks.context_recall import corpus_loaders, half_of, prose_rows
from benchmarks.latency import insert, open_doc
from benchmarks.rpc_client import RpcClient

KEY_GAP_S = 0.08  # between two keys
READ_S = 2.0  # the user reads the file before typing
REST_NOTIFY_S = 0.2  # both clients send lspAssist/cursorRest 200 ms after the cursor stops
CHECKPOINTS = (0.0, 1.0, 2.0, 5.0)  # 0: the first ghost text, whenever it came
AUTOMATIC = 2
NOTIFY_READY = "lspAssist/suggestionReady"
NOTIFY_REST = "lspAssist/cursorRest"
CMD_ESCALATE = "lspAssist.escalate"
GEMMA, CODER = "gemma3-270m", "qwen2.5-coder-1.5b"
DEFAULT_CORPORA = ("stdlib", "pypi:rich==13.9.4")
MODELS_DIR = Path("~/.cache/lsp-assist-bench-models").expanduser()
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|\*\*=?|//=?|->|[=!<>+\-*/%&|^@]=|<<|>>|\S")
_WORD = re.compile(r"[A-Za-z_]\w{3,}")  # a word a user may stop inside (`--cut word`)
_BRACKETS_ONLY = re.compile(r"^[\s()\[\]{},:;]*$")


@dataclass(frozen=True)
class Config:
    """One configuration: a checkout and a configuration file (None: no configuration)."""

    key: str
    label: str
    checkout: str  # a name of --checkout
    toml: str | None
    escalate: bool = False  # escalation is measured on it too
    writers: tuple[str, ...] = (GEMMA, CODER)  # first ghost's model, rewrite's model (floor)


CONFIGS = (
    Config(
        "gemma", "Gemma alone", "new", f'[local]\nmodel = "{GEMMA}"\nrefine_model = ""\n', writers=(GEMMA,)
    ),
    Config(
        "coder",
        "code model alone",
        "new",
        f'[local]\nmodel = "{CODER}"\nrefine_model = ""\n',
        writers=(CODER,),
    ),
    Config("today", "today: Gemma + rewrite", "base", None, escalate=True),
    Config("new", "new assignment", "new", None, escalate=True),
)
SCENARIOS = ("typing", "jump")


# -- positions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """A line of real code cut at a token boundary: the user types `typed`, `rest` is wanted."""

    corpus: str
    half: str
    rel: str  # the file's path in the workspace
    text: str  # the original file
    row: int
    indent: str
    typed: str
    rest: str

    def lines(self) -> list[str]:
        return self.text.split("\n")

    def blank_text(self) -> str:
        """The file with the line's text gone, its indentation kept (typing starts here)."""
        lines = self.lines()
        lines[self.row] = self.indent
        return "\n".join(lines)

    def cut_text(self) -> str:
        """The file with the line cut after `typed` (where the typing stops, where a jump lands)."""
        lines = self.lines()
        lines[self.row] = self.indent + self.typed
        return "\n".join(lines)


def _is_code(line: str) -> bool:
    s = line.strip()
    return (
        len(s) >= 8
        and not s.startswith(("#", '"', "'"))
        and not _BRACKETS_ONLY.match(s)
        and re.search(r"[A-Za-z_]", s) is not None
    )


def cut_limit(code: str) -> int:
    """The most characters a user types of `code` before stopping."""
    return min(24, int(len(code) * 0.6))


def after_blanks(code: str, limit: int) -> list[int]:
    """The places right after a typed blank (`return `, `x = `) within `limit` characters,
    with code right after it and 3 or more characters left."""
    ok = [i + 1 for i, ch in enumerate(code[:limit]) if ch == " " and code[i + 1 : i + 2] not in ("", " ")]
    return [at for at in ok if at >= 2 and len(code[at:].strip()) >= 3]


def _cut(code: str, rng: random.Random, inside: bool = False, blank: bool = False) -> int | None:
    """Where the user stops: the end of a token, after 2-24 characters, 3 or more left;
    `inside`: inside a word instead (2 or more of its characters typed and 2 or more left);
    `blank`: right after a typed blank (`return `, `x = `), 3 or more left."""
    limit = cut_limit(code)
    if blank:
        ok = after_blanks(code, limit)
    elif inside:
        ok = [m.start() + k for m in _WORD.finditer(code) for k in range(2, len(m.group()) - 1)]
        ok = [at for at in ok if 2 <= at <= limit]
    else:
        ends = [m.end() for m in _TOKEN.finditer(code)]
        ok = [e for e in ends if 2 <= e <= limit and len(code[e:].strip()) >= 3]
    return rng.choice(ok) if ok else None


def pick_places(
    name: str,
    packages: dict[str, dict[str, str]],
    n: int,
    rng: random.Random,
    inside: bool = False,
    blank: bool = False,
) -> list[Place]:
    """`n` places of corpus `name`, one per file, half from each half where it has enough;
    `inside`: each line cut inside a word, `blank`: after a typed blank (`_cut`)."""
    by_half: dict[str, list[tuple[str, str, str]]] = {"tuning": [], "validation": []}
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-")
    for pkg, files in sorted(packages.items()):
        for path, text in sorted(files.items()):
            if 40 <= text.count("\n") and len(text) <= 80_000:
                rel = f"{slug}/{pkg}/{os.path.basename(path)}"
                by_half[half_of(path)].append((path, rel, text))
    out: list[Place] = []
    want = {"tuning": n // 2, "validation": n - n // 2}
    for half, candidates in by_half.items():
        rng.shuffle(candidates)
        got = 0
        for _path, rel, text in candidates:
            if got >= want[half]:
                break
            lines = text.split("\n")
            prose = prose_rows(text)
            rows = [i for i, line in enumerate(lines) if i not in prose and _is_code(line)]
            rng.shuffle(rows)
            for row in rows[:20]:
                line = lines[row]
                code = line.strip()
                at = _cut(code, rng, inside, blank)
                if at is None:
                    continue
                indent = line[: len(line) - len(line.lstrip())]
                out.append(Place(name, half, rel, text, row, indent, code[:at], code[at:].rstrip()))
                got += 1
                break
    return out


def write_workspace(ws: Path, places: list[Place], corpora: dict[str, dict[str, dict[str, str]]]) -> None:
    """The positions' packages under `ws`, every target line blank on disk (no file the index
    reads holds a line to be predicted)."""
    targets: dict[str, set[int]] = {}
    for p in places:
        targets.setdefault(p.rel, set()).add(p.row)
    pkgs = {p.rel.rsplit("/", 1)[0] for p in places}
    for name, packages in corpora.items():
        slug = re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-")
        for pkg, files in packages.items():
            if f"{slug}/{pkg}" not in pkgs:
                continue
            for path, text in files.items():
                rel = f"{slug}/{pkg}/{os.path.basename(path)}"
                lines = text.split("\n")
                for row in targets.get(rel, ()):
                    line = lines[row]
                    lines[row] = line[: len(line) - len(line.lstrip())]
                dest = ws / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text("\n".join(lines), encoding="utf-8")


# -- scoring ----------------------------------------------------------------------------------


def first_token(s: str) -> str:
    m = _TOKEN.search(s)
    return m.group(0) if m else ""


@dataclass(frozen=True)
class Score:
    exact: bool
    first: bool
    sim: float
    shown: bool


def score(ghost: str | None, rest: str) -> Score:
    g, r = (ghost or "").strip(), rest.strip()
    if not g:
        return Score(False, False, 0.0, False)
    return Score(g == r, first_token(g) == first_token(r), difflib.SequenceMatcher(None, g, r).ratio(), True)


# -- the editor -------------------------------------------------------------------------------


def u16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def from_u16(line: str, ch: int) -> int:
    """The Python index of UTF-16 column `ch` in `line` (clamped)."""
    units = 0
    for i, c in enumerate(line):
        if units >= ch:
            return i
        units += 2 if ord(c) > 0xFFFF else 1
    return len(line)


def shown_line(resp: dict[str, Any], line: str, col: int) -> str:
    """The ghost text's first line after the cursor at `col` of `line` for an answer: its first
    item's text put over its range (or at the cursor), as the clients draw it."""
    res = resp.get("result") or {}
    items = res.get("items", []) if isinstance(res, dict) else res
    if not items:
        return ""
    item = items[0]
    text = item.get("insertText")
    if isinstance(text, dict):  # a snippet string
        text = text.get("value", "")
    text = str(text or "")
    start = end = col
    rng = item.get("range")
    if rng and rng["start"]["line"] == rng["end"]["line"]:
        start = min(col, from_u16(line, rng["start"]["character"]))
        end = max(col, from_u16(line, rng["end"]["character"]))
    first, newline, _ = text.partition("\n")
    new = line[:start] + first + ("" if newline else line[end:])
    prefix = line[:col]
    return new[len(prefix) :] if new.startswith(prefix) else "\x00" + new  # \x00: the typed text changed


class _Watched(list):  # type: ignore[type-arg]
    """The client's notification list, calling back on each one as it arrives."""

    def __init__(self, on: Callable[[str, Any], None]) -> None:
        super().__init__()
        self.on = on

    def append(self, item: Any) -> None:
        super().append(item)
        self.on(*item)


@dataclass
class Timeline:
    """What one position showed after the rest: (seconds after the rest, first line)."""

    shown: list[tuple[float, str]] = field(default_factory=list)
    ready: int = 0  # suggestionReady for this version and cursor
    asked_again: int = 0

    def first(self) -> tuple[float, str] | None:
        return next(((t, s) for t, s in self.shown if s.strip()), None)

    def at(self, t: float) -> str:
        if t == 0.0:
            got = self.first()
            return got[1] if got else ""
        text = ""
        for when, s in self.shown:
            if when <= t:
                text = s
        return text

    def rewrite(self) -> tuple[float, str] | None:
        got = self.first()
        if got is None:
            return None
        base = got[1].strip()
        for when, s in self.shown:
            s2 = s.strip()
            if when > got[0] and s2 and s2 != base and not s2.startswith(base):
                return when, s
        return None


class Editor:
    """One editor window on a server: a document, the cursor, the ghost text's history."""

    def __init__(self, client: RpcClient) -> None:
        self.c = client
        client.notifications = _Watched(self._notified)
        self.uri = ""
        self.version = 0
        self.line = ""  # the cursor's line as the editor has it
        self.row = 0
        self.col = 0  # Python index in `line`
        self.rest_version: int | None = None
        self.t_rest = 0.0
        self.pending: int | None = None
        self.timeline = Timeline()

    def open(self, uri: str, text: str, row: int, col: int) -> None:
        self.uri, self.version, self.row, self.col = uri, 1, row, col
        self.line = text.split("\n")[row]
        self.rest_version, self.timeline, self.pending = None, Timeline(), None
        open_doc(self.c, uri, text, 1)

    def key(self, ch: str) -> None:
        self.version += 1
        insert(self.c, self.uri, self.version, self.row, u16(self.line[: self.col]), ch)
        self.line = self.line[: self.col] + ch + self.line[self.col :]
        self.col += len(ch)

    def rest(self) -> None:
        """The user stops here: answers from now on are what the screen shows."""
        self.rest_version = self.version
        self.t_rest = time.monotonic()

    def cursor_rest(self) -> None:
        self.c.notify(
            NOTIFY_REST,
            {
                "textDocument": {"uri": self.uri, "version": self.version},
                "position": {"line": self.row, "character": u16(self.line[: self.col])},
            },
        )

    def position(self) -> dict[str, int]:
        return {"line": self.row, "character": u16(self.line[: self.col])}

    def ask(self) -> None:
        if self.pending is not None:
            self.c.cancel(self.pending)
        msg_id, fut = self.c.request(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": self.uri},
                "position": self.position(),
                "context": {"triggerKind": AUTOMATIC},
            },
        )
        self.pending = msg_id
        version, line, col = self.version, self.line, self.col
        fut.add_done_callback(lambda f: self._answered(msg_id, version, line, col, f))

    def _answered(self, msg_id: int, version: int, line: str, col: int, fut: asyncio.Future[Any]) -> None:
        if msg_id != self.pending or fut.cancelled():
            return  # superseded: the editor ignores it
        self.pending = None
        if self.rest_version is None or version != self.rest_version:
            return
        t = self.c.received_at.get(msg_id, time.monotonic()) - self.t_rest
        self.timeline.shown.append((t, shown_line(fut.result(), line, col)))

    def _notified(self, method: str, params: Any) -> None:
        if method != NOTIFY_READY or not isinstance(params, dict) or params.get("uri") != self.uri:
            return
        if self.rest_version is None or params.get("version") not in (None, self.version):
            return
        if params.get("position") not in (None, self.position()):
            return
        self.timeline.ready += 1
        if self.pending is None:  # a request on its way answers the latest text anyway
            self.timeline.asked_again += 1
            self.ask()

    def close(self) -> None:
        if self.pending is not None:
            self.c.cancel(self.pending)
        self.pending, self.rest_version = None, None
        self.c.notify("textDocument/didClose", {"textDocument": {"uri": self.uri}})


# -- a machine whose llama.cpp build faults in its repacked (AMX) weights ---------------------

#: Put on a server's PYTHONPATH (as `sitecustomize`): llama-cpp-python's default model
#: parameters get `use_extra_bufts` off, as `LlamaEngine(repack=False)` does for one load.
_NO_EXTRA_BUFTS = """
import importlib.abc, importlib.machinery, sys


class _NoExtraBufts(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "llama_cpp.llama_cpp":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            original = module.llama_model_default_params

            def params():
                p = original()
                if hasattr(p, "use_extra_bufts"):
                    p.use_extra_bufts = False
                return p

            module.llama_model_default_params = params

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _NoExtraBufts())
"""
_PROBE = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, n_threads_batch=1, verbose=False)
llm.eval(llm.tokenize(b"def f(x):\\n    return x", add_bos=True))
"""


def extra_bufts_fault(python: str, models_dir: Path) -> bool:
    """Whether evaluating with llama.cpp's extra buffer types (weights repacked, AMX tiles
    where the CPU lists them) crashes here: seen on a VM whose CPU lists `amx_tile` but whose
    kernel faults on `ldtilecfg` (the process dies with SIGSEGV at its first evaluation)."""
    os.environ["LSP_ASSIST_MODELS_DIR"] = str(models_dir)
    from lsp_assist.providers.models import resolve_model

    path = resolve_model(GEMMA, models_dir)
    done = subprocess.run([python, "-c", _PROBE, str(path)], capture_output=True, timeout=300)
    return done.returncode != 0


def shim_dir(tmp: Path) -> Path:
    d = tmp / "no-extra-bufts"
    d.mkdir(exist_ok=True)
    (d / "sitecustomize.py").write_text(_NO_EXTRA_BUFTS, encoding="utf-8")
    return d


# -- a server per configuration and scenario ---------------------------------------------------


def cpu_s(pid: int) -> float:
    """CPU seconds `pid` has used (all its threads)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def wait_idle(pid: int, limit_s: float, window_s: float = 1.0, share: float = 0.1) -> float:
    """Wait until `pid` used under `share` of a core over `window_s` (or `limit_s` passed)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        before = cpu_s(pid)
        await asyncio.sleep(window_s)
        if cpu_s(pid) - before < share * window_s:
            break
    return time.monotonic() - t0


@dataclass
class Server:
    cfg: Config
    client: RpcClient
    editor: Editor
    log: Path
    root: Path


@contextlib.asynccontextmanager
async def server(cfg: Config, checkout: Path, ws: Path, work: Path, args: argparse.Namespace) -> Any:
    work.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (set-up, before timing)
    conf = work / "config.toml"
    conf.write_text(cfg.toml or "", encoding="utf-8")
    log = work / "server.log"
    env = {
        "LSP_ASSIST_CACHE_DIR": str(work / "cache"),
        "LSP_ASSIST_MODELS_DIR": str(args.models_dir),
        "LSP_ASSIST_CONFIG": str(conf),
        "LSP_ASSIST_POLICY": str(work / "no-policy.toml"),
        "PYTHONPATH": os.pathsep.join([str(checkout), *([str(args.shim)] if args.shim else [])]),
    }
    # -P: the workspace (the cwd) never shadows a module; PYTHONPATH names the checkout.
    cmd = [
        args.python,
        "-P",
        "-m",
        "lsp_assist",
        "--log-level",
        args.log_level,
        "--log-file",
        str(log),
        "serve",
    ]
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        client = await RpcClient.start(cmd, env)
    finally:
        os.chdir(cwd)
    try:
        await client.initialize(ws.as_uri(), {})
        yield Server(cfg, client, Editor(client), log, ws)
    finally:
        await client.close()
        if args.keep_logs:
            args.keep_logs.mkdir(parents=True, exist_ok=True)
            kept = args.keep_logs / f"{cfg.label}-{work.name}.log"
            with contextlib.suppress(OSError):
                kept.write_bytes(log.read_bytes())
            audit = work / "cache" / "audit" / "audit.jsonl"
            with contextlib.suppress(OSError):
                kept.with_suffix(".audit.jsonl").write_bytes(audit.read_bytes())


async def warm_up(srv: Server, place: Place) -> float:
    """Two typed lines with rests at a place not measured, then an idle server: the models are
    loaded (those a role loads on first use too) and the index built."""
    t0 = time.monotonic()
    pid = srv.client.proc.pid
    await wait_idle(pid, 300.0, window_s=2.0)
    for attempt in range(2):
        await type_at(srv, place, uri_tag=f"warm{attempt}", observe_s=4.0)
        await wait_idle(pid, 300.0, window_s=2.0)
    return time.monotonic() - t0


def _uri(srv: Server, place: Place, tag: str) -> str:
    path = srv.root / place.rel
    return (path.with_name(f"{path.stem}.{tag}{path.suffix}") if tag else path).as_uri()


async def type_at(srv: Server, place: Place, uri_tag: str = "", observe_s: float = 6.5) -> Timeline:
    ed = srv.editor
    ed.open(_uri(srv, place, uri_tag), place.blank_text(), place.row, len(place.indent))
    loop = asyncio.get_running_loop()
    loop.call_later(REST_NOTIFY_S, ed.cursor_rest)
    await asyncio.sleep(READ_S)
    for i, ch in enumerate(place.typed):
        ed.key(ch)
        if i == len(place.typed) - 1:
            ed.rest()
        ed.ask()
        if i < len(place.typed) - 1:
            await asyncio.sleep(KEY_GAP_S)
    loop.call_later(REST_NOTIFY_S, ed.cursor_rest)
    await asyncio.sleep(max(0.0, ed.t_rest + observe_s - time.monotonic()))
    timeline = ed.timeline
    ed.close()
    return timeline


async def jump_to(srv: Server, place: Place, observe_s: float = 6.5) -> Timeline:
    ed = srv.editor
    ed.open(_uri(srv, place, ""), place.cut_text(), place.row, len(place.indent) + len(place.typed))
    ed.rest()
    ed.ask()
    asyncio.get_running_loop().call_later(REST_NOTIFY_S, ed.cursor_rest)
    await asyncio.sleep(max(0.0, ed.t_rest + observe_s - time.monotonic()))
    timeline = ed.timeline
    ed.close()
    return timeline


@dataclass
class Escalated:
    place: Place
    seconds: float | None
    text: str
    error: str = ""


async def escalate_at(srv: Server, place: Place, timeout_s: float) -> Escalated:
    ed = srv.editor
    col = len(place.indent) + len(place.typed)
    ed.open(_uri(srv, place, "esc"), place.cut_text(), place.row, col)
    t0 = time.monotonic()
    try:
        resp = await srv.client.call(
            "workspace/executeCommand",
            {"command": CMD_ESCALATE, "arguments": [ed.uri, ed.position()]},
            timeout=timeout_s,
        )
    except asyncio.TimeoutError:
        ed.close()
        return Escalated(place, None, "", f"no answer in {timeout_s:.0f} s")
    seconds = time.monotonic() - t0
    ed.close()
    res = resp.get("result") or {}
    text = str(res.get("text") or "") if isinstance(res, dict) else ""
    err = str(res.get("error") or "") if isinstance(res, dict) else str(resp.get("error", ""))
    return Escalated(place, seconds, text.split("\n", 1)[0], err)


def models_loaded(log: Path) -> str:
    """The model loads the server logged (info level), for the report."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return "no log"
    found = [ln.split("]", 1)[-1].strip() for ln in lines if " loaded" in ln and "model" in ln]
    return "; ".join(dict.fromkeys(found)) or "no model load logged"


# -- rates and the floor ----------------------------------------------------------------------


@dataclass
class Rates:
    prompt_tps: float
    gen_tps: float
    tokenize: Callable[[str], int]


@contextlib.contextmanager
def measured_rates(models_dir: Path, sample: str, no_extra_bufts: bool) -> Iterator[dict[str, Rates]]:
    """Each model's prompt and generation rate on this machine (`llama_cpp`, the server's
    default threads: 1 for generation, up to 4 for the prompt), measured once: a 512-token
    prompt of real code read in one batch, then 24 tokens one at a time (best of 2)."""
    os.environ["LSP_ASSIST_MODELS_DIR"] = str(models_dir)
    from llama_cpp import Llama

    from lsp_assist.providers.llama_engine import _model_params_without_repack
    from lsp_assist.providers.models import resolve_model

    out: dict[str, Rates] = {}
    loaded: list[Any] = []
    try:
        for name in (GEMMA, CODER):
            path = resolve_model(name, models_dir)
            with _model_params_without_repack(no_extra_bufts):
                llm: Any = Llama(
                    model_path=str(path),
                    n_ctx=1024,
                    n_batch=512,
                    n_threads=1,
                    n_threads_batch=max(1, min(4, os.cpu_count() or 1)),
                    verbose=False,
                )
            loaded.append(llm)
            toks = llm.tokenize(sample.encode(), add_bos=True)[:512]
            prompt, gen = [], []
            for _ in range(2):
                llm.reset()
                t0 = time.perf_counter()
                llm.eval(toks)
                prompt.append(len(toks) / (time.perf_counter() - t0))
                t0 = time.perf_counter()
                for tok in toks[1:25]:
                    llm.eval([tok])
                gen.append(24 / (time.perf_counter() - t0))

            def count(text: str, llm: Any = llm) -> int:
                return len(llm.tokenize(text.encode("utf-8", "surrogatepass"), add_bos=False, special=False))

            out[name] = Rates(max(prompt), max(gen), count)
        yield out
    finally:
        for llm in loaded:
            with contextlib.suppress(Exception):
                llm.close()


def floor_s(place: Place, scenario: str, rates: Rates, window_chars: int) -> float:
    """The physics floor of `place` for one model, in seconds after the rest."""
    if scenario == "typing":
        new = max(1, rates.tokenize(place.typed))
    else:
        text = place.cut_text()
        at = sum(len(x) + 1 for x in text.split("\n")[: place.row]) + len(place.indent) + len(place.typed)
        before = window_chars * 3 // 4
        new = rates.tokenize(text[max(0, at - before) : at] + text[at : at + window_chars - before])
    return new / rates.prompt_tps + (rates.tokenize(place.rest) + 1) / rates.gen_tps


# -- report -----------------------------------------------------------------------------------


def _share(xs: list[bool]) -> str:
    return f"{sum(xs) / len(xs):.0%}" if xs else "-"


def _ms(x: float | None) -> str:
    return "-" if x is None or x != x else f"{x * 1000:.0f}"


def print_tables(
    results: dict[tuple[str, str], list[tuple[Place, Timeline]]],
    escalations: dict[str, list[Escalated]],
    floors: dict[str, dict[str, list[float]]],
    configs: list[Config],
    observe_s: float,
) -> None:
    print("\n== what is on screen after the rest (all positions)")
    head = f"{'configuration':<24}{'scenario':<8}{'at':>5}{'n':>4}{'exact':>7}{'first tok':>10}{'sim':>6}"
    print(head + f"{'shown':>7}{'exact/today':>12}{'first/today':>12}{'sim/today':>10}")
    for cfg in configs:
        for scenario in SCENARIOS:
            rows = results.get((cfg.key, scenario), [])
            if not rows:
                continue
            base_rows = results.get(("today", scenario), [])
            for cp in CHECKPOINTS:
                sc = [score(tl.at(cp), p.rest) for p, tl in rows]
                exact, first = [s.exact for s in sc], [s.first for s in sc]
                sim = statistics.mean(s.sim for s in sc)
                ratios = ["", "", ""]
                if base_rows and cfg.key != "today":
                    bs = [score(tl.at(cp), p.rest) for p, tl in base_rows]
                    b = (sum(s.exact for s in bs), sum(s.first for s in bs), sum(s.sim for s in bs))
                    o = (sum(exact), sum(first), sum(s.sim for s in sc))
                    ratios = [f"{x / y:.2f}x" if y else "-" for x, y in zip(o, b, strict=True)]
                at = "first" if cp == 0 else f"{cp:.0f} s"
                print(
                    f"{cfg.label:<24}{scenario:<8}{at:>5}{len(sc):>4}{_share(exact):>7}{_share(first):>10}"
                    f"{sim:>6.2f}{_share([s.shown for s in sc]):>7}"
                    f"{ratios[0]:>12}{ratios[1]:>12}{ratios[2]:>10}"
                )
    print(f"\n== times after the rest, ms (observed {observe_s:.1f} s); floor p50 per model")
    print(
        f"{'configuration':<24}{'scenario':<8}{'first p50':>10}{'p90':>6}{'none':>5}{'rewrite p50':>12}"
        f"{'got':>6}{'ready':>6}{'floor G':>8}{'floor C':>8}{'first/fl':>9}{'rewr/fl':>8}"
    )
    for cfg in configs:
        for scenario in SCENARIOS:
            rows = results.get((cfg.key, scenario), [])
            if not rows:
                continue
            firsts = [f[0] for _, tl in rows if (f := tl.first()) is not None]
            rewrites = [r[0] for _, tl in rows if (r := tl.rewrite()) is not None]
            fl = floors.get(scenario, {})
            fg = statistics.median(fl[GEMMA]) if fl.get(GEMMA) else None
            fc = statistics.median(fl[CODER]) if fl.get(CODER) else None
            f50 = statistics.median(firsts) if firsts else None
            r50 = statistics.median(rewrites) if rewrites else None
            first_floor = fg if cfg.writers[0] == GEMMA else fc
            ratio_first = f"{f50 / first_floor:.1f}x" if f50 and first_floor else "-"
            ratio_rew = f"{r50 / fc:.1f}x" if r50 and fc and len(cfg.writers) > 1 else "-"
            ready = statistics.mean(tl.ready for _, tl in rows)
            f90 = percentile(firsts, 90) if firsts else None
            print(
                f"{cfg.label:<24}{scenario:<8}{_ms(f50):>10}{_ms(f90):>6}"
                f"{len(rows) - len(firsts):>5}{_ms(r50):>12}{f'{len(rewrites)}/{len(rows)}':>6}{ready:>6.1f}"
                f"{_ms(fg):>8}{_ms(fc):>8}{ratio_first:>9}{ratio_rew:>8}"
            )
    print("\n== at 2 s, per corpus and half (exact / first tok / sim)")
    groups = sorted({(p.corpus, p.half) for rows in results.values() for p, _ in rows})
    print(f"{'configuration':<24}{'scenario':<8}" + "".join(f"{c + ' ' + h:>30}" for c, h in groups))
    for cfg in configs:
        for scenario in SCENARIOS:
            rows = results.get((cfg.key, scenario), [])
            if not rows:
                continue
            cells = []
            for c, h in groups:
                sc = [score(tl.at(2.0), p.rest) for p, tl in rows if (p.corpus, p.half) == (c, h)]
                cell = "-"
                if sc:
                    sim = statistics.mean(s.sim for s in sc)
                    shares = f"{_share([s.exact for s in sc])} / {_share([s.first for s in sc])}"
                    cell = f"{shares} / {sim:.2f} n={len(sc)}"
                cells.append(f"{cell:>30}")
            print(f"{cfg.label:<24}{scenario:<8}" + "".join(cells))
    if escalations:
        print("\n== escalation (lspAssist.escalate at a freshly opened cut line)")
        cols = f"{'n':>4}{'p50 ms':>8}{'p90 ms':>8}{'exact':>7}{'first tok':>10}{'sim':>6}  errors"
        print(f"{'configuration':<24}{cols}")
        for key, runs in escalations.items():
            label = next(c.label for c in configs if c.key == key)
            secs = [r.seconds for r in runs if r.seconds is not None]
            sc = [score(r.text, r.place.rest) for r in runs]
            errs = sorted({r.error for r in runs if r.error})
            print(
                f"{label:<24}{len(runs):>4}{_ms(statistics.median(secs) if secs else None):>8}"
                f"{_ms(percentile(secs, 90) if secs else None):>8}{_share([s.exact for s in sc]):>7}"
                f"{_share([s.first for s in sc]):>10}{statistics.mean(s.sim for s in sc) if sc else 0:>6.2f}"
                f"  {'; '.join(errs) or '-'}"
            )


# -- main -------------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> int:
    t_start = time.monotonic()
    checkouts: dict[str, Path] = {"new": ROOT, **args.checkouts}
    wanted = args.configs.split(",")
    chosen = [replace(c, checkout=args.single_on) if c.key in ("gemma", "coder") else c for c in CONFIGS]
    configs = [c for c in chosen if c.key in wanted and c.checkout in checkouts]
    for c in chosen:
        if c.key in wanted and c.checkout not in checkouts:
            print(f"{c.label}: not run (no --checkout {c.checkout}=PATH)")
    rng = random.Random(args.seed)
    corpora: dict[str, dict[str, dict[str, str]]] = {}
    places: list[Place] = []
    extra: list[Place] = []  # escalation and warm-up places, never measured as positions
    for name, load in corpus_loaders(args.corpus or list(DEFAULT_CORPORA)).items():
        try:
            corpora[name] = load()
        except Exception as exc:  # a corpus this machine cannot fetch: skipped, said why
            print(f"corpus {name}: skipped ({exc})")
            continue
        wanted_n = args.positions + args.escalations + 1
        picked = pick_places(
            name, corpora[name], wanted_n, rng, inside=args.cut == "word", blank=args.cut == "blank"
        )
        # Measured: half from each half (as `pick_places` gives them); the rest escalates or warms up.
        halves = {h: [p for p in picked if p.half == h] for h in ("tuning", "validation")}
        want = {"tuning": args.positions // 2, "validation": args.positions - args.positions // 2}
        measured = [p for h, ps in halves.items() for p in ps[: want[h]]]
        places += measured
        extra += [p for p in picked if p not in measured]
    if not places:
        print("no positions")
        return 1
    warm = extra[-1]
    escal = [p for p in extra if p is not warm][: args.escalations * len(corpora)]
    per_corpus = ", ".join(f"{n} {sum(p.corpus == n for p in places)}" for n in corpora)
    print(
        f"{len(places)} positions ({per_corpus}), seed {args.seed}; typed"
        f" {statistics.median(len(p.typed) for p in places):.0f} characters p50, the rest"
        f" {statistics.median(len(p.rest) for p in places):.0f} p50; key gap {KEY_GAP_S * 1000:.0f} ms,"
        f" reading {READ_S:.0f} s; checkouts: " + ", ".join(f"{k}={v}" for k, v in checkouts.items()),
        flush=True,
    )
    fault = args.extra_bufts == "off" or (
        args.extra_bufts == "auto" and extra_bufts_fault(args.python, args.models_dir)
    )
    if fault:
        print(
            "llama.cpp's extra buffer types (repacked weights, AMX) crash this machine's build at the"
            " first evaluation: every server and the rate measurement run with use_extra_bufts off"
            " (a sitecustomize on the servers' PYTHONPATH), as the refine model always loads"
        )
    floors: dict[str, dict[str, list[float]]] = {}
    if not args.no_floor:
        sample = next(iter(corpora.values()))
        text = "\n".join(t for files in list(sample.values())[:1] for t in files.values())
        with measured_rates(args.models_dir, text, fault) as rates:
            for name, r in rates.items():
                print(
                    f"measured here: {name} prompt {r.prompt_tps:.0f} tokens/s, generation {r.gen_tps:.1f}/s"
                )
            for scenario in SCENARIOS:
                floors[scenario] = {
                    name: [floor_s(p, scenario, r, args.floor_chars) for p in places]
                    for name, r in rates.items()
                }
    results: dict[tuple[str, str], list[tuple[Place, Timeline]]] = {}
    escalations: dict[str, list[Escalated]] = {}
    scenarios = [s for s in SCENARIOS if s in args.scenarios.split(",")]
    sessions = len(configs) * len(scenarios)
    left = args.time_limit - (time.monotonic() - t_start)
    share = left / max(1, sessions)
    with tempfile.TemporaryDirectory(prefix="lsp-qot-") as td:
        tmp = Path(td)
        ws = tmp / "workspace"
        args.shim = shim_dir(tmp) if fault else None
        write_workspace(ws, [*places, *extra], corpora)
        for cfg in configs:
            for scenario in scenarios:
                t0 = time.monotonic()
                work = tmp / f"{cfg.key}-{scenario}"
                async with server(cfg, checkouts[cfg.checkout], ws, work, args) as srv:
                    warm_s = await warm_up(srv, warm)
                    rows: list[tuple[Place, Timeline]] = results.setdefault((cfg.key, scenario), [])
                    for place in places:
                        if time.monotonic() - t0 > share:
                            break
                        if scenario == "typing":
                            tl = await type_at(srv, place, observe_s=args.observe)
                        else:
                            tl = await jump_to(srv, place, observe_s=args.observe)
                        rows.append((place, tl))
                        if args.show:
                            seen = " | ".join(f"{t:.2f}s {x!r}" for t, x in tl.shown)
                            print(f"  {place.rel}:{place.row + 1} {place.typed!r} -> {place.rest!r}: {seen}")
                        await wait_idle(srv.client.proc.pid, 1.5, window_s=0.5)
                    if scenario == "jump" and cfg.escalate and escal:
                        for place in escal:
                            esc = await escalate_at(srv, place, args.escalation_timeout)
                            escalations.setdefault(cfg.key, []).append(esc)
                            if args.show:
                                got = f"{esc.seconds or 0:.2f}s {esc.text!r} {esc.error}"
                                print(f"  escalate {place.rel}:{place.row + 1} {place.rest!r}: {got}")
                            await wait_idle(srv.client.proc.pid, 3.0, window_s=0.5)
                    loaded = models_loaded(srv.log)
                print(
                    f"{cfg.label} / {scenario}: {len(rows)} positions in {time.monotonic() - t0:.0f} s"
                    f" (warm-up {warm_s:.0f} s); {loaded}",
                    flush=True,
                )
    print_tables(results, escalations, floors, configs, args.observe)
    print(f"\ntotal {time.monotonic() - t_start:.0f} s")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--checkout", action="append", default=[], help="NAME=PATH (base, new); new defaults to here"
    )
    ap.add_argument("--configs", default="gemma,coder,today,new", help="of: gemma, coder, today, new")
    ap.add_argument("--scenarios", default="typing,jump", help="of: typing, jump")
    ap.add_argument(
        "--corpus", action="append", default=None, help=f"context_recall corpora ({DEFAULT_CORPORA})"
    )
    ap.add_argument(
        "--single-on", default="new", help="the checkout that runs Gemma alone and the code model alone"
    )
    ap.add_argument("--positions", type=int, default=12, help="per corpus, half from each half")
    ap.add_argument("--escalations", type=int, default=2, help="escalation positions per corpus")
    ap.add_argument("--seed", type=int, default=1)
    cut_help = "typing stops at a token's end, inside a word or after a typed blank"
    ap.add_argument("--cut", choices=("token", "word", "blank"), default="token", help=cut_help)
    ap.add_argument("--observe", type=float, default=6.5, help="seconds watched after the rest")
    ap.add_argument(
        "--time-limit", type=float, default=1500.0, help="seconds for the whole run (shared evenly)"
    )
    ap.add_argument("--floor-chars", type=int, default=1500, help="the jump floor's cold prompt window")
    ap.add_argument("--show", action="store_true", help="print each position's answers as they came")
    ap.add_argument("--no-floor", action="store_true", help="skip the rate measurement")
    ap.add_argument("--escalation-timeout", type=float, default=60.0)
    ap.add_argument("--models-dir", type=Path, default=MODELS_DIR)
    ap.add_argument(
        "--extra-bufts",
        choices=("auto", "on", "off"),
        default="auto",
        help="llama.cpp's repacked weights: auto = off only where a probe crashes with them",
    )
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs the servers")
    ap.add_argument(
        "--log-level", default="info", help="the servers' log level (their logs are read for loads)"
    )
    ap.add_argument("--keep-logs", type=Path, default=None, help="copy each server's log here")
    args = ap.parse_args()
    args.checkouts = {}
    for spec in args.checkout:
        name, _, path = spec.partition("=")
        args.checkouts[name] = Path(path).resolve()
    return asyncio.run(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
