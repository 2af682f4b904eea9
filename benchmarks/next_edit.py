"""Next-edit benchmark: real repeated changes from git history, replayed over real stdio.

The corpus (`benchmarks/data/next_edit_cases.json.gz`, mined by `next_edit_corpus.py`
from psf/requests, pallets/click and encode/httpx; each case names its repository,
commit and path) holds commits in which one change repeats at two or more places of a
file. Each case opens the file as it was before the commit, types the first place's
change as keystrokes (didChange: the old text selected and overtyped, then one key per
character), and asks `textDocument/copilotInlineEdit` at the end of it. A proposal is
correct when it is exactly one of the commit's other places (range and text); "next" when
it is the one the commit changed next in file order. Precision = correct / proposed,
recall = correct / cases.

Predictors, in one run:
- baseline: the next textual occurrence of the old text after the cursor, in process (no
  identifier boundaries, no syntax, no scope);
- rules: the server's rule predictor (`next_edit.predictor = "rules"`);
- zeta, sweep, instruct: the model predictor with each prompt format, against a loopback
  fake model that answers with the editable region it was sent, the commit's next change
  applied (a plumbing and parsing check: its misses are places outside the region).

Latency: from writing the last didChange to parsing the response, at the client (target
for the rules: 10 ms); for the model formats also from the fake model's last token to the
parsed response (target: 20 ms). The floor: the same request for a stale version (no
prediction). Run under the shared CPU lock:

    flock -x /tmp/lsp-cpu.lock python benchmarks/next_edit.py [--cases N] [--formats zeta,sweep,instruct]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.next_edit_corpus import OUT as CORPUS  # noqa: E402
from benchmarks.rpc_client import RpcClient, server_cmd  # noqa: E402
from lsp_assist.nextedit.formats import instruct, sweep, zeta  # noqa: E402
from tests.fakes.fake_model_server import FakeModelServer, Script  # noqa: E402

METHOD = "textDocument/copilotInlineEdit"
OFFLINE = {"provider": "offline"}


def u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Tally:
    name: str
    proposed: int = 0
    correct: int = 0
    next: int = 0
    cases: int = 0
    latency_ms: list[float] = field(default_factory=list)
    after_token_ms: list[float] = field(default_factory=list)

    def row(self) -> str:
        precision = self.correct / self.proposed if self.proposed else float("nan")
        recall = self.correct / self.cases if self.cases else float("nan")
        lat = _pct(self.latency_ms)
        tok = _pct(self.after_token_ms)
        return (
            f"{self.name:<18}{self.cases:>6}{self.proposed:>9}{self.correct:>9}{self.next:>6}"
            f"{precision:>11.2f}{recall:>8.2f}{lat}{tok}"
        )


def _pct(values: list[float]) -> str:
    if not values:
        return f"{'-':>9}{'-':>9}"
    s = sorted(values)
    p95 = s[min(len(s) - 1, int(0.95 * len(s)))]
    return f"{statistics.median(s):>9.1f}{p95:>9.1f}"


@dataclass(frozen=True)
class Place:
    line: int
    col: int  # code points
    old: str
    new: str


def places_after_first(case: dict[str, Any]) -> tuple[Place, list[Place], list[str]]:
    """The first place, the others as they stand after the first change, and the lines."""
    first, *rest = [Place(p["line"], p["col"], p["old"], p["new"]) for p in case["places"]]
    lines = case["before"].split("\n")
    line = lines[first.line]
    lines[first.line] = line[: first.col] + first.new + line[first.col + len(first.old) :]
    shift = len(first.new) - len(first.old)
    moved = [
        Place(p.line, p.col + shift if p.line == first.line and p.col > first.col else p.col, p.old, p.new)
        for p in rest
    ]
    return first, moved, lines


def next_of(first: Place, others: list[Place]) -> Place:
    after = [p for p in others if (p.line, p.col) > (first.line, first.col)]
    return after[0] if after else others[0]


def _applied(lines: list[str], edit: dict[str, Any]) -> tuple[int, str] | None:
    """(row, the row after the edit) for a one-row edit; None for anything else."""
    r = edit["range"]
    row = r["start"]["line"]
    if row != r["end"]["line"] or not 0 <= row < len(lines):
        return None
    line = lines[row]
    units = line.encode("utf-16-le")
    a, b = 2 * r["start"]["character"], 2 * r["end"]["character"]
    new = (units[:a] + edit["text"].encode("utf-16-le") + units[b:]).decode("utf-16-le", "replace")
    return row, new


def _place_applied(lines: list[str], p: Place) -> tuple[int, str]:
    line = lines[p.line]
    return p.line, line[: p.col] + p.new + line[p.col + len(p.old) :]


def score(
    tally: Tally, edit: dict[str, Any] | None, lines: list[str], first: Place, others: list[Place]
) -> None:
    """Correct: the edit makes one of the commit's other changes (judged by the row it
    leaves, so `cookie|lib|` -> `jar` and `cookielib` -> `cookiejar` are the same edit)."""
    tally.cases += 1
    if edit is None:
        return
    tally.proposed += 1
    got = _applied(lines, edit)
    if got is not None and any(got == _place_applied(lines, p) for p in others):
        tally.correct += 1
        if got == _place_applied(lines, next_of(first, others)):
            tally.next += 1


def baseline(cases: list[dict[str, Any]]) -> Tally:
    tally = Tally("baseline (text)")
    for case in cases:
        first, others, lines = places_after_first(case)
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
        score(tally, edit, lines, first, others)
    return tally


Key = tuple[int, int, int, str]  # (row, start column, end column, text): one keystroke


def _change(client: RpcClient, uri: str, version: int, key: Key) -> None:
    line, a, b, text = key
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [
                {
                    "range": {"start": {"line": line, "character": a}, "end": {"line": line, "character": b}},
                    "text": text,
                }
            ],
        },
    )


async def replay(
    client: RpcClient, root: Path, i: int, case: dict[str, Any]
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
    col = u16(row[: first.col])
    # Every keystroke but the last, then a round trip so the server has applied them: the
    # latency measured is that of the didChange that completes the edit, as when typing.
    keys: list[Key] = [(first.line, col, col + u16(first.old), (first.new or "")[:1])]
    pos = col + u16(keys[0][3])
    for ch in (first.new or "")[1:]:
        keys.append((first.line, pos, pos, ch))
        pos += u16(ch)
    version = 1
    for key in keys[:-1]:
        version += 1
        _change(client, uri, version, key)
    await client.call(
        METHOD, {"textDocument": {"uri": uri, "version": 0}, "position": {"line": 0, "character": 0}}
    )
    version += 1
    t0 = time.monotonic()
    _change(client, uri, version, keys[-1])
    msg_id, fut = client.request(
        METHOD,
        {
            "textDocument": {"uri": uri, "version": version},
            "position": {"line": first.line, "character": pos},
        },
    )
    msg = await asyncio.wait_for(fut, 30)
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


async def run_server(
    name: str, init: dict[str, Any], cases: list[dict[str, Any]], fake: FakeModelServer | None, fmt: str = ""
) -> tuple[Tally, list[float]]:
    tally = Tally(name)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        client = await RpcClient.start(
            server_cmd(),
            env={
                "LSP_ASSIST_CACHE_DIR": str(root / "cache"),
                "LSP_ASSIST_CONFIG": str(root / "none.toml"),
                "LSP_ASSIST_POLICY": str(root / "none.toml"),
            },
        )
        try:
            await client.initialize(root.as_uri(), init)
            floor_ms = await floor(client, root)
            for i, case in enumerate(cases):
                first, others, lines = places_after_first(case)
                if fake is not None:
                    target = next_of(first, others)
                    row = lines[target.line]
                    changed = row[: target.col] + target.new + row[target.col + len(target.old) :]
                    fake.default = Script(text=scripted(fmt, {"old": row, "new": changed}), ttft_ms=20)
                    fake.stream_times.clear()
                edit, ms, received = await replay(client, root, i, case)
                score(tally, edit, lines, first, others)
                tally.latency_ms.append(ms)
                if fake is not None and fake.stream_times and fake.stream_times[-1][1]:
                    tally.after_token_ms.append((received - fake.stream_times[-1][1][-1]) * 1000.0)
        finally:
            await client.close()
    return tally, floor_ms


def load(limit: int) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(gzip.decompress(CORPUS.read_bytes()))["cases"]
    return cases[:limit] if limit else cases


async def main_async(args: argparse.Namespace) -> None:
    cases = load(args.cases)
    repos: dict[str, set[str]] = {}
    for c in cases:
        repos.setdefault(c["repo"], set()).add(c["commit"][:10])
    print(f"next-edit benchmark: {len(cases)} cases from {CORPUS.relative_to(ROOT)}")
    for repo, commits in sorted(repos.items()):
        print(f"  {repo}: {sum(1 for c in cases if c['repo'] == repo)} cases from {len(commits)} commits")
    base = {
        "tiers": {"fast": OFFLINE, "quality": OFFLINE, "backup": OFFLINE},
        "workspace": {"index": False},
        "completion": {"prefetch": False},
    }
    tallies = [baseline(cases)]
    rules, floor_ms = await run_server(
        "rules (stdio)", {**base, "next_edit": {"predictor": "rules"}}, cases, None
    )
    tallies.append(rules)
    floors = {"rules": floor_ms}
    fake = FakeModelServer().start()
    try:
        for fmt in [f for f in args.formats.split(",") if f]:
            tier = {
                "provider": "openai",
                "api": "chat" if fmt == "instruct" else "completions",
                "base_url": fake.base_url,
                "model": f"fake-{fmt}",
            }
            init = {
                **base,
                "tiers": {"fast": tier, "quality": tier, "backup": OFFLINE},
                "next_edit": {"predictor": "model", "format": fmt},
            }
            tally, floors[fmt] = await run_server(f"{fmt} (fake model)", init, cases, fake, fmt)
            tallies.append(tally)
    finally:
        fake.stop()
    print()
    print(
        f"{'predictor':<18}{'cases':>6}{'proposed':>9}{'correct':>9}{'next':>6}{'precision':>11}{'recall':>8}"
        f"{'p50 ms':>9}{'p95 ms':>9}{'tok p50':>9}{'tok p95':>9}"
    )
    for t in tallies:
        print(t.row())
    print()
    print("latency: from the last didChange written to the answer parsed, at the client;")
    print("tok: from the fake model's last token to the answer parsed (model formats).")
    print(
        "floor (the same request for a stale version, no prediction): "
        + ", ".join(f"{k} p50 {statistics.median(v):.1f} ms" for k, v in floors.items())
    )
    p95 = (
        sorted(rules.latency_ms)[int(0.95 * (len(rules.latency_ms) - 1))]
        if rules.latency_ms
        else float("nan")
    )
    print(f"rules p95 {p95:.1f} ms (target 10 ms); model formats: tok p95 against the 20 ms target above")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=0, help="first N cases only (0: all)")
    ap.add_argument("--formats", default="zeta,sweep,instruct")
    asyncio.run(main_async(ap.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
