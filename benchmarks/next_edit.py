"""Next-edit benchmark: real changes from git history, replayed over real stdio.

The corpus (`benchmarks/data/next_edit_cases*.json.gz`, mined by `next_edit_corpus.py`
from thirteen repositories; each case names its repository, commit and path) holds repeated
changes (one change at two or more places of a file) and single-edit controls (one place
changed, the old text left elsewhere). Each case opens the file as it was before the
commit, types the first place's change as keystrokes (didChange: the old text selected and
overtyped, then one key per character), and asks `textDocument/copilotInlineEdit` at the
end of it. Judging (`next_edit_score.py`): on a repeated case a proposal is correct when it
is exactly one of the commit's other places; on a control any proposal the commit did not
make is a false alarm. Precision = correct / proposed, recall = correct / cases (repeated
cases); FP = false alarms / controls.

Predictors, in one run, printed per repository, per half (tuning: the rules' constants
were set on it; validation: held out, but its errors were analysed; fresh: mined after the
rules were set, never analysed) and overall:
- baseline: the next textual occurrence of the old text after the cursor, in process;
- rules @REF: the rule predictor as it was at `--before` (main before this change), its
  package taken with `git archive` and served beside this one;
- rules (now): this checkout's rule predictor (`next_edit.predictor = "rules"`);
- with `--learned`, rules, learned: the same with `next_edit.confidence = "learned"` (the
  table `next_edit_confidence.py` fits on the tuning half);
- zeta, sweep, instruct (fake model): the model predictor with each prompt format against
  a loopback fake that answers with the region it was sent, the commit's next change
  applied (plumbing and parsing; it proposes nothing on controls by construction);
- with `--model qwen2.5-coder-1.5b`: the instruct format on the embedded code model for
  real (`next_edit_model.py`), over `--model-cases` cases spread over the repositories,
  printed beside the other predictors on the same cases.

Latency: from writing the last didChange to parsing the response, at the client (target
for the rules: 10 ms); for the fake model formats also from its last token to the parsed
response. The floor: the same request for a stale version (no prediction). Run under the
shared CPU lock:

    flock -x /tmp/lsp-cpu.lock python -m benchmarks.next_edit [--formats zeta,sweep,instruct]
        [--before REF] [--learned] [--model qwen2.5-coder-1.5b --model-cases 40 --model-budget-s 540]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import io
import json
import statistics
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, FakeModelServer, Script, arg_parser
from benchmarks.next_edit_corpus import CORPORA
from benchmarks.next_edit_model import model_server, warm
from benchmarks.next_edit_score import (
    HEADER,
    Outcome,
    SessionOutcome,
    figures,
    judge,
    next_of,
    places_after_first,
    row,
    scopes,
    session_table,
    table,
)
from benchmarks.next_edit_session import METHOD, keys_for, send_key, session, u16
from benchmarks.rpc_client import RpcClient, server_at, server_cmd
from lsp_assist.nextedit.formats import instruct, sweep, zeta

OFFLINE = {"provider": "offline"}
#: Main before the learned confidence (the evidence gate at 0.8), run beside this checkout's.
BEFORE = "b081de4"


def baseline(cases: list[dict[str, Any]]) -> list[Outcome]:
    """The next textual occurrence of the old text after the cursor (then from the top)."""
    out = []
    for i, case in enumerate(cases):
        first, _, lines = places_after_first(case)
        text = "\n".join(lines)
        cursor = sum(len(x) + 1 for x in lines[: first.line]) + first.col + len(first.new)
        at = text.find(first.old, cursor)
        if at < 0:
            at = text.find(first.old)
        edit = None
        if at >= 0:
            row = text.count("\n", 0, at)
            col = at - (text.rfind("\n", 0, at) + 1)
            a = u16(lines[row][:col])
            edit = {
                "range": {
                    "start": {"line": row, "character": a},
                    "end": {"line": row, "character": a + u16(first.old)},
                },
                "text": first.new,
            }
        out.append(judge(i, case, edit))
    return out


async def replay(
    client: RpcClient, root: Path, i: int, case: dict[str, Any], timeout_s: float = 30.0
) -> tuple[dict[str, Any] | None, float, float]:
    """Open, type the first change, ask. (the first edit or None, ms from the last didChange
    to the parsed answer, the answer's parse time on the monotonic clock)."""
    first, _, _ = places_after_first(case)
    uri = (root / f"case{i}" / Path(case["path"]).name).as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": case["before"]}},
    )
    row = case["before"].split("\n")[first.line]
    # Every keystroke but the last, then a round trip so the server has applied them: the
    # latency measured is that of the didChange that completes the edit, as when typing.
    keys, pos = keys_for(row, first)
    version = 1
    for key in keys[:-1]:
        version += 1
        send_key(client, uri, version, key)
    await client.call(
        METHOD, {"textDocument": {"uri": uri, "version": 0}, "position": {"line": 0, "character": 0}}
    )
    version += 1
    t0 = time.monotonic()
    send_key(client, uri, version, keys[-1])
    msg_id, fut = client.request(
        METHOD,
        {
            "textDocument": {"uri": uri, "version": version},
            "position": {"line": first.line, "character": pos},
        },
    )
    msg = await asyncio.wait_for(fut, timeout_s)
    elapsed = (client.received_at[msg_id] - t0) * 1000.0
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    edits = (msg.get("result") or {}).get("edits") or []
    return (edits[0] if edits else None), elapsed, client.received_at[msg_id]


