"""The embedded model at editor speed: a scripted editor session over real stdio.

A standard-library module (code no one here wrote) is opened in `lsp-assist serve`, and
statements of it are re-typed character by character at 60-120 ms per key, with pauses,
as a person would: each key is a `didChange` plus an Automatic `inlineCompletion`, and the
previous request is cancelled when it is still pending (as VS Code does). Then cold
requests at fresh lines elsewhere in the file. Then the jumps (issue 26): at fresh lines
spread through the file the user presses Enter at the end of a line and a request follows at
once, with no warning (Automatic, then Invoked at other lines); and, at yet other lines, the
cursor first rests there for 500 ms (`lspAssist/cursorRest`, as both editor clients send it)
before the Enter. Backends, all in the same run and printed side by side:
- `inprocess` (the default path: in-process llama.cpp, KV-cache reuse, stable layout, the
  jump budget `local.prompt_budget_ms` and the cursor-rest prefill);
- `inprocess-norefine` (the default path with `local.refine_model = ""`: no second model
  rewriting answers after a rest, the default before the refine model);
- `inprocess-today` (the same server with `prompt_budget_ms = 0` and no cursor-rest
  notifications: the path before issue 26);
- `server` (`local.backend = "server"`: the llama-cpp-python server, the trimmed prompt);
- `inprocess-nodebounce` (debounce off: the bursts' baseline).
Figures:

- keystroke-to-answer p50/p90 for requests answered by the model (a new stream or one
  they attached to), and for all answered requests;
- time to first token (the pipeline's stage) while typing and for cold requests;
- prompt tokens evaluated per model call (new path: the engine's count; today's path:
  llama-cpp-python's own "prefix-match hit" line from its verbose log);
- generation tokens/s; share of empty answers; model calls per typed statement.

Other measurements (in-process, on the engine directly):
  --threads       prompt/generation thread counts on an idle and on a loaded machine
  --speculation   hand-rolled prompt-lookup drafts (verified in one batch) vs none
  --tradeoff      HumanEval exact match and prompt recall against the jump's prompt size
  --shift         whether Gemma 3's KV cache can be shifted (llama-server's --cache-reuse)
  --preempt       a request's first token while the refine model rewrites, against idle

Run under the exclusive CPU lock:
  flock -x /tmp/lsp-cpu.lock .venv/bin/python -m benchmarks.local_latency [--statements 6]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, percentile
from benchmarks.rpc_client import RpcClient

SOURCE_MODULE = "json.decoder"
REST_S = 0.5  # the cursor rests this long before the first key (issue 26's target)
CLIENT_REST_S = 0.3  # when the editor clients send lspAssist/cursorRest, unless their source says


def client_rest_s(source: Path) -> float:
    """When the editor clients of the tree at `source` send `lspAssist/cursorRest` (VS Code's
    `REST_MS`; Neovim's `idle_ms` is kept the same): each side of a run rests as its own
    clients would."""
    ts = source / "editors" / "vscode" / "src" / "cursorRest.ts"
    try:
        found = re.search(r"REST_MS = (\d+)", ts.read_text(encoding="utf-8"))
    except OSError:
        found = None
    return int(found.group(1)) / 1000.0 if found else CLIENT_REST_S


def source_path(module: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin)


def pick_statements(lines: list[str], n: int, seed: int) -> list[int]:
    """Rows of indented code statements worth typing (no comments, docstrings, blanks)."""
    rows = []
    in_doc = False
    for i, line in enumerate(lines):
        s = line.strip()
        if s.count('"""') == 1 or s.count("'''") == 1:
            in_doc = not in_doc
            continue
        if in_doc or not line.startswith("    ") or not (20 <= len(s) <= 64):
            continue
        if s.startswith(("#", '"', "'", "@")) or s.endswith((",", "(", "\\")):
            continue
        rows.append(i)
    rng = random.Random(seed)
    rng.shuffle(rows)
    chosen = sorted(rows[: 2 * n])
    return chosen[:n], chosen[n : 2 * n]  # type: ignore[return-value]


def pick_jumps(lines: list[str], n: int, seed: int, taken: set[int]) -> dict[str, list[int]]:
    """Disjoint rows for the jump phases ("fresh", "invoked", "rest"), `n` each, in shuffled
    order (each far from the last): statements whose line above is code, so that an Enter at
    its end opens a new line where the statement belongs."""
    rows = [
        r
        for r in pick_statements(lines, 10 * n, seed + 1)[0] + pick_statements(lines, 10 * n, seed + 1)[1]
        if r not in taken and r > 0 and lines[r - 1].strip() and not lines[r - 1].strip().startswith("#")
    ]
    rows = sorted(set(rows))
    random.Random(seed + 2).shuffle(rows)
    return {phase: rows[i * n : (i + 1) * n] for i, phase in enumerate(("fresh", "invoked", "rest"))}


@dataclass
class Req:
    sent: float
    version: int
    line: int
    col: int
    phase: str  # "typing" | "cold" | "fresh" | "invoked" | "rest"
    answered: float = 0.0
    text: str = ""
    cancelled: bool = False
    outcome: str = ""
    ttft: float = 0.0
    remaining: str = "x"  # what the file has after the cursor on this line (the obvious continuation)
    cause: str = ""  # why the answer is empty (`_empty_cause`), from the server's log


@dataclass
class Session:
    reqs: list[Req] = field(default_factory=list)
    statements: int = 0
    load_s: float = 0.0


def utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


async def run_session(
    backend: str,
    path: Path,
    typed_rows: list[int],
    cold_rows: list[int],
    work: Path,
    seed: int,
    jumps: dict[str, list[int]] | None = None,
    source: Path = ROOT,
) -> tuple[Session, Path, Path]:
    work.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (benchmark set-up, before timing)
    log = work / "server.log"
    cfg = work / "config.toml"
    # "inprocess-nodebounce": the same server with the debounce off (the bursts' baseline).
    # "X@base": backend X served from `--baseline-src` (another tree: the code before a change).
    engine, _, variant = backend.partition("@")[0].partition("-")
    extra = "[completion]\ndebounce_min_ms = 0\ndebounce_max_ms = 0\n" if variant == "nodebounce" else ""
    # the path before issue 26; "inprocess-norefine": the default without the refine model
    today = 'prompt_budget_ms = 0\nrefine_model = ""\n' if variant == "today" else ""
    if variant == "norefine":
        today = 'refine_model = ""\n'
    if variant.startswith("budget"):  # "inprocess-budget180": another local.answer_budget_ms
        today = f"answer_budget_ms = {int(variant.removeprefix('budget'))}\n"
    cfg.write_text(
        f'[local]\nbackend = "{engine}"\n{today}[cache]\nenabled = false\n{extra}', encoding="utf-8"
    )  # every request is measured, not served from a previous run's disk cache
    env = {
        "LSP_ASSIST_CACHE_DIR": str(work / "cache"),
        "LSP_ASSIST_CONFIG": str(cfg),
        "LSP_ASSIST_LOCAL_SERVER_VERBOSE": "1",
        "PYTHONPATH": str(source),
    }
    # -P: the working directory does not shadow `source` (a run from a checkout measures `source`).
    cmd = [sys.executable, "-P", "-m", "lsp_assist", "--log-level", "debug", "--log-file", str(log), "serve"]
    client = await RpcClient.start(cmd, env)
    sess = Session()
    lines = path.read_text(encoding="utf-8").split("\n")  # noqa: ASYNC240 (set-up)
    uri = "file://" + str(work / path.name)
    (work / path.name).write_text("\n".join(lines), encoding="utf-8")
    rng = random.Random(seed)
    try:
        await client.initialize("file://" + str(work), {})
        version = 1
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": version,
                    "text": "\n".join(lines),
                }
            },
        )
        t0 = time.perf_counter()
        # Wait for the model: a throwaway invoked request until the log says a model answered.
        while time.perf_counter() - t0 < 180:
            await client.call(
                "textDocument/inlineCompletion",
                {
                    "textDocument": {"uri": uri},
                    "position": {"line": 0, "character": 0},
                    "context": {"triggerKind": 1},
                },
                timeout=60,
            )
            if "outcome=model" in log.read_text(errors="replace"):
                break
            await asyncio.sleep(0.5)
        sess.load_s = time.perf_counter() - t0
        # A new user's server measures its model once it idles after the start (cached per
        # machine afterwards); the typing threads follow that measurement. Wait for it.
        for _ in range(60):
            if " measured: " in log.read_text(errors="replace"):
                break
            await asyncio.sleep(0.5)
        else:
            print(f"  {backend}: the model's rates were not measured (a busy machine)", flush=True)

        def change(row: int, start: int, end: int, text: str, end_row: int | None = None) -> None:
            nonlocal version
            version += 1
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [
                        {
                            "range": {
                                "start": {"line": row, "character": start},
                                "end": {"line": row if end_row is None else end_row, "character": end},
                            },
                            "text": text,
                        }
                    ],
                },
            )

        async def ask(
            row: int, col_chars: str, phase: str, trigger: int = 2
        ) -> tuple[Req, asyncio.Future[Any]]:
            col = utf16_len(col_chars)
            _, fut = client.request(
                "textDocument/inlineCompletion",
                {
                    "textDocument": {"uri": uri},
                    "position": {"line": row, "character": col},
                    "context": {"triggerKind": trigger},
                },
            )
            r = Req(time.perf_counter(), version, row, len(col_chars), phase)
            sess.reqs.append(r)

            def done(f: asyncio.Future[Any], r: Req = r) -> None:
                r.answered = time.perf_counter()
                msg = f.result()
                if "error" in msg:
                    r.cancelled = True
                    return
                items = (msg.get("result") or {}).get("items") or []
                r.text = items[0]["insertText"] if items else ""

            fut.add_done_callback(done)
            return r, fut

        # 1. Typing statements, character by character.
        for row in typed_rows:
            original = lines[row]
            indent = original[: len(original) - len(original.lstrip())]
            body = original[len(indent) :]
            change(row, len(indent), utf16_len(original), "")  # the user is about to write this line
            lines[row] = indent
            await asyncio.sleep(0.8)
            pending: tuple[int, asyncio.Future[Any]] | None = None
            typed = ""
            for ch in body:
                col = utf16_len(indent + typed)
                change(row, col, col, ch)
                typed += ch
                if pending is not None and not pending[1].done():
                    client.cancel(pending[0])
                msg_id, fut = client.request(
                    "textDocument/inlineCompletion",
                    {
                        "textDocument": {"uri": uri},
                        "position": {"line": row, "character": utf16_len(indent + typed)},
                        "context": {"triggerKind": 2},
                    },
                )
                r = Req(time.perf_counter(), version, row, len(indent + typed), "typing")
                r.remaining = body[len(typed) :]
                sess.reqs.append(r)

                def done(f: asyncio.Future[Any], r: Req = r) -> None:
                    r.answered = time.perf_counter()
                    msg = f.result()
                    if "error" in msg:
                        r.cancelled = True
                        return
                    items = (msg.get("result") or {}).get("items") or []
                    r.text = items[0]["insertText"] if items else ""

                fut.add_done_callback(done)
                pending = (msg_id, fut)
                delay = rng.uniform(0.06, 0.12)
                if ch in " (.,=:" and rng.random() < 0.25:
                    delay += rng.uniform(0.4, 0.9)  # a pause: the suggestion has time to show
                await asyncio.sleep(delay)
            if pending is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(pending[1]), 10)
                except asyncio.TimeoutError:
                    pass
            lines[row] = original
            sess.statements += 1
            await asyncio.sleep(0.3)
        # 2. Cold requests at fresh lines elsewhere in the file.
        for row in cold_rows:
            original = lines[row]
            indent = original[: len(original) - len(original.lstrip())]
            change(row, len(indent), utf16_len(original), "")
            lines[row] = indent
            await asyncio.sleep(1.0)
            _r, fut = await ask(row, indent, "cold")
            try:
                await asyncio.wait_for(asyncio.shield(fut), 15)
            except asyncio.TimeoutError:
                pass
            change(row, len(indent), len(indent), original[len(indent) :])
            lines[row] = original
            await asyncio.sleep(0.3)
        # 3. Jumps: Enter at the end of a line far from the last prompt, and a request at once.
        rest = variant != "today" and engine == "inprocess"
        told_s = client_rest_s(source)
        for phase, rows in (jumps or {}).items():
            for row in rows:
                above = lines[row - 1]
                indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
                if phase == "rest":  # the cursor rests at the end of the line for 500 ms first;
                    # the editor clients say so after their REST_MS / idle_ms
                    await asyncio.sleep(told_s)
                    if rest:
                        client.notify(
                            "lspAssist/cursorRest",
                            {
                                "textDocument": {"uri": uri, "version": version},
                                "position": {"line": row - 1, "character": utf16_len(above)},
                            },
                        )
                    await asyncio.sleep(REST_S - told_s)
                change(row - 1, utf16_len(above), utf16_len(above), "\n" + indent)
                r, fut = await ask(row, indent, phase, trigger=1 if phase == "invoked" else 2)
                r.remaining = lines[row][len(indent) :]
                try:
                    await asyncio.wait_for(asyncio.shield(fut), 15)
                except asyncio.TimeoutError:
                    pass
                await asyncio.sleep(0.3)
                change(row - 1, utf16_len(above), utf16_len(indent), "", end_row=row)  # the Enter undone
                await asyncio.sleep(1.2)  # the user reads; what the model does meanwhile is not timed
    finally:
        await client.close()
    return sess, log, work / "cache" / "logs" / "local-model.log"


