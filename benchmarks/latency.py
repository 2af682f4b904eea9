"""Latency benchmark: lsp-assist next to tabby-agent 1.5.0 and a naive baseline, all driven
over real stdio like an editor, in one run, against one loopback fake model.

The fake model has a set time to first token and token rate (it speaks the OpenAI streaming
API to lsp-assist and the naive server, and the Tabby `/v1/completions` API to tabby-agent,
answering Tabby when a stream would send the token that ends the first line). Measured:
- a cache miss, split where the model is: the server's own time before the model call
  (request written by the client -> the model server has read the HTTP request) and after
  the token it needed (the model wrote the token ending the first line -> the client has
  parsed the response); the client latency too;
- cache-hit and typing-through latency, and whether they made a model call;
- typing bursts of 12 keys with inter-key gaps drawn from log-normal typing profiles
  (`benchmarks/typing_trace.py`), each key a didChange plus an Automatic request, the
  previous one cancelled as VS Code does: model calls started per burst, and the latency
  of the last key's answer, for lsp-assist, lsp-assist with a 10-90 ms debounce in bursts,
  and naive.
Both clocks are `time.monotonic()` (CLOCK_MONOTONIC, system-wide on Linux), so times taken
in the fake model's process and in this client compare. Figures are printed, not asserted.

tabby-agent runs with its debounce set to 0 ms (`[completion.debounce] mode = "fixed"`) so
its figures are its own processing, like ours for Invoked requests; install it first with
`sh benchmarks/setup_peers.sh` (into the gitignored benchmarks/.peers/); without it the
benchmark says why and runs the others.

Also (issue 23): the first key after a pause at four kinds of positions in two real files of
the standard library (`benchmarks/positions.py`), Automatic and Invoked, each answer split into
the server's time before the model call and after the token that ends the first line, next
to the first-line and full-stream floors; and with --sweep, the debounce curve (calls per
burst against the last key's latency) on bursts typing real code, with the points chosen for
the embedded model and for a paid remote tier (docs/latency.md).

Usage: python -m benchmarks.latency [--ttft-ms 120] [--tokens-per-s 125] [--n 20] [--bursts 4]
       [--per-kind 3] [--skip-singles] [--skip-positions] [--skip-bursts] [--sweep]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, FakeModelProcess, Script, arg_parser, percentile, split_tokens
from benchmarks.positions import FILES, KINDS, Position, stdlib_positions
from benchmarks.rpc_client import RpcClient, server_cmd
from benchmarks.typing_trace import PROFILES, RECORDED_DIR, burst_gaps, recorded_bursts
from lsp_assist.bench.figures import first_item, item_text
from lsp_assist.bench.recipes import tabby_agent_recipe

COMPLETION = "return compute_total(items, tax_rate)\n    # more lines follow\n    return None\n"
NEWLINE_TOKEN = next(i for i, t in enumerate(split_tokens(COMPLETION)) if "\n" in t)
TABBY_CLI = ROOT / "benchmarks" / ".peers" / "node_modules" / "tabby-agent" / "dist" / "cli.js"
CURSOR = (8, 4)
PREFETCH_TOKENS = 31  # a distinctive size: prefetch calls are told apart in the fake's log
BURST_WORD = "total = items"
# The positions' model answer (issue 23's scenario): the first line ends at token 8 of 12.
POSITION_COMPLETION = "value = compute(x)\n    return value\n"
POSITION_NEWLINE = next(i for i, t in enumerate(split_tokens(POSITION_COMPLETION)) if "\n" in t)
POSITION_TOKENS = len(split_tokens(POSITION_COMPLETION))
# VS Code asks for inline completions 50 ms after the change that prompts them
# (InlineCompletionsDebounce, min = max = 50 ms); Neovim 0.12 200 ms.
EDITOR_GAP_MS = 50.0


def doc_text(i: int) -> str:
    return (
        f"# module {i}\n"
        "import math\n\n"
        "def compute_total(items, tax_rate):\n"
        "    subtotal = sum(item.price for item in items)\n"
        "    return subtotal * (1 + tax_rate)\n\n"
        f"def checkout_{i}(items, tax_rate):\n"
        "    \n"
    )


@dataclass
class Peer:
    name: str
    cmd: list[str]
    env: dict[str, str]
    method: str = "textDocument/inlineCompletion"
    init_options: dict[str, Any] | None = None
    client_info: dict[str, str] = field(default_factory=lambda: {"name": "latency-bench"})


def lsp_peer(kind: str, base_url: str, cache_dir: Path, completion: dict[str, Any] | None = None) -> Peer:
    env = {
        "LSP_ASSIST_CACHE_DIR": str(cache_dir),
        "LSP_ASSIST_CONFIG": str(cache_dir / "none.toml"),
        "LSP_ASSIST_POLICY": str(cache_dir / "none-policy.toml"),
        "LSP_ASSIST_LOG_LEVEL": "warning",
        "PYTHONPATH": str(ROOT),
    }
    opts = {
        "tiers": {
            "fast": {
                "provider": "openai",
                "api": "completions",
                "base_url": base_url,
                "model": "fake",
                "first_token_timeout_ms": 5000,
                "total_timeout_ms": 10000,
            },
            "backup": {"provider": "offline"},
        },
        "completion": {"prefetch_max_tokens": PREFETCH_TOKENS, **(completion or {})},
    }
    cmd = (
        server_cmd()
        if kind == "lsp-assist"
        else [sys.executable, str(ROOT / "benchmarks" / "naive_server.py")]
    )
    return Peer(kind, cmd, env, init_options=opts)


def tabby_peer(base_url: str, home: Path) -> tuple[Peer | None, str]:
    """tabby-agent 1.5.0 pointed at the fake's Tabby API (the recipe `lsp-assist bench`
    ships: debounce 0 ms), or None and why not."""
    if shutil.which("node") is None:
        return None, "node is not installed"
    if not TABBY_CLI.is_file():
        return None, f"not installed ({TABBY_CLI} missing): run `sh benchmarks/setup_peers.sh`"
    cmd, env, _ = tabby_agent_recipe(TABBY_CLI).build(base_url, home)
    peer = Peer("tabby-agent", cmd, env)
    peer.method = "textDocument/completion"
    return peer, ""


async def start(peer: Peer, root: Path) -> RpcClient:
    client = await RpcClient.start(peer.cmd, peer.env)
    if peer.init_options is not None:
        await client.initialize(root.as_uri(), peer.init_options)
    else:
        await client.call(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": {}, "clientInfo": peer.client_info},
        )
        client.notify("initialized", {})
        await asyncio.sleep(0.5)  # tabby-agent checks the server's health first
    return client


def open_doc(c: RpcClient, uri: str, text: str, version: int = 1) -> None:
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )


def insert(c: RpcClient, uri: str, version: int, line: int, col: int, text: str) -> None:
    c.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": line, "character": col},
                        "end": {"line": line, "character": col},
                    },
                    "text": text,
                }
            ],
        },
    )


def params(peer: Peer, uri: str, line: int, ch: int, invoked: bool = True) -> dict[str, Any]:
    p: dict[str, Any] = {"textDocument": {"uri": uri}, "position": {"line": line, "character": ch}}
    if peer.method == "textDocument/inlineCompletion":
        p["context"] = {"triggerKind": 1 if invoked else 2}
    return p


def first_text(resp: dict[str, Any]) -> str:
    return item_text(first_item(resp))


@dataclass
class Timed:
    sent: float
    received: float
    text: str

    @property
    def ms(self) -> float:
        return (self.received - self.sent) * 1000.0


async def timed(c: RpcClient, peer: Peer, uri: str, line: int, ch: int, invoked: bool = True) -> Timed:
    msg_id, fut = c.request(peer.method, params(peer, uri, line, ch, invoked))
    resp = await asyncio.wait_for(fut, 30)
    return Timed(c.sent_at[msg_id], c.received_at[msg_id], first_text(resp))


def split(
    fake: FakeModelProcess, t: Timed, first_stream: int, newline: int = NEWLINE_TOKEN
) -> tuple[float, float] | None:
    """(before the model call, after the needed token) in ms for the stream `t` waited on."""
    found = stream_of(fake, t, first_stream, newline)
    if found is None:
        return None
    t_request, times = found
    return (t_request - t.sent) * 1000.0, (t.received - times[min(newline, len(times) - 1)]) * 1000.0


def stream_of(
    fake: FakeModelProcess, t: Timed, first_stream: int, newline: int
) -> tuple[float, list[float]] | None:
    """The model stream the answer `t` came from: started after the request was sent, its
    first line's last token written before the answer arrived."""
    for t_request, times in fake.stream_times[first_stream:]:
        if t.sent <= t_request <= t.received and times:
            if times[min(newline, len(times) - 1)] <= t.received:
                return t_request, times
    return None