async def floor(client: RpcClient, root: Path, n: int = 30) -> list[float]:
    """The same request for a stale version: the protocol's round trip, no prediction."""
    uri = (root / "floor.py").as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 5, "text": "x = 1\n"}},
    )
    out = []
    for _ in range(n):
        msg_id, fut = client.request(
            METHOD, {"textDocument": {"uri": uri, "version": 4}, "position": {"line": 0, "character": 1}}
        )
        t0 = client.sent_at[msg_id]
        await asyncio.wait_for(fut, 30)
        out.append((client.received_at[msg_id] - t0) * 1000.0)
    return out


def _region(prompt: str, start: str, end: str, cursor: str) -> str:
    return (
        prompt.split(start, 1)[1].split(end, 1)[0].removeprefix("\n").removesuffix("\n").replace(cursor, "")
    )


def scripted(fmt: str, expect: dict[str, str]) -> Callable[[Any], str]:
    """The fake model's answer: the region it was sent, with the commit's next change applied."""

    def answer(body: Any) -> str:
        if fmt == "sweep":
            prompt = str(body.get("prompt"))
            region = (
                prompt.split(f"{sweep.SEP}current/", 1)[1]
                .split("\n", 1)[1]
                .split(sweep.SEP, 1)[0]
                .removesuffix("\n")
            )
        elif fmt == "zeta":
            region = _region(str(body.get("prompt")), zeta.START, zeta.END, zeta.CURSOR)
        else:
            msgs = body.get("messages") or [{"content": body.get("prompt")}]
            region = _region(str(msgs[-1]["content"]), instruct.START, instruct.END, instruct.CURSOR)
        rows = region.split("\n")
        if expect["old"] in rows:
            rows[rows.index(expect["old"])] = expect["new"]
        new = "\n".join(rows)
        if fmt == "sweep":
            return new + "\n" + sweep.SEP
        if fmt == "zeta":
            return f"{zeta.START}\n{new}\n{zeta.END}"
        return f"```python\n{new}\n```"

    return answer


@dataclass
class Run:
    """How one server is started and configured for one predictor's pass over the cases."""

    name: str
    init: dict[str, Any]
    command: list[str] = field(default_factory=server_cmd)
    fake: FakeModelServer | None = None
    fmt: str = ""
    budget_s: float = 0.0  # stop starting new cases after this long (0: no bound)
    answer_s: float = 30.0  # longest wait for one answer
    # When a list: every repeated change is also replayed as a session, into it.
    sessions: list[SessionOutcome] | None = None


async def run_server(
    run: Run, cases: list[dict[str, Any]], only: list[int] | None = None
) -> tuple[list[Outcome], list[float]]:
    """Replay `cases` (those in `only`, when given) against a fresh server; its outcomes and floor."""
    out: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        client = await RpcClient.start(
            run.command,
            env={
                "LSP_ASSIST_CACHE_DIR": str(root / "cache"),
                "LSP_ASSIST_CONFIG": str(root / "none.toml"),
                "LSP_ASSIST_POLICY": str(root / "none.toml"),
            },
        )
        try:
            await client.initialize(root.as_uri(), run.init)
            floor_ms = await floor(client, root)
            started = time.monotonic()
            for i in only if only is not None else range(len(cases)):
                if run.budget_s and time.monotonic() - started > run.budget_s:
                    break
                case = cases[i]
                fake = run.fake
                if fake is not None:
                    first, others, lines = places_after_first(case)
                    # A control has no next change: the fake model answers with the region as sent.
                    target = next_of(first, others) if others else first
                    row = lines[target.line]
                    changed = row[: target.col] + target.new + row[target.col + len(target.old) :]
                    expect = {"old": row, "new": changed if others else row}
                    fake.default = Script(text=scripted(run.fmt, expect), ttft_ms=20)
                    fake.stream_times.clear()
                edit, ms, received = await replay(client, root, i, case, run.answer_s)
                tok = None
                if fake is not None and fake.stream_times and fake.stream_times[-1][1]:
                    tok = (received - fake.stream_times[-1][1][-1]) * 1000.0
                out.append(judge(i, case, edit, latency_ms=ms, after_token_ms=tok))
            if run.sessions is not None:
                for i, case in enumerate(cases):
                    if not case.get("control"):
                        run.sessions.append(await session(client, root, i, case))
        finally:
            await client.close()
    return out, floor_ms