_ANSWER = re.compile(
    r"inline completion answered: outcome=(\w+) tier=(\w+) version=(\d+) line=(\d+) col=(\d+)"
    r" ttft_ms=([\d.]+) total_ms=([\d.]+) chars=(\d+)"
)
_LOCAL = re.compile(
    r"local model: prompt (\d+) tokens, reused (\d+), evaluated (\d+), first token ([\d.]+) ms, "
    r"(\d+) tokens in ([\d.]+) ms"
)
_END = re.compile(r"local model: .*?, (\d+) tokens in [\d.]+ ms, .*?end (\w+)")
_STREAM = re.compile(r"stream: tier=(\w+) feature=(\w+) live=(\w+) speculative=(\w+)")
_PREFIX_HIT = re.compile(r"Llama.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
_EVAL = re.compile(r"eval time =\s+([\d.]+) ms /\s+(\d+) runs")
_PROMPT_EVAL = re.compile(r"prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens")


def analyse(sess: Session, log: Path, model_log: Path) -> dict[str, Any]:
    text = log.read_text(errors="replace")
    answers = {(int(m[3]), int(m[4]), int(m[5])): m for m in _ANSWER.finditer(text)}
    causes = _empty_causes(text)
    for r in sess.reqs:
        m = answers.get((r.version, r.line, r.col))
        if m is not None:
            r.outcome, r.ttft = m[1], float(m[6])
            r.cause = causes.get((r.version, r.line, r.col), "")
    measured = [r for r in sess.reqs if r.answered and not r.cancelled]
    model = [r for r in measured if r.outcome in ("model", "attached")]
    streams = [m for m in _STREAM.finditer(text)]
    evaluated: list[int] = []
    prompt: list[int] = []
    rates: list[float] = []
    local = list(_LOCAL.finditer(text))
    if local:
        evaluated = [int(m[3]) for m in local]
        prompt = [int(m[1]) for m in local]
        rates = [int(m[5]) / float(m[6]) * 1000 for m in local if int(m[5]) > 1 and float(m[6]) > 0]
    elif model_log.exists():
        mt = model_log.read_text(errors="replace")
        hits = list(_PREFIX_HIT.finditer(mt))
        evaluated = [int(m[2]) for m in hits]
        prompt = [int(m[1]) + int(m[2]) for m in hits]
        rates = [
            int(m[2]) / float(m[1]) * 1000
            for m in _EVAL.finditer(mt)
            if int(m[2]) > 1 and "prompt" not in m[0]
        ]
        # The first evaluations of a fresh server read the whole prompt: include them as logged.
    typing_model = [r for r in model if r.phase == "typing"]
    cold_model = [r for r in model if r.phase == "cold"]
    return {
        "requests": len(sess.reqs),
        "answered": len(measured),
        "cancelled": sum(r.cancelled for r in sess.reqs),
        "model_answers": len(model),
        "k2a_model_p50": percentile([(r.answered - r.sent) * 1000 for r in model], 50),
        "k2a_model_p90": percentile([(r.answered - r.sent) * 1000 for r in model], 90),
        "k2a_typing_model_p50": percentile([(r.answered - r.sent) * 1000 for r in typing_model], 50),
        "k2a_cold_p50": percentile([(r.answered - r.sent) * 1000 for r in cold_model], 50),
        "k2a_all_p50": percentile([(r.answered - r.sent) * 1000 for r in measured], 50),
        # The last key of each typed statement: the suggestion the user sees when they stop.
        "k2a_last_p50": percentile(
            [(r.answered - r.sent) * 1000 for r in measured if r.phase == "typing" and not r.remaining], 50
        ),
        "k2a_all_p90": percentile([(r.answered - r.sent) * 1000 for r in measured], 90),
        "ttft_typing_p50": percentile([r.ttft for r in typing_model if r.outcome == "model" and r.ttft], 50),
        "ttft_cold_p50": percentile([r.ttft for r in cold_model if r.outcome == "model" and r.ttft], 50),
        "evaluated_p50": percentile([float(x) for x in evaluated], 50),
        "evaluated_mean": statistics.fmean(evaluated) if evaluated else float("nan"),
        "prompt_tokens_p50": percentile([float(x) for x in prompt], 50),
        "gen_tok_s": statistics.median(rates) if rates else float("nan"),
        "empty_share": _share(r for r in measured if r.remaining.strip()),
        "empty_share_typing": _share(r for r in measured if r.remaining.strip() and r.phase == "typing"),
        "complete_lines": sum(1 for r in measured if not r.remaining.strip()),
        "fallbacks": sum(1 for r in measured if r.outcome == "fallback"),
        "calls_per_statement": (
            sum(1 for m in streams if m[4] == "False" and m[2] == "completion") / max(1, sess.statements)
        ),
        "prefetch_calls": sum(1 for m in streams if m[4] == "True"),
        "outcomes": dict(
            sorted(_count(r.outcome or ("cancelled" if r.cancelled else "?") for r in sess.reqs).items())
        ),
        "load_s": sess.load_s,
        **_jump_figures(measured),
    }


def _jump_figures(measured: list[Req]) -> dict[str, Any]:
    """Request-to-answer at fresh positions (issue 26), per phase, and non-empty shares."""
    out: dict[str, Any] = {}
    for phase in ("fresh", "invoked", "rest"):
        ms = [(r.answered - r.sent) * 1000 for r in measured if r.phase == phase]
        out[f"{phase}_p50"], out[f"{phase}_p90"] = percentile(ms, 50), percentile(ms, 90)
        out[f"{phase}_n"] = len(ms)
        out[f"{phase}_ttft"] = percentile([r.ttft for r in measured if r.phase == phase and r.ttft], 50)
    jumps = [r for r in measured if r.phase in ("fresh", "invoked", "rest")]
    out["jump_nonempty"] = 1 - _share(jumps) if jumps else float("nan")
    typing = [r for r in measured if r.phase == "typing" and r.remaining.strip()]
    out["typing_nonempty"] = 1 - _share(typing) if typing else float("nan")
    out["typing_empty_causes"] = _count(r.cause or r.outcome for r in typing if not r.text.strip())
    for phase in ("typing", "rest"):
        texts = [len(r.text) for r in measured if r.phase == phase and r.remaining.strip()]
        out[f"{phase}_chars"] = statistics.fmean(texts) if texts else float("nan")
    return out


def _empty_causes(text: str) -> dict[tuple[int, int, int], str]:
    """Why each empty model answer is empty, from the model's last log line before it.

    "model ended the line": the first token ended the line (a newline, a stop string, the
    end of text), so the model itself proposed nothing; "emptied after N tokens": the model
    wrote tokens and the pipeline's filters dropped them; "superseded": the generation was
    cancelled (a newer key). Attached answers share a stream, so this is the nearest one.
    """
    out: dict[tuple[int, int, int], str] = {}
    last: re.Match[str] | None = None
    for line in text.splitlines():
        if (m := _END.search(line)) is not None:
            last = m
        elif (a := _ANSWER.search(line)) is not None and a[8] == "0" and a[1] in ("model", "attached"):
            key = (int(a[3]), int(a[4]), int(a[5]))
            if last is None:
                out[key] = "no model call logged"
            elif last[2] == "cancel":
                out[key] = "superseded"
            elif int(last[1]) <= 1:
                out[key] = "model ended the line"
            else:
                out[key] = "emptied after tokens"
    return out


def _share(reqs: Any) -> float:
    """Share of empty answers among `reqs`."""
    got = list(reqs)
    return sum(1 for r in got if not r.text.strip()) / len(got) if got else float("nan")


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


# The jump figures and their targets (issue 26), printed first.
JUMP_ROWS = (
    ("fresh position, Automatic p50 / p90 (ms) [<=350 / <=600]", ("fresh_p50", "fresh_p90"), "{:.0f}"),
    ("fresh position, Invoked p50 / p90 (ms) [<=600]", ("invoked_p50", "invoked_p90"), "{:.0f}"),
    ("after a 500 ms cursor rest, first key p50 (ms) [<=200]", "rest_p50", "{:.0f}"),
    (
        "  first token p50: fresh / invoked / after a rest (ms)",
        ("fresh_ttft", "invoked_ttft", "rest_ttft"),
        "{:.0f}",
    ),
    ("last key of a typing burst p50 (ms) [<=300]", "k2a_last_p50", "{:.0f}"),
    ("typing, keystroke to model answer p50 (ms) [<=150]", "k2a_typing_model_p50", "{:.0f}"),
    (
        "non-empty where the line goes on: typing / jumps [>=95%]",
        ("typing_nonempty", "jump_nonempty"),
        "{:.0%}",
    ),
    ("jump requests answered: fresh / invoked / rest", ("fresh_n", "invoked_n", "rest_n"), "{}"),
    ("mean answer length (chars): typing / after a rest", ("typing_chars", "rest_chars"), "{:.1f}"),
)

ROWS = (
    ("keystroke-to-answer p50, model answers (ms)", "k2a_model_p50", "{:.0f}"),
    ("keystroke-to-answer p90, model answers (ms)", "k2a_model_p90", "{:.0f}"),
    ("  of which while typing, p50 (ms)", "k2a_typing_model_p50", "{:.0f}"),
    ("  cold requests at fresh lines, p50 (ms)", "k2a_cold_p50", "{:.0f}"),
    ("keystroke-to-answer p50 / p90, all answers (ms)", ("k2a_all_p50", "k2a_all_p90"), "{:.0f}"),
    ("last key of each typed statement, answer p50 (ms)", "k2a_last_p50", "{:.0f}"),
    ("time to first token p50 while typing (ms)", "ttft_typing_p50", "{:.0f}"),
    ("time to first token p50, cold (ms)", "ttft_cold_p50", "{:.0f}"),
    ("prompt tokens evaluated per model call p50 / mean", ("evaluated_p50", "evaluated_mean"), "{:.0f}"),
    ("prompt tokens per model call p50", "prompt_tokens_p50", "{:.0f}"),
    ("generation tokens/s (median per call)", "gen_tok_s", "{:.0f}"),
    ("empty answers where the line goes on (all / typing)", ("empty_share", "empty_share_typing"), "{:.0%}"),
    ("answered at the end of a finished line (empty is right)", "complete_lines", "{}"),
    ("answered by the offline fallback", "fallbacks", "{}"),
    (
        "model calls per typed statement (+ prefetch total)",
        ("calls_per_statement", "prefetch_calls"),
        "{:.1f}",
    ),
    ("requests / answered / cancelled by the client", ("requests", "answered", "cancelled"), "{}"),
    ("model answers (new stream or attached)", "model_answers", "{}"),
)


def fmt(res: dict[str, Any], key: Any, f: str) -> str:
    keys = key if isinstance(key, tuple) else (key,)
    return " / ".join(f.format(res[k]) for k in keys)


async def session_main(args: argparse.Namespace) -> None:
    path = source_path(args.module)
    lines = path.read_text(encoding="utf-8").split("\n")
    typed, cold = pick_statements(lines, args.statements, args.seed)
    jumps = pick_jumps(lines, args.jumps, args.seed, set(typed) | set(cold))
    jumps = {k: v for k, v in jumps.items() if k in args.phases}
    if args.no_cold:
        cold = []
    print(
        f"source: {path} ({len(lines)} lines); typing {len(typed)} statements, {len(cold)} cold requests,"
        f" jumps {' / '.join(f'{k} {len(v)}' for k, v in jumps.items())}"
    )
    results: dict[str, dict[str, Any]] = {}
    base = Path(tempfile.mkdtemp(prefix="lsp-local-latency-"))
    for backend in args.backends:
        src = Path(args.baseline_src) if backend.endswith("@base") and args.baseline_src else ROOT
        sess, log, model_log = await run_session(
            backend, path, typed, cold, base / backend, args.seed, jumps, src
        )
        results[backend] = analyse(sess, log, model_log)
        print(
            f"  {backend}: done ({results[backend]['requests']} requests, load {sess.load_s:.1f} s)",
            flush=True,
        )
    names = {
        "inprocess": "new: in-process + stable layout",
        "server": "today: llama-cpp server + trimmed",
        "inprocess-nodebounce": "in-process, debounce off",
        "inprocess-today": "before: in-process, no jump budget/rest",
        "inprocess-norefine": "in-process, no refine model",
    }
    width = 58
    print()
    print(f"{'':{width}}" + "".join(f"{names.get(b, b):>42}" for b in args.backends))
    for label, key, f in JUMP_ROWS:
        print(f"{label:{width}}" + "".join(f"{fmt(results[b], key, f):>42}" for b in args.backends))
    print()
    for label, key, f in ROWS:
        print(f"{label:{width}}" + "".join(f"{fmt(results[b], key, f):>42}" for b in args.backends))
    print(f"{'outcomes':{width}}" + "".join(f"  {json.dumps(results[b]['outcomes'])}" for b in args.backends))
    for b in args.backends:  # why typing keys where the line goes on got nothing
        print(f"empty while typing, by cause ({b}): {json.dumps(results[b]['typing_empty_causes'])}")
    if len(args.backends) == 2 and "server" in args.backends:
        a, b = (results[x] for x in args.backends)
        print()
        for label, key in (
            ("keystroke-to-answer p50", "k2a_model_p50"),
            ("time to first token p50", "ttft_typing_p50"),
        ):
            if a[key] and b[key] == b[key] and a[key] == a[key]:
                print(f"ratio {label}: today / new = {b[key] / a[key]:.1f}x")
    print(f"logs: {base}")


# -- engine-level measurements --------------------------------------------------------------------


def _engine_prompt() -> tuple[str, str]:
    src = source_path("json.decoder").read_text(encoding="utf-8")
    cut = src.index("def py_scanstring")
    return "# Path: decoder.py\n" + src[max(0, cut - 1300) : cut], "def py_scanstring(s, end, strict=True,"


def _busy(seconds: float) -> subprocess.Popen[bytes]:
    """A process that keeps one core busy (the 'loaded machine')."""
    return subprocess.Popen(
        [sys.executable, "-c", f"import time\nt=time.time()+{seconds}\nwhile time.time()<t: pass"]
    )


def threads_main(args: argparse.Namespace) -> None:
    from lsp_assist.providers.llama_engine import Job, LlamaEngine
    from lsp_assist.providers.models import resolve_model

    path = resolve_model("gemma3-270m", Path(tempfile.gettempdir()) / "lsp-assist-bench")
    base, line = _engine_prompt()
    print(f"cpus: {os.cpu_count()}; prompt {len(base)} chars; typing {len(line)} chars 3 at a time")
    print(
        f"{'load':8}{'gen/prompt threads':>20}{'cold prompt ms':>16}{'typing TTFT p50':>17}{'gen tok/s':>11}"
    )
    for load in ("idle", "loaded"):
        for gen, batch in ((1, 1), (2, 2), (1, 2), (2, 1)):
            busy = _busy(120) if load == "loaded" else None
            try:
                eng = LlamaEngine(path, n_ctx=2048, threads=gen, batch_threads=batch)
                out: list[str] = []

                def run(prompt: str, n: int = 16, eng: Any = eng, out: list[str] = out) -> Any:
                    return eng.run(Job(eng.tokenize(prompt), n, 0.0, lambda t, o=out: o.append(t) or True))

                cold = run(base)
                typing = [run(base + line[:i]) for i in range(1, len(line) + 1, 3)]
                rate = sum(s.generated_tokens for s in typing) / sum(s.generation_ms for s in typing) * 1000
                print(
                    f"{load:8}{f'{gen}/{batch}':>20}{cold.prompt_ms:>16.0f}"
                    f"{statistics.median(s.prompt_ms for s in typing):>17.1f}{rate:>11.0f}",
                    flush=True,
                )
                eng.close()
            finally:
                if busy is not None:
                    busy.kill()
                    busy.wait()


def speculation_main(args: argparse.Namespace) -> None:
    from lsp_assist.providers.llama_engine import Job, LlamaEngine
    from lsp_assist.providers.models import resolve_model

    path = resolve_model("gemma3-270m", Path(tempfile.gettempdir()) / "lsp-assist-bench")
    src = source_path("json.decoder").read_text(encoding="utf-8").split("\n")
    # Real code: prompts ending at the start of 24 statements, 32 tokens each.
    rows = [i for i in range(40, len(src)) if src[i].startswith("        ") and len(src[i].strip()) > 15][:24]
    eng = LlamaEngine(path, n_ctx=2048, threads=2, batch_threads=2)
    outputs: dict[int, list[str]] = {}
    print(f"{'draft tokens':>12}{'gen tok/s':>11}{'accepted/drafted':>18}{'same output':>13}")
    for k in (0, 3, 6, 10):
        texts, gen_ms, gen_n, acc, dr = [], 0.0, 0, 0, 0
        for r in rows:
            prompt = "\n".join(src[max(0, r - 40) : r]) + "\n" + src[r][: len(src[r]) - len(src[r].lstrip())]
            out: list[str] = []
            eng.reset()  # the same cold start for every setting
            st = eng.run(
                Job(eng.tokenize(prompt), 32, 0.0, lambda s, out=out: out.append(s) or True, draft_tokens=k)
            )
            texts.append("".join(out))
            gen_ms += st.generation_ms
            gen_n += st.generated_tokens
            acc += st.accepted_tokens
            dr += st.drafted_tokens
        outputs[k] = texts
        same = sum(a == b for a, b in zip(texts, outputs[0], strict=True)) / len(texts)
        print(f"{k:>12}{gen_n / gen_ms * 1000:>11.0f}{f'{acc}/{dr}':>18}{same:>13.0%}", flush=True)
    eng.close()


def shift_main(args: argparse.Namespace) -> None:
    """Can Gemma 3's KV cache be shifted (llama-server's `--cache-reuse`)? The window moves
    down a file: prompt [BOS]+A+B was read; the next is [BOS]+B+C. Shifting B's cells back by
    len(A) (`llama_memory_seq_rm` + `llama_memory_seq_add`) leaves only C to read. Compared
    with reading [BOS]+B+C from scratch: time to first token and the greedy text."""
    from lsp_assist.providers.llama_engine import Job, LlamaEngine
    from lsp_assist.providers.models import resolve_model

    path = resolve_model("gemma3-270m", Path(tempfile.gettempdir()) / "lsp-assist-bench")
    src = source_path("json.decoder").read_text(encoding="utf-8").split("\n")
    eng = LlamaEngine(path, n_ctx=2048, threads=1, batch_threads=2)
    lib = eng._lib
    mem = lib.llama_get_memory(eng._ctx)
    can = bool(lib.llama_memory_can_shift(mem))
    print(f"llama_memory_can_shift: {can} (llama-cpp-python {lib.__version__}, n_ctx {eng.n_ctx})")
    print(
        f"{'lines moved':>12}{'read cold: ttft ms / tokens':>30}{'shifted: ttft ms / tokens':>28}"
        f"{'same text':>11}"
    )

    def chunk(a: int, b: int) -> list[int]:
        return list(eng.tokenize("\n".join(src[a:b]) + "\n")[1:])  # without BOS

    def gen(tokens: list[int]) -> tuple[str, Any]:
        out: list[str] = []
        st = eng.run(Job(tokens, 16, 0.0, lambda t: out.append(t) or True))
        return "".join(out), st

    bos = eng.tokenize("")[:1]
    for start, moved in ((120, 10), (150, 20), (200, 40), (240, 60)):
        a, b = chunk(start, start + moved), chunk(start + moved, start + 60)
        c = chunk(start + 60, start + 60 + moved)
        wanted = [*bos, *b, *c]
        eng.reset()
        cold_text, cold = gen(wanted)
        if not can:
            print(f"{moved:>12}{cold.prompt_ms:>21.0f} / {cold.evaluated_tokens:>6}{'(cannot shift)':>28}")
            continue
        eng.reset()
        eng.prefill([*bos, *a, *b, 0], threading.Event())  # [BOS]+A+B read, as before the move
        lib.llama_memory_seq_rm(mem, 0, 1, 1 + len(a))
        lib.llama_memory_seq_add(mem, 0, 1 + len(a), -1, -len(a))
        eng._tokens = [*bos, *b]
        shifted_text, shifted = gen(wanted)
        print(
            f"{moved:>12}{cold.prompt_ms:>21.0f} / {cold.evaluated_tokens:>6}"
            f"{shifted.prompt_ms:>19.0f} / {shifted.evaluated_tokens:>6}{cold_text == shifted_text!s:>11}",
            flush=True,
        )
    eng.close()


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_KEYWORDS = frozenset(
    "False None True and as assert async await break class continue def del elif else except finally for from"
    " global if import in is lambda nonlocal not or pass raise return try while with yield".split()
)


def recall(prompt: str, line: str) -> float | None:
    """Share of the target line's names (2+ characters, no keywords) that the prompt holds."""
    names = {n for n in _NAME.findall(line) if n not in _KEYWORDS}
    if not names:
        return None
    held = set(_NAME.findall(prompt))
    return len(names & held) / len(names)


async def tradeoff_main(args: argparse.Namespace) -> None:
    """HumanEval single-line exact match / pass@1 and the prompt's recall of the hole's names
    against the number of new prompt tokens the first answer after a jump may read
    (`PromptBudget.fixed_tokens`; 0 = the whole prompt, today's path). Each task is a jump:
    the KV cache is cleared first, so only BOS is reused. Same tasks, same run."""
    from benchmarks.humaneval_local import DATA, load_tasks, passes, quality_config
    from lsp_assist.cli.session import complete_text
    from lsp_assist.context.templates import render_completion, resolve_template
    from lsp_assist.domain import Cursor
    from lsp_assist.providers.local import LocalProvider
    from lsp_assist.providers.prompt_budget import fit_prompt
    from lsp_assist.server import build_runtime

    if not DATA.exists():
        print(f"data not found: {DATA}")
        return
    tasks = load_tasks(args.n, args.seed)
    work = Path(tempfile.mkdtemp(prefix="lsp-tradeoff-"))
    os.environ["LSP_ASSIST_CACHE_DIR"] = str(work / "cache")
    print(f"HumanEval single-line infilling, {len(tasks)} tasks (seed {args.seed}); every task is a jump")
    print(
        f"{'new prompt tokens':>18}{'prompt tokens p50':>19}{'recall':>8}{'exact':>8}{'pass@1':>8}"
        f"{'ttft p50':>10}"
    )
    for size in args.sizes:
        rt = build_runtime([], quality_config("gemma3-270m"))
        await rt.wait_for_models()
        provider = rt.providers["fast"]
        assert isinstance(provider, LocalProvider) and provider._executor is not None
        engine = provider._engine
        provider.budget.fixed_tokens = size or None
        provider.budget.budget_ms = 0.0
        loop = asyncio.get_running_loop()
        exact = passed = 0
        recalls: list[float] = []
        sizes: list[float] = []
        ttft: list[float] = []
        try:
            for i, task in enumerate(tasks):
                hole = task["canonical_solution"].rstrip("\n")
                indent = hole[: len(hole) - len(hole.lstrip())]
                text = task["prompt"] + indent + "\n" + task["suffix"]
                line_no = task["prompt"].count("\n")
                path = work / f"task_{i}.py"
                await loop.run_in_executor(provider._executor, engine.reset)  # a jump: nothing cached
                res = await complete_text(rt, path, text, line_no, len(indent), version=i + 1)
                if "ttft" in res.stages:
                    ttft.append(res.stages["ttft"])
                flight = rt.engine.launcher.live_stream("file://" + str(path)) if rt.engine else None
                if flight is not None:  # the line the user ends up with: the finished stream's
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(asyncio.shield(flight.final), 60)
                    final = await complete_text(rt, path, text, line_no, len(indent), version=i + 1)
                    res = final if final.text else res
                got = res.text.split("\n", 1)[0].rstrip()
                exact += int(got.strip() == hole.strip())
                passed += int(bool(got) and passes(task, got, indent))
                prompt = rt.engine.prompts.for_open(
                    "file://" + str(path), Cursor(line_no, len(indent)), "fast"
                )
                if prompt is not None:
                    template = resolve_template("auto", provider._path_name, provider._template)
                    rendered = render_completion(prompt.context, template, "").prompt
                    tokens = await loop.run_in_executor(provider._executor, engine.tokenize, rendered)
                    seen, _ = fit_prompt(tokens, [], size or None, provider._line_enders)
                    sizes.append(float(len(seen)))
                    piece = b"".join(engine._piece(t) for t in seen[1:]).decode("utf-8", "replace")
                    r = recall(piece, hole)
                    if r is not None:
                        recalls.append(r)
                rt.store.close("file://" + str(path))
        finally:
            await rt.aclose()
        n = len(tasks)
        print(
            f"{size or 'all':>18}{percentile(sizes, 50):>19.0f}"
            f"{statistics.fmean(recalls) if recalls else 0:>8.0%}"
            f"{exact / n:>8.1%}{passed / n:>8.1%}{percentile(ttft, 50):>8.0f}ms",
            flush=True,
        )


def _mem(pid: int) -> dict[str, int]:
    """kB figures of one process from /proc (Rss, Pss, shared and private pages)."""
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
            key, _, rest = line.partition(":")
            out[key.strip()] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


async def memory_main(args: argparse.Namespace) -> None:
    """RSS and PSS of two servers of one user on the same model file, per backend."""
    print(f"{'backend':12}{'process':>10}{'RSS MB':>10}{'PSS MB':>10}{'shared MB':>11}{'private MB':>12}")
    base = Path(tempfile.mkdtemp(prefix="lsp-local-memory-"))
    for backend in args.backends:
        clients = []
        for i in range(2):
            work = base / f"{backend}-{i}"
            work.mkdir(parents=True)
            (work / "config.toml").write_text(f'[local]\nbackend = "{backend}"\n', encoding="utf-8")
            env = {
                "LSP_ASSIST_CACHE_DIR": str(work / "cache"),
                "LSP_ASSIST_CONFIG": str(work / "config.toml"),
                "PYTHONPATH": str(ROOT),
            }
            client = await RpcClient.start([sys.executable, "-m", "lsp_assist", "serve"], env)
            await client.initialize("file://" + str(work), {})
            uri = "file://" + str(work / "a.py")
            client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "python",
                        "version": 1,
                        "text": "import os\nos.",
                    }
                },
            )
            for _ in range(120):  # until the model answered once (it is loaded and has run)
                res = await client.call(
                    "textDocument/inlineCompletion",
                    {
                        "textDocument": {"uri": uri},
                        "position": {"line": 1, "character": 3},
                        "context": {"triggerKind": 1},
                    },
                    timeout=60,
                )
                if (res.get("result") or {}).get("items"):
                    break
                await asyncio.sleep(0.5)
            clients.append(client)
        total_pss = 0
        for i, client in enumerate(clients):
            pids = [client.proc.pid, *_children(client.proc.pid)]
            for pid in pids:
                m = _mem(pid)
                if not m:
                    continue
                shared = m.get("Shared_Clean", 0) + m.get("Shared_Dirty", 0)
                private = m.get("Private_Clean", 0) + m.get("Private_Dirty", 0)
                total_pss += m.get("Pss", 0)
                role = "server" if pid == client.proc.pid else "model"
                print(
                    f"{backend:12}{f'{role} {i}':>10}{m.get('Rss', 0) / 1024:>10.0f}"
                    f"{m.get('Pss', 0) / 1024:>10.0f}{shared / 1024:>11.0f}{private / 1024:>12.0f}"
                )
        print(f"{backend:12}{'total PSS of 2 servers':>30}: {total_pss / 1024:.0f} MB")
        for client in clients:
            await client.close()