@dataclass
class PositionFigures:
    """Per (trigger, kind): the split of each answer that came from a model stream."""

    before: list[float] = field(default_factory=list)  # request sent -> model server read it
    after: list[float] = field(default_factory=list)  # first line's last token -> answer parsed
    answer: list[float] = field(default_factory=list)  # request sent -> answer parsed
    first_line: list[float] = field(default_factory=list)  # request sent -> first line's last token
    full: list[float] = field(default_factory=list)  # request sent -> the stream's last token
    other: int = 0  # answers that came from no stream of their own (cache, typing-through, empty)


async def position_requests(
    peer: Peer,
    fake: FakeModelProcess,
    args: argparse.Namespace,
    tmp: Path,
    places: list[Position],
    runs: list[tuple[str, bool, float]],
) -> dict[tuple[str, str], PositionFigures]:
    """Each position reached by its last keystroke (a didChange), then a request after the
    editor's gap, the user having paused before that key: the first key after a pause.
    `runs`: (label, invoked, gap between the didChange and the request in ms)."""
    out: dict[tuple[str, str], PositionFigures] = {}
    fake.reset()
    fake.set_default(Script(text=POSITION_COMPLETION, ttft_ms=args.ttft_ms, tokens_per_s=args.tokens_per_s))
    c = await start(peer, tmp / f"{peer.name}-positions")
    try:
        open_doc(c, "file:///bench/warm.py", doc_text(999))
        await timed(c, peer, "file:///bench/warm.py", *CURSOR)  # connections, imports: not counted
        for label, invoked, gap_ms in runs:
            for n, pos in enumerate(places):
                # A URI of its own per request: no answer may come from another's cache.
                uri = f"file:///bench/{label.replace(' ', '-')}/{pos.file.replace('/', '_')}.{n}.py"
                open_doc(c, uri, pos.text)
                await asyncio.sleep(0.3)  # a pause before the key (and the didOpen settled)
                line, col, ins = pos.change
                insert(c, uri, 2, line, col, ins)
                await asyncio.sleep(gap_ms / 1000.0)
                n_streams = len(fake.stream_times)
                t = await timed(c, peer, uri, *pos.cursor, invoked=invoked)
                fig = out.setdefault((label, pos.kind), PositionFigures())
                await asyncio.sleep(0.15)  # let the stream end (enrichment, prefetch) settle
                found = stream_of(fake, t, n_streams, POSITION_NEWLINE)
                if found is None:
                    fig.other += 1
                else:
                    t_request, times = found
                    fig.before.append((t_request - t.sent) * 1000.0)
                    fig.after.append((t.received - times[POSITION_NEWLINE]) * 1000.0)
                    fig.answer.append(t.ms)
                    fig.first_line.append((times[POSITION_NEWLINE] - t.sent) * 1000.0)
                    if len(times) == POSITION_TOKENS:  # read to its end (not closed at the first line)
                        fig.full.append((times[-1] - t.sent) * 1000.0)
                c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    finally:
        await c.close()
    return out