def load(limit: int) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in CORPORA:
        if path.exists():
            cases += json.loads(gzip.decompress(path.read_bytes()))["cases"]
    return cases[:limit] if limit else cases


def checkout(ref: str, into: Path) -> Path:
    """The package as it was at `ref` (git archive: no worktree, nothing written to .git)."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "lsp_assist"], capture_output=True, check=True
    ).stdout
    tarfile.open(fileobj=io.BytesIO(data)).extractall(into, filter="data")
    return into


def spread(cases: list[dict[str, Any]], n: int) -> list[int]:
    """`n` case indices spread over every repository, controls in their corpus proportion."""
    groups: dict[tuple[str, bool], list[int]] = {}
    for i, c in enumerate(cases):
        groups.setdefault((c["repo"], bool(c.get("control"))), []).append(i)
    picked: list[int] = []
    share = n / max(1, len(cases))
    for members in groups.values():
        k = max(1, round(share * len(members)))
        step = len(members) / k
        picked += [members[int(j * step)] for j in range(k)]
    return sorted(picked)[:n]


BASE = {
    "tiers": {"fast": OFFLINE, "quality": OFFLINE, "backup": OFFLINE},
    "workspace": {"index": False},
    "completion": {"prefetch": False},
}


async def fake_runs(cases: list[dict[str, Any]], formats: list[str]) -> list[tuple[str, list[Outcome]]]:
    runs: list[tuple[str, list[Outcome]]] = []
    if not formats:
        return runs
    fake = FakeModelServer().start()
    try:
        for fmt in formats:
            tier = {
                "provider": "openai",
                "api": "chat" if fmt == "instruct" else "completions",
                "base_url": fake.base_url,
                "model": f"fake-{fmt}",
            }
            init = {**BASE, "tiers": {"fast": tier, "quality": tier, "backup": OFFLINE}}
            init["next_edit"] = {"predictor": "model", "format": fmt}
            outcomes, _ = await run_server(Run(f"{fmt} (fake model)", init, fake=fake, fmt=fmt), cases)
            runs.append((f"{fmt} (fake model)", outcomes))
    finally:
        fake.stop()
    return runs


async def real_model_run(
    args: argparse.Namespace, cases: list[dict[str, Any]], subset: list[int]
) -> list[Outcome]:
    """The instruct format on the embedded code model, for real, over `subset`."""
    cache = Path(tempfile.mkdtemp(prefix="next-edit-model-"))
    with model_server(args.model, cache, threads=args.model_threads) as base_url:
        print(f"real model: {args.model} at {base_url}, warm-up {warm(base_url):.1f} s", flush=True)
        tier = {"provider": "openai", "api": "chat", "base_url": base_url, "model": "coder"}
        init = {**BASE, "tiers": {"fast": tier, "quality": tier, "backup": OFFLINE}}
        init["next_edit"] = {
            "predictor": "model",
            "format": "instruct",
            "region_lines": args.model_region_lines,
            "prompt_edits": 2,
            "max_tokens": 256,
            "timeout_ms": 120_000,
        }
        # The model's own bound is timeout_ms (120 s): the client waits a little longer.
        run = Run("instruct (real model)", init, budget_s=args.model_budget_s, answer_s=150.0)
        outcomes, _ = await run_server(run, cases, subset)
    return outcomes


async def sweep_table(cases: list[dict[str, Any]], thresholds: list[float]) -> str:
    """The evidence gate at each `next_edit.min_confidence`, per half (the learned
    confidence's own sweep: `next_edit_confidence.py`)."""
    lines = ["rules, confidence = evidence, by next_edit.min_confidence (0.8 set on tuning):", HEADER]
    for t in thresholds:
        init = {**BASE, "next_edit": {"predictor": "rules", "confidence": "evidence", "min_confidence": t}}
        outcomes, _ = await run_server(Run("", init), cases)
        for label, idx in scopes(cases):
            if label.endswith("half") or label.startswith("tuning:"):
                lines.append(
                    row(label, f"min_confidence {t:g}", figures(o for o in outcomes if o.case in idx))
                )
    return "\n".join(lines) + "\n"


async def main_async(args: argparse.Namespace) -> None:
    cases = load(args.cases)
    names = ", ".join(str(p.relative_to(ROOT)) for p in CORPORA if p.exists())
    print(f"next-edit benchmark: {len(cases)} cases from {names}")
    for repo in sorted({c["repo"] for c in cases}):
        mine = [c for c in cases if c["repo"] == repo]
        commits = len({c["commit"] for c in mine})
        controls = sum(1 for c in mine if c.get("control"))
        print(f"  {repo}: {len(mine) - controls} repeated, {controls} controls, from {commits} commits")
    runs: list[tuple[str, list[Outcome]]] = [("baseline (text)", baseline(cases))]
    sessions: list[tuple[str, list[SessionOutcome]]] = []
    floors: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            old = checkout(args.before, Path(tmp))
            init = {**BASE, "next_edit": {"predictor": "rules"}}
            before = Run("", init, server_at(old), sessions=[])
            outcomes, floors["before"] = await run_server(before, cases)
            runs.append((f"rules @{args.before[:7]}", outcomes))
            sessions.append((f"rules @{args.before[:7]}", before.sessions or []))
    now = Run("rules", {**BASE, "next_edit": {"predictor": "rules"}}, sessions=[])
    rules, floors["rules"] = await run_server(now, cases)
    runs.append(("rules (now)", rules))
    sessions.append(("rules (now)", now.sessions or []))
    if args.learned:
        init = {**BASE, "next_edit": {"predictor": "rules", "confidence": "learned"}}
        learned = Run("", init, sessions=[])
        outcomes, floors["learned"] = await run_server(learned, cases)
        runs.append(("rules, learned", outcomes))
        sessions.append(("rules, learned", learned.sessions or []))
    runs += await fake_runs(cases, [f for f in args.formats.split(",") if f])
    print()
    print(table(cases, runs))
    print("sessions: each repeated change made place by place, proposals accepted when right")
    print("(next_edit_session.py); recall = accepted proposals / places after the first:")
    print(session_table(cases, sessions))
    if args.sweep:
        print(await sweep_table(cases, [float(x) for x in args.sweep.split(",")]))
    print("prop./corr.: proposals on repeated cases, and those that were one of the commit's places;")
    print("ctrl/alarm/FP: single-edit controls, proposals there the developer did not make, their rate;")
    print("p50/p95: last didChange written -> answer parsed, at the client, over all cases;")
    print("tok: the fake model's last token -> answer parsed (model formats).")
    print(
        "floor (the same request for a stale version, no prediction): "
        + ", ".join(f"{k} p50 {statistics.median(v):.1f} ms" for k, v in floors.items())
    )
    if args.model:
        subset = spread(cases, args.model_cases)
        real = await real_model_run(args, cases, subset)
        done = {o.case for o in real}
        print()
        print(f"real model: {len(done)} of {len(subset)} cases within {args.model_budget_s:.0f} s, same run")
        side = [r for r in runs if "fake" not in r[0]]
        print(table(cases, [*side, ("instruct (real model)", real)], done))


def main() -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("--cases", type=int, default=0, help="first N cases only (0: all)")
    ap.add_argument("--formats", default="zeta,sweep,instruct", help="fake-model formats ('' for none)")
    ap.add_argument("--before", default=BEFORE, help="git ref of today's rules, run beside ('' to skip)")
    ap.add_argument(
        "--learned", action="store_true", help="also run the rules with next_edit.confidence = learned"
    )
    ap.add_argument("--sweep", default="", help="min_confidence values to run the rules at (0.6,0.8,...)")
    ap.add_argument("--model", default="", help="a real model for the instruct format (qwen2.5-coder-1.5b)")
    ap.add_argument("--model-cases", type=int, default=40, help="cases the real model runs (spread)")
    ap.add_argument("--model-budget-s", type=float, default=540.0, help="no new real-model case after this")
    ap.add_argument("--model-threads", type=int, default=2)
    ap.add_argument("--model-region-lines", type=int, default=3)
    asyncio.run(main_async(ap.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