async def preempt_main(args: argparse.Namespace) -> None:
    """What the refine model costs a request that arrives while it rewrites (in-process,
    the real `LocalProvider`): time to the first token of Gemma requests at fresh lines of
    the module, alternately with the model idle and while the refine model
    (qwen2.5-coder-1.5b) reads a whole prompt elsewhere in the file (the request stops it
    between two 4-token batches)."""
    from lsp_assist.config.schema import LocalConfig, TierConfig
    from lsp_assist.domain import ModelRequest, PromptContext
    from lsp_assist.providers.local import LocalProvider

    lines = source_path(args.module).read_text(encoding="utf-8").split("\n")
    typed, cold = pick_statements(lines, 3 * args.trials, args.seed)
    rows = typed + cold
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="lsp-preempt-"))
    local = LocalConfig(refine_model="qwen2.5-coder-1.5b")
    p = LocalProvider(TierConfig(provider="local"), local, work)

    def request(row: int, refine: bool) -> ModelRequest:
        prefix = (
            "\n".join(lines[:row])[-1500:] + "\n" + lines[row][: len(lines[row]) - len(lines[row].lstrip())]
        )
        ctx = PromptContext("python", "decoder.py", prefix, "\n" + "\n".join(lines[row + 1 :])[:600])
        return ModelRequest(ctx, max_tokens=24, temperature=0.0, stop=("\n",), refine=refine)

    async def first_token(req: ModelRequest) -> float:
        t0 = time.perf_counter()
        got = float("nan")
        async for chunk in p.stream(req):
            if chunk.text and got != got:
                got = (time.perf_counter() - t0) * 1000
        return got

    async def drain(req: ModelRequest) -> str:
        return "".join([c.text async for c in p.stream(req)])

    try:
        await p.ready()
        if not await p.refiner_ready():
            print("the refine model did not load (is the 'local-coder' extra installed?)")
            return
        idle: list[float] = []
        busy: list[float] = []
        stopped = 0
        for i in range(args.trials):
            fg_idle, fg_busy, bg = (rows[(3 * i + k) % len(rows)] for k in range(3))
            idle.append(await first_token(request(fg_idle, False)))
            await asyncio.sleep(0.5)
            rewriting = asyncio.create_task(drain(request(bg, True)))
            await asyncio.sleep(rng.uniform(0.2, 2.0))  # the coder is reading its prompt
            busy.append(await first_token(request(fg_busy, False)))
            stopped += int(not (await rewriting))
            await asyncio.sleep(0.5)
        print(f"refine model cost to a request arriving while it rewrites, {args.trials} trials")
        print(f"{'':34}{'p50':>8}{'p90':>8}{'max':>8}")
        for label, xs in (
            ("first token, model idle (ms)", idle),
            ("first token, during a rewrite (ms)", busy),
        ):
            xs = sorted(xs)
            print(f"{label:34}{percentile(xs, 50):>8.0f}{percentile(xs, 90):>8.0f}{xs[-1]:>8.0f}")
        print(f"rewrites stopped before writing: {stopped} / {args.trials}")
    finally:
        await p.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--module", default=SOURCE_MODULE, help="standard-library module to type in")
    parser.add_argument("--statements", type=int, default=6)
    parser.add_argument("--jumps", type=int, default=8, help="requests per jump phase (fresh, invoked, rest)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--backends",
        nargs="+",
        default=["inprocess-today", "inprocess"],
        help="inprocess, inprocess-today (before issue 26), inprocess-norefine, server, inprocess-nodebounce,"
        " inprocess-budgetMS",
    )
    parser.add_argument(
        "--phases", nargs="+", default=["fresh", "invoked", "rest"], help="jump phases to run"
    )
    parser.add_argument("--no-cold", action="store_true", help="skip the cold requests")
    parser.add_argument(
        "--baseline-src", help='a source tree (e.g. `git archive` of the base commit) for "X@base" backends'
    )
    parser.add_argument("--threads", action="store_true", help="thread counts, idle and loaded (engine)")
    parser.add_argument("--speculation", action="store_true", help="prompt-lookup drafts vs none (engine)")
    parser.add_argument("--memory", action="store_true", help="RSS/PSS of two servers on one model file")
    parser.add_argument("--shift", action="store_true", help="KV-cache shifting (cache reuse) on Gemma 3")
    parser.add_argument(
        "--tradeoff", action="store_true", help="HumanEval/recall against the jump's prompt size"
    )
    parser.add_argument("--n", type=int, default=30, help="HumanEval tasks for --tradeoff")
    parser.add_argument(
        "--preempt", action="store_true", help="a request's first token while the refine model rewrites"
    )
    parser.add_argument("--trials", type=int, default=12, help="requests per case for --preempt")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[32, 64, 128, 0], help="new prompt tokens; 0: all"
    )
    args = parser.parse_args()
    if args.threads:
        threads_main(args)
    elif args.speculation:
        speculation_main(args)
    elif args.memory:
        asyncio.run(memory_main(args))
    elif args.shift:
        shift_main(args)
    elif args.tradeoff:
        asyncio.run(tradeoff_main(args))
    elif args.preempt:
        asyncio.run(preempt_main(args))
    else:
        asyncio.run(session_main(args))


if __name__ == "__main__":
    main()