def position_runs(peer: Peer) -> list[tuple[str, bool, float]]:
    if peer.method != "textDocument/inlineCompletion":
        return [("completion", True, EDITOR_GAP_MS)]  # one kind of request (tabby-agent)
    return [
        ("Automatic", False, EDITOR_GAP_MS),
        ("Automatic, no gap", False, 0.0),
        ("Invoked", True, EDITOR_GAP_MS),
    ]


def print_positions(by_peer: dict[str, dict[tuple[str, str], PositionFigures]], per_kind: int) -> None:
    print(
        f"first key after a pause at {len(KINDS)} kinds of positions x {per_kind} per file in "
        f"{', '.join(FILES)} (benchmarks/positions.py), the model streaming"
        f" {POSITION_COMPLETION!r} ({len(split_tokens(POSITION_COMPLETION))} tokens, the first"
        f" line ends at token {POSITION_NEWLINE + 1}); the request {EDITOR_GAP_MS:.0f} ms after"
        ' the keystroke\'s didChange as VS Code sends it ("no gap": right after it); "first line" and'
        ' "full stream": when the model wrote the first line\'s last token and its last token (read'
        " to the end only), all from the request; p50 (p95) in ms"
    )
    head = ("", "before call", "after token", "answer", "first line", "full stream")
    widths = (44, 16, 16, 16, 12, 13)
    print(
        "".join(f"{h:>{w}}" if i else f"{h:<{w}}" for i, (h, w) in enumerate(zip(head, widths, strict=True)))
    )
    for name, figs in by_peer.items():
        labels = list(dict.fromkeys(label for label, _ in figs))
        for label in labels:
            for kind in (*KINDS, "all"):
                if kind == "all":
                    parts = [f for (lb, _), f in figs.items() if lb == label]
                    fig = PositionFigures(other=sum(f.other for f in parts))
                    for f in parts:
                        for a in ("before", "after", "answer", "first_line", "full"):
                            getattr(fig, a).extend(getattr(f, a))
                else:
                    got = figs.get((label, kind))
                    if got is None:
                        continue
                    fig = got
                cells = [
                    f"{p50v(fig.before)} ({p95v(fig.before)})",
                    f"{p50v(fig.after)} ({p95v(fig.after)})",
                    f"{p50v(fig.answer)} ({p95v(fig.answer)})",
                    p50v(fig.first_line),
                    p50v(fig.full),
                ]
                note = f"  ({fig.other} not from a stream of their own)" if fig.other else ""
                title = f"{name}, {label}: {kind}" if kind != "all" else f"{name}, {label}: ALL"
                print(
                    f"{title:<44}"
                    + "".join(f"{c:>{w}}" for c, w in zip(cells, widths[1:], strict=True))
                    + note
                )
    print()


def p50v(values: list[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "-"


def p95v(values: list[float]) -> str:
    return f"{percentile(values, 95):.1f}" if values else "-"


async def single_requests(
    peer: Peer, fake: FakeModelProcess, args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    """Misses (split), typing-through and cache hits for one peer."""
    out: dict[str, Any] = {"before": [], "after": [], "miss": [], "typing": [], "hit": []}
    fake.reset()
    fake.set_default(Script(text=COMPLETION, ttft_ms=args.ttft_ms, tokens_per_s=args.tokens_per_s))
    c = await start(peer, tmp / peer.name)
    try:
        open_doc(c, "file:///bench/warm.py", doc_text(999))
        await timed(c, peer, "file:///bench/warm.py", *CURSOR)  # connections, imports: not counted
        tt_calls = hit_calls = 0
        for i in range(args.n):
            uri = f"file:///bench/miss_{i}.py"
            open_doc(c, uri, doc_text(i))
            n_streams = len(fake.stream_times)
            t = await timed(c, peer, uri, *CURSOR)
            assert t.text.strip().startswith("return compute_total"), (peer.name, t.text)
            out["miss"].append(t.ms)
            parts = split(fake, t, n_streams)
            if parts is not None:
                out["before"].append(parts[0])
                out["after"].append(parts[1])
            await asyncio.sleep(0.05)
            calls_before = fake.stats.streams_started
            insert(c, uri, 2, 8, 4, "r")  # type the first character of the suggestion
            t = await timed(c, peer, uri, 8, 5)
            out["typing"].append(t.ms)
            tt_calls += fake.stats.streams_started - calls_before
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            await asyncio.sleep(0.15)  # let background work (enrichment, prefetch) settle
            # A cache hit: the buffer reopened as it was, nothing else changed meanwhile (a
            # reopen after other files changed has other cross-file context, so another key).
            calls_before = fake.stats.streams_started
            open_doc(c, uri, doc_text(i), version=3)
            out["hit"].append((await timed(c, peer, uri, *CURSOR)).ms)
            hit_calls += fake.stats.streams_started - calls_before
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        out["typing_calls"] = tt_calls
        out["hit_calls"] = hit_calls
        # The protocol floor: a request for a document that is not open is answered before any
        # pipeline stage, so its latency is framing, parsing, dispatch, pipes and this client.
        not_open = "file:///bench/not-open.py"
        out["floor"] = []
        if peer.name != "naive":  # it would read a file it does not have and call the model
            out["floor"] = [(await timed(c, peer, not_open, *CURSOR)).ms for _ in range(args.n)]
        if peer.name == "lsp-assist":
            resp = await c.call("workspace/executeCommand", {"command": "lspAssist.stats", "arguments": []})
            out["server_report"] = (resp.get("result") or {}).get("report") or str(resp)
            out["server_outcomes"] = ((resp.get("result") or {}).get("summary") or {}).get("outcomes", {})
    finally:
        await c.close()
    return out


MODEL_MODES = {
    "parallel": "a parallel server: a closed stream frees everything at once",
    "one-slot": "one slot, like llama.cpp's server: a closed stream's prompt read (the whole"
    " time to first token) still holds the slot, the next call waits for it",
    "predicting": "a parallel server whose model predicts the typed line, right for the next"
    " few characters (--oracle-chars) each call",
}
ORACLE = BURST_WORD + "_subtotal(items) * (1 + tax_rate)\n    return total\n"


def burst_script(mode: str, args: argparse.Namespace) -> Script:
    if mode == "predicting":
        return Script(
            oracle=ORACLE,
            oracle_chars=args.oracle_chars,
            ttft_ms=args.ttft_ms,
            tokens_per_s=args.tokens_per_s,
        )
    prefill = args.ttft_ms if mode == "one-slot" else 0.0
    return Script(text=COMPLETION, ttft_ms=args.ttft_ms, tokens_per_s=args.tokens_per_s, prefill_ms=prefill)


async def bursts(
    peer: Peer,
    fake: FakeModelProcess,
    args: argparse.Namespace,
    tmp: Path,
    profiles: dict[str, list[list[float]]],
    mode: str,
) -> dict[str, Any]:
    """Typing bursts per profile: model calls per burst and the last key's latency."""
    out: dict[str, Any] = {}
    fake.reset()
    fake.set_limit(1 if mode == "one-slot" else None)
    fake.set_default(burst_script(mode, args))
    c = await start(peer, tmp / f"{peer.name}-burst")
    try:
        open_doc(c, "file:///bench/warm.py", doc_text(999))
        await timed(c, peer, "file:///bench/warm.py", *CURSOR)
        for p_index, (profile, all_gaps) in enumerate(profiles.items()):
            calls: list[int] = []
            aborted: list[int] = []
            last: list[float] = []
            for b, gaps in enumerate(all_gaps):
                await asyncio.sleep(0.6)
                uri = f"file:///bench/burst_{mode}_{profile}_{b}.py"
                # A text of its own per burst (the same for every peer): no burst may hit the
                # cache of another's keystrokes.
                open_doc(c, uri, doc_text(1000 * (1 + list(MODEL_MODES).index(mode)) + 100 * p_index + b))
                n_bodies = len(fake.model_bodies())
                before = fake.stats
                pending: int | None = None
                fut: asyncio.Future[Any] | None = None
                for k in range(12):
                    if pending is not None:
                        c.cancel(pending)
                    insert(c, uri, 2 + k, 8, 4 + k, BURST_WORD[k])
                    pending, fut = c.request(peer.method, params(peer, uri, 8, 5 + k, invoked=False))
                    if k < 11:
                        await asyncio.sleep(gaps[k])
                assert fut is not None and pending is not None
                await asyncio.wait_for(fut, 20)
                last.append((c.received_at[pending] - c.sent_at[pending]) * 1000.0)
                await asyncio.sleep(0.5)  # let aborted streams be noticed by the fake server
                bodies = fake.model_bodies()[n_bodies:]
                calls.append(sum(1 for body in bodies if body.get("max_tokens") != PREFETCH_TOKENS))
                aborted.append(fake.stats.streams_aborted - before.streams_aborted)
                c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            out[profile] = {"calls": calls, "aborted": aborted, "last_ms": last}
        if peer.name == "lsp-assist":
            resp = await c.call("workspace/executeCommand", {"command": "lspAssist.stats", "arguments": []})
            outcomes = ((resp.get("result") or {}).get("summary") or {}).get("outcomes", {})
            out["outcomes"] = {k: v.get("n", 0) for k, v in outcomes.items()}
    finally:
        await c.close()
        fake.set_limit(None)
    return out


# The debounce settings the sweep compares (completion.* keys; pipeline/scheduler.py).
SWEEP: tuple[tuple[str, dict[str, Any]], ...] = (
    ("off", {"debounce_min_ms": 0, "debounce_max_ms": 0, "debounce_word_triggers": False}),
    ("burst 10-90", {"debounce_min_ms": 10, "debounce_max_ms": 90, "debounce_word_triggers": False}),
    ("burst 10-150", {"debounce_min_ms": 10, "debounce_max_ms": 150, "debounce_word_triggers": False}),
    ("burst 10-300", {"debounce_min_ms": 10, "debounce_max_ms": 300, "debounce_word_triggers": False}),
    ("words, 10-90", {"debounce_min_ms": 10, "debounce_max_ms": 90, "debounce_word_triggers": True}),
    ("words, 10-150", {"debounce_min_ms": 10, "debounce_max_ms": 150, "debounce_word_triggers": True}),
    ("words, 10-300", {"debounce_min_ms": 10, "debounce_max_ms": 300, "debounce_word_triggers": True}),
    ("words, 150-300", {"debounce_min_ms": 150, "debounce_max_ms": 300, "debounce_word_triggers": True}),
)
SAVE_AT_LEAST = 0.40  # a paid tier's point: at least this share of calls saved ...
COST_AT_MOST_MS = 40.0  # ... for at most this much more on the last key (mean, vs the fastest)


async def code_bursts(
    peer: Peer,
    fake: FakeModelProcess,
    args: argparse.Namespace,
    tmp: Path,
    profiles: dict[str, list[list[float]]],
) -> dict[str, list[tuple[int, float, str]]]:
    """Bursts of 12 keys typing real statements of json/decoder.py again on their own row
    (each key a didChange plus an Automatic request, the previous cancelled, as VS Code
    does): per profile, (model calls, the last key's latency, the last key) per burst."""
    import json as json_pkg

    from benchmarks.positions import typing_lines

    out: dict[str, list[tuple[int, float, str]]] = {}
    fake.reset()
    fake.set_default(burst_script("parallel", args))
    c = await start(peer, tmp / f"{peer.name}-code-burst")
    n_bursts = max(len(g) for g in profiles.values())
    lines = typing_lines(Path(json_pkg.__file__).parent / "decoder.py", n_bursts)
    try:
        open_doc(c, "file:///bench/warm.py", doc_text(999))
        await timed(c, peer, "file:///bench/warm.py", *CURSOR)
        for profile, all_gaps in profiles.items():
            rows: list[tuple[int, float, str]] = []
            for b, gaps in enumerate(all_gaps):
                doc, row, keys = lines[b % len(lines)]
                await asyncio.sleep(0.6)
                uri = f"file:///bench/code_{profile}_{b}.py"
                open_doc(c, uri, doc)
                col = len(doc.split("\n")[row])
                n_bodies = len(fake.model_bodies())
                pending: int | None = None
                fut: asyncio.Future[Any] | None = None
                for k, ch in enumerate(keys):
                    if pending is not None:
                        c.cancel(pending)
                    insert(c, uri, 2 + k, row, col + k, ch)
                    pending, fut = c.request(peer.method, params(peer, uri, row, col + k + 1, invoked=False))
                    if k < len(keys) - 1:
                        await asyncio.sleep(gaps[k])
                assert fut is not None and pending is not None
                await asyncio.wait_for(fut, 20)
                last = (c.received_at[pending] - c.sent_at[pending]) * 1000.0
                await asyncio.sleep(0.5)
                bodies = fake.model_bodies()[n_bodies:]
                calls = sum(1 for body in bodies if body.get("max_tokens") != PREFETCH_TOKENS)
                rows.append((calls, last, keys[-1]))
                c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            out[profile] = rows
    finally:
        await c.close()
    return out


def print_sweep(sweep: dict[str, dict[str, list[tuple[int, float, str]]]]) -> dict[str, str]:
    """The curve (calls per burst against the last key's latency) and the chosen points."""
    from lsp_assist.pipeline.scheduler import TRIGGER_CHARACTERS

    print(
        "debounce sweep: 12-key bursts typing real statements of json/decoder.py again, the"
        " parallel fake model; per setting, all profiles together (the last key: mean, p50; split"
        " by whether it ends a word)"
    )
    head = (
        "setting",
        "calls/burst",
        "saved",
        "last key mean",
        "p50",
        "vs fastest",
        "at . ( space",
        "in a word",
    )
    widths = (18, 12, 8, 14, 9, 11, 13, 11)
    print(
        "".join(
            f"{h:<{w}}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(zip(head, widths, strict=True))
        )
    )
    flat = {name: [r for rows in by_profile.values() for r in rows] for name, by_profile in sweep.items()}
    off_calls = statistics.mean(r[0] for r in flat["off"])
    means = {name: statistics.mean(r[1] for r in rows) for name, rows in flat.items()}
    fastest = min(means, key=lambda n: means[n])
    curve: dict[str, tuple[float, float, float]] = {}
    for name, rows in flat.items():
        calls = statistics.mean(r[0] for r in rows)
        saved = 1.0 - calls / off_calls if off_calls else 0.0
        at_trigger = [r[1] for r in rows if r[2] in TRIGGER_CHARACTERS]
        in_word = [r[1] for r in rows if r[2] not in TRIGGER_CHARACTERS]
        curve[name] = (calls, saved, means[name] - means[fastest])
        cells = (
            name,
            f"{calls:.2f}",
            f"{saved * 100:.0f}%",
            f"{means[name]:.1f} ms",
            f"{statistics.median(r[1] for r in rows):.1f}",
            f"+{means[name] - means[fastest]:.1f}",
            f"{statistics.median(at_trigger):.1f} ({len(at_trigger)})" if at_trigger else "-",
            f"{statistics.median(in_word):.1f} ({len(in_word)})" if in_word else "-",
        )
        print(
            "".join(
                f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
        )
    qualifying = [
        n for n, (_, saved, cost) in curve.items() if saved >= SAVE_AT_LEAST and cost <= COST_AT_MOST_MS
    ]
    remote = max(qualifying, key=lambda n: (curve[n][1], -curve[n][2])) if qualifying else fastest
    why = (
        f"saves {curve[remote][1] * 100:.0f}% of calls for +{curve[remote][2]:.1f} ms"
        if qualifying
        else f"no point saves >= {SAVE_AT_LEAST * 100:.0f}% of calls for <= {COST_AT_MOST_MS:.0f} ms:"
        " the fastest"
    )
    print(f"chosen: embedded model (local): {fastest!r} (the fastest last key)")
    print(f"chosen: a paid remote tier: {remote!r} ({why})")
    print()
    return {"local": fastest, "remote": remote}


def context_reuse(keys: int) -> dict[str, list[float]]:
    """The prompt stage per keystroke while typing in a 350-line module with 3 other tabs open
    (json/decoder.py; json/encoder.py, scanner.py, __init__.py), in-process: as the server
    builds it (pieces reused from the last keystroke: the cross-file step, import parse,
    names per line and per related-lines window, symbols per tree) next to a context engine
    that starts empty on every keystroke (only the symbol index and the open documents kept,
    as they are computed at open/index time by design)."""
    import os

    from lsp_assist.server import Runtime

    with tempfile.TemporaryDirectory() as td:
        os.environ["LSP_ASSIST_CACHE_DIR"] = td
        os.environ["LSP_ASSIST_CONFIG"] = os.path.join(td, "none.toml")
        os.environ["LSP_ASSIST_POLICY"] = os.path.join(td, "none-policy.toml")
        rt = Runtime()
        rt.build()
        return _type_in(rt, keys)


def _type_in(rt: Any, keys: int) -> dict[str, list[float]]:
    import json as json_pkg
    import os

    from lsp_assist.context.builder import ContextEngine
    from lsp_assist.documents.store import TextChange
    from lsp_assist.domain import Cursor
    from lsp_assist.pipeline.prompt import PromptBuilder
    from lsp_assist.structure import imports

    assert rt.engine is not None and rt.governance is not None
    pkg = os.path.dirname(json_pkg.__file__)
    for name in ("encoder.py", "scanner.py", "__init__.py"):
        path = os.path.join(pkg, name)
        rt.store.open("file://" + path, "python", 1, Path(path).read_text(), path)
    path = os.path.join(pkg, "decoder.py")
    uri = "file://" + path
    text = Path(path).read_text()
    rt.store.open(uri, "python", 1, text, path)
    out: dict[str, list[float]] = {"reused": [], "rebuilt": []}
    version = 1
    for mode in ("reused", "rebuilt"):
        row, col = 200, len(text.split("\n")[200])
        for k in range(keys):
            version += 1
            rt.store.change(uri, version, [TextChange(Cursor(row, col), Cursor(row, col), "x")])
            col += 1
            prompts = rt.engine.prompts
            if mode == "rebuilt":
                imports._IMPORTS.clear()
                fresh = ContextEngine(symbol_index=rt.context.symbols)
                prompts = PromptBuilder(rt.config, rt.store, fresh, rt.governance, rt.providers)
            t0 = time.perf_counter()
            prompts.for_open(uri, Cursor(row, col), "fast")
            if k >= 10:
                out[mode].append((time.perf_counter() - t0) * 1000.0)
            if k % 10 == 9:  # a new line now and then
                version += 1
                rt.store.change(uri, version, [TextChange(Cursor(row, col), Cursor(row, col), "\n    ")])
                row, col = row + 1, 4
        version += 1
        rt.store.change(uri, version, [TextChange(None, None, text)])  # the same typing again
    return out


def row(label: str, *cells: str) -> str:
    return f"{label:<46}" + "".join(f"{cell:>24}" for cell in cells)


def p50(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ms" if values else "-"


def p95(values: list[float]) -> str:
    return f"{percentile(values, 95):.2f} ms" if values else "-"


def print_singles(singles: dict[str, dict[str, Any]], tabby: Peer | None, why_not: str) -> None:
    if tabby is None:
        print(f"tabby-agent 1.5.0: not run ({why_not})")
    names = list(singles)
    print(row("", *names))
    r = {name: singles[name] for name in names}
    print(row("server time before the model call, p50", *(p50(r[n]["before"]) for n in names)))
    print(row("  p95", *(p95(r[n]["before"]) for n in names)))
    print(row("server time after the needed token, p50", *(p50(r[n]["after"]) for n in names)))
    print(row("  p95", *(p95(r[n]["after"]) for n in names)))
    print(row("cache miss, client latency, p50", *(p50(r[n]["miss"]) for n in names)))
    print(row("  p95", *(p95(r[n]["miss"]) for n in names)))
    print(row("typing-through latency, p50", *(p50(r[n]["typing"]) for n in names)))
    print(row("  model calls for typing-through", *(str(r[n]["typing_calls"]) for n in names)))
    print(row("cache hit latency, p50", *(p50(r[n]["hit"]) for n in names)))
    print(row("  model calls for cache hits", *(str(r[n]["hit_calls"]) for n in names)))
    print(row("a request for a document not open, p50", *(p50(r[n]["floor"]) for n in names)))
    ours_out = r["lsp-assist"].get("server_outcomes", {})
    for label, key, outcome in (
        ("typing-through", "typing", "typing_through"),
        ("cache hit", "hit", "cache"),
    ):
        inside = (ours_out.get(outcome) or {}).get("p50")
        if inside is not None and r["lsp-assist"][key]:
            outside = statistics.median(r["lsp-assist"][key]) - inside
            print(
                f"  lsp-assist {label}: {inside:.2f} ms in the pipeline (server's own clock), "
                f"{outside:.2f} ms outside it (LSP framing and parsing, pipes, this client), p50"
            )
    print()
    from benchmarks.lsp_parse import measure  # here: it imports this module

    print(
        "LSP message (de)serialization in the server, pygls + cattrs vs bare json (benchmarks/lsp_parse.py):"
    )
    for name, typed_us, bare_us in measure(2000):
        print(f"  {name:<28}{typed_us:>8.1f} us   (json only {bare_us:.1f} us)")
    print()


async def main() -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("--ttft-ms", type=float, default=120.0)
    ap.add_argument("--tokens-per-s", type=float, default=125.0)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--bursts", type=int, default=4, help="bursts per model typing profile (x2 recorded)")
    ap.add_argument(
        "--models", default="parallel,one-slot,predicting", help="fake model modes for the bursts"
    )
    ap.add_argument("--oracle-chars", type=int, default=4, help="predicting model: characters right per call")
    ap.add_argument("--skip-singles", action="store_true", help="bursts only")
    ap.add_argument("--profiles", default="average,fast,recorded", help="typing profiles for the bursts")
    ap.add_argument("--debounce-sweep", default="", help="extra debounce_max_ms values, e.g. 45,150,300")
    ap.add_argument(
        "--sweep",
        action="store_true",
        help="the debounce curve on real-code bursts (SWEEP) and the chosen points",
    )
    ap.add_argument("--per-kind", type=int, default=3, help="positions per kind per file")
    ap.add_argument("--skip-positions", action="store_true", help="no position requests")
    ap.add_argument("--skip-bursts", action="store_true", help="no typing bursts (--sweep still runs)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as td, FakeModelProcess() as fake:
        tmp = Path(td)
        ours = lsp_peer("lsp-assist", fake.base_url, tmp / "ours")
        # One item per Invoked answer, as tabby-agent and the naive server give: the server's
        # own time. The default (3 choices) waits for the stream's fuller answer on purpose
        # (pipeline/choices.py), so its "after" figure is that wait; it is printed beside.
        one_choice = lsp_peer("lsp-assist", fake.base_url, tmp / "one", {"invoked_choices": 1})
        naive = lsp_peer("naive", fake.base_url, tmp / "naive")
        tabby, why_not = tabby_peer(fake.base_url, tmp / "tabby-home")
        singles: dict[str, dict[str, Any]] = {}
        if not args.skip_singles:
            singles["lsp-assist"] = await single_requests(one_choice, fake, args, tmp)
            singles["lsp-assist, 3 choices"] = await single_requests(ours, fake, args, tmp / "3")
            if tabby is not None:
                singles["tabby-agent"] = await single_requests(tabby, fake, args, tmp)
            singles["naive"] = await single_requests(naive, fake, args, tmp)
        placed: dict[str, dict[tuple[str, str], PositionFigures]] = {}
        if not args.skip_positions:
            places = stdlib_positions(args.per_kind)
            for peer in (ours, *([tabby] if tabby is not None else []), naive):
                name = peer.name if peer is not ours else "lsp-assist (defaults)"
                placed[name] = await position_requests(
                    peer, fake, args, tmp / "pos", places, position_runs(peer)
                )
        # The defaults send every key (docs/latency.md); beside them the trailing debounce
        # of 10-90 ms within a burst, the defaults before.
        debounced = lsp_peer(
            "lsp-assist", fake.base_url, tmp / "debounced", {"debounce_min_ms": 10, "debounce_max_ms": 90}
        )
        profiles: dict[str, list[list[float]]] = {
            name: [burst_gaps(name, b) for b in range(args.bursts)] for name in PROFILES
        }
        recorded = recorded_bursts(args.bursts * 2)
        if recorded:
            profiles["recorded"] = recorded
        profiles = {k: v for k, v in profiles.items() if k in args.profiles.split(",")}
        # The debounce's upper bound swept (lower bound 10 ms): calls per burst against the
        # last key's latency, on the same bursts (README: "Bursts").
        sweep = [
            (f"lsp-assist, <={ms} ms", lsp_peer(
                "lsp-assist", fake.base_url, tmp / f"sweep{ms}", {"debounce_max_ms": ms}
            ))
            for ms in (int(x) for x in args.debounce_sweep.split(",") if x)
        ]  # fmt: skip
        swept: dict[str, dict[str, list[tuple[int, float, str]]]] = {}
        if args.sweep:
            for i, (label, opts) in enumerate(SWEEP):
                peer = lsp_peer("lsp-assist", fake.base_url, tmp / f"sweep-{i}", opts)
                swept[label] = await code_bursts(peer, fake, args, tmp / f"sw{i}", profiles)
        burst: dict[str, dict[str, Any]] = {}
        for mode in [] if args.skip_bursts else args.models.split(","):
            burst[mode] = {
                "lsp-assist": await bursts(ours, fake, args, tmp, profiles, mode),
                "lsp-assist, debounce 10-90": await bursts(debounced, fake, args, tmp / "nd", profiles, mode),
            }
            for i, (label, peer) in enumerate(sweep):
                burst[mode][label] = await bursts(peer, fake, args, tmp / f"s{i}", profiles, mode)
            burst[mode]["naive"] = await bursts(naive, fake, args, tmp, profiles, mode)
    print(
        f"fake model: time to first token {args.ttft_ms:.0f} ms, {args.tokens_per_s:.0f} tokens/s; "
        f"the first line ends at token {NEWLINE_TOKEN + 1}; n={args.n}"
    )
    if singles:
        print_singles(singles, tabby, why_not)
    if placed:
        if tabby is None and singles == {}:
            print(f"tabby-agent 1.5.0: not run ({why_not})")
        print_positions(placed, args.per_kind)
    if swept:
        print_sweep(swept)
    reuse = context_reuse(args.n * 10)
    print(
        f"prompt stage per keystroke, json/decoder.py (350 lines) + 3 tabs, in-process,"
        f" n={len(reuse['reused'])}: reused from the last keystroke p50"
        f" {statistics.median(reuse['reused']):.2f} ms (p95 {percentile(reuse['reused'], 95):.2f}); rebuilt"
        f" from an empty context engine p50 {statistics.median(reuse['rebuilt']):.2f} ms"
        f" (p95 {percentile(reuse['rebuilt'], 95):.2f})"
    )
    print()
    print(f"typing bursts of 12 keys (gaps: benchmarks/typing_trace.py), {args.bursts} per model profile")
    if recorded:
        print(f"  recorded: {len(recorded)} bursts of real typing (Aalto 136M keystrokes logs)")
    else:
        print(f"  recorded: not run (no keystroke logs in {RECORDED_DIR}; see benchmarks/typing_trace.py)")
    for mode, by_peer in burst.items():
        bnames = list(by_peer)
        print(f"model: {mode} ({MODEL_MODES[mode]})")
        print(row("", *bnames))
        for profile, gaps in profiles.items():
            flat = sorted(g for burst_gaps_ in gaps for g in burst_gaps_)
            print(f"  {profile} typist (median gap {statistics.median(flat) * 1000:.0f} ms)")
            calls = {n: by_peer[n][profile]["calls"] for n in bnames}
            print(row("    model calls per burst, mean (max)", *(
                f"{statistics.mean(calls[n]):.2f} ({max(calls[n])})" for n in bnames
            )))  # fmt: skip
            print(row("    streams closed mid-way per burst, mean", *(
                f"{statistics.mean(by_peer[n][profile]['aborted']):.2f}" for n in bnames
            )))  # fmt: skip
            print(row("    last key's latency, p50", *(p50(by_peer[n][profile]["last_ms"]) for n in bnames)))
            print(row("    last key's latency, max", *(
                f"{max(by_peer[n][profile]['last_ms']):.2f} ms" for n in bnames
            )))  # fmt: skip
        for n in bnames:
            if "outcomes" in by_peer[n]:
                print(f"  {n}: requests by outcome, all profiles: {by_peer[n]['outcomes']}")
    print()
    if singles:
        print("lsp-assist's own per-stage report for the single requests, 1 choice (lspAssist.stats):")
        print(singles["lsp-assist"].get("server_report", ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
