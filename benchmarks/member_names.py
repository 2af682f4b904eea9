"""Names that exist: the embedded model after `x.`, free and with the member constraint.

Positions: member accesses in real code (standard-library modules, code no one here wrote;
a seeded sample of files and of accesses in them), the cursor placed right after
`receiver.` with the rest of that line removed, as when a person has just typed the dot.
Each position is completed twice by the same loaded model, greedy: free decoding (today's
path) and with `local.constrain_members` (the new one), in the same run. Per answer the
member it names is its leading identifier.

Printed, for both paths:
- undefined: the share of answers naming a member the code does not define, among
  positions an oracle can judge. The oracle is independent of `context/members.py`: `ast`
  on the whole file (a class's `def`s, class-level names and every `self.x` written in it,
  bases defined in the file; a base from elsewhere: not judged) and `dir()` of an imported
  standard module;
- member exact: the answer's member is the one the code has; line exact: the answer is the
  rest of the line;
- the constraint's reach (positions where a mask applied) and its cost: ms per generated
  token on each path, and the time inside `restrict`/`accept` per masked token.

Run under the exclusive CPU lock (each run under ~8 minutes):
  flock -x /tmp/lsp-cpu.lock .venv/bin/python -m benchmarks.member_names [--positions 80]
      [--model qwen2.5-coder-1.5b --refiner]   # the code model as it rewrites and escalates
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import io
import random
import re
import statistics
import sys
import sysconfig
import tempfile
import time
import tokenize
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.common import arg_parser

STDLIB = Path(sysconfig.get_paths()["stdlib"])
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass
class Position:
    path: Path
    text: str  # the file, the cursor line cut right after the dot
    line: int
    col: int
    receiver: str
    member: str  # what the code has
    rest: str  # the rest of the original line after the dot
    defined: frozenset[str] | None  # the oracle's names for the receiver (None: not judged)


@dataclass
class Tally:
    answers: list[str] = field(default_factory=list)
    judged: int = 0
    undefined: int = 0
    member_exact: int = 0
    line_exact: int = 0
    masked: int = 0
    tokens: int = 0
    gen_ms: float = 0.0
    first_ms: list[float] = field(default_factory=list)  # each generation's first choice: resolves
    step_ms: list[float] = field(default_factory=list)  # the other choices
    accept_ms: list[float] = field(default_factory=list)  # each emitted token


def _class_names(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            if isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return names | set(dir(object))


def oracle(tree: ast.Module) -> tuple[dict[int, frozenset[str] | None], dict[str, frozenset[str]]]:
    """(per line inside a class: its names with its bases', None when a base is from
    elsewhere; imported standard modules' names by local name)."""
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}

    def members(name: str, depth: int = 0) -> frozenset[str] | None:
        cls = classes.get(name)
        if cls is None or depth > 8:
            return None
        out = _class_names(cls)
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id == "object":
                continue
            got = members(base.id, depth + 1) if isinstance(base, ast.Name) else None
            if got is None:
                return None
            out |= got
        return frozenset(out)

    lines: dict[int, frozenset[str] | None] = {}
    for cls in classes.values():
        names = members(cls.name)
        for ln in range(cls.lineno, (cls.end_lineno or cls.lineno) + 1):
            lines[ln] = names  # the innermost class wins: walked outer first
    modules: dict[str, frozenset[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top in sys.stdlib_module_names and "." not in a.name:
                    try:
                        modules[a.asname or a.name] = frozenset(dir(importlib.import_module(a.name)))
                    except Exception:  # not on this platform
                        continue
    return lines, modules


def positions_in(path: Path) -> list[Position]:
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, tokenize.TokenError, UnicodeDecodeError):
        return []
    class_lines, modules = oracle(tree)
    lines = text.splitlines(keepends=True)
    out: list[Position] = []
    for i in range(2, len(toks)):
        a, dot, name = toks[i - 2], toks[i - 1], toks[i]
        if dot.string != "." or name.type != tokenize.NAME or a.type != tokenize.NAME:
            continue
        if i >= 3 and toks[i - 3].string == ".":
            continue  # a chain: keep receivers that are a plain name
        row, col = dot.end
        if a.string == "self":
            defined = class_lines.get(row)
        else:
            defined = modules.get(a.string)
        line = lines[row - 1]
        cut = "".join(lines[: row - 1]) + line[:col] + "\n" + "".join(lines[row:])
        rest = line[col:].rstrip("\n").rstrip()
        out.append(Position(path, cut, row - 1, col, a.string, name.string, rest, defined))
    return out


def sample(n: int, seed: int, files: int) -> list[Position]:
    rng = random.Random(seed)
    pool = sorted(p for p in STDLIB.rglob("*.py") if "test" not in p.parts and "site-packages" not in p.parts)
    rng.shuffle(pool)
    chosen: list[Position] = []
    per_file = max(1, n // files)
    for path in pool:
        if len(chosen) >= n:
            break
        if path.stat().st_size > 60_000:
            continue
        found = [p for p in positions_in(path) if p.receiver == "self" or p.defined is not None]
        rng.shuffle(found)
        chosen += sorted(found[:per_file], key=lambda p: p.line)
    return chosen[:n]


class TimedConstraint:
    """Wraps a member constraint to time the hook (what the constraint adds per token)."""

    def __init__(self, inner: Any, tally: Tally) -> None:
        self.inner = inner
        self.tally = tally
        self.first = True

    def restrict(self, logits: Any) -> Any:
        t = time.perf_counter()
        out = self.inner.restrict(logits)
        ms = (time.perf_counter() - t) * 1000.0
        (self.tally.first_ms if self.first else self.tally.step_ms).append(ms)
        self.first = False
        return out

    def accept(self, token: int) -> None:
        t = time.perf_counter()
        self.inner.accept(token)
        self.tally.accept_ms.append((time.perf_counter() - t) * 1000.0)

    # Token healing asks these (`local_stream._heal`): not timed.
    def applies(self) -> bool:
        return bool(self.inner.applies())

    def give_back(self, text: str) -> None:
        self.inner.give_back(text)


async def complete(
    provider: Any, ctx: Any, tally: Tally, constrained: bool, whole: bool = False, strong: bool = False
) -> str:
    from lsp_assist.domain import ModelRequest

    original = provider._constraint

    def timed(request: Any, refiner: bool = False) -> Any:
        inner = original(request, refiner)
        return TimedConstraint(inner, tally) if inner is not None else None

    provider._local = replace(provider._local, constrain_members=constrained)
    provider._constraint = timed
    try:
        # whole: asked as a refinement, the whole prompt is read (not cut to the jump budget),
        # as the refine model reads it when it rewrites an answer after a rest.
        request = ModelRequest(ctx, max_tokens=10, temperature=0.0, refine=whole)
        pieces = [c.text async for c in provider.stream(request, strong=strong)]
    finally:
        provider._constraint = original
    st = provider.last_stats
    tally.tokens += st.generated_tokens
    tally.gen_ms += st.generation_ms
    wrapped = provider.last_constraint
    if wrapped is not None and wrapped.inner.masked_steps:
        tally.masked += 1
    return "".join(pieces).split("\n", 1)[0]


def score(tally: Tally, pos: Position, answer: str) -> None:
    tally.answers.append(answer)
    m = _IDENT.match(answer)
    named = m.group() if m else ""
    tally.member_exact += int(named == pos.member)
    tally.line_exact += int(answer.rstrip() == pos.rest)
    if pos.defined is not None and named:
        tally.judged += 1
        tally.undefined += int(named not in pos.defined)


async def run(
    positions: list[Position], model: str, whole: bool = False, refiner: bool = False
) -> tuple[Tally, Tally, float]:
    from lsp_assist.config.schema import LocalConfig, TierConfig
    from lsp_assist.context.builder import ContextEngine
    from lsp_assist.domain import Cursor
    from lsp_assist.providers.local import LocalProvider

    free, constrained = Tally(), Tally()
    with tempfile.TemporaryDirectory() as td:
        # One model at a time: `model` itself, or (`refiner`) `model` as the refine model
        # beside Gemma, asked as an escalation: its prompt layout and its own vocabulary.
        local = LocalConfig(refine_model=model if refiner else "")
        typing = "gemma3-270m" if refiner else model
        provider = LocalProvider(TierConfig(provider="local", model=typing), local, Path(td))
        t0 = time.perf_counter()
        await provider.ready()
        assert await provider.members_ready()  # the vocabulary is read after the load
        assert not refiner or await provider.refiner_ready(urgent=True)
        load_s = time.perf_counter() - t0
        engine = ContextEngine()
        try:
            for pos in positions:
                ctx = engine.build_from_text(
                    pos.text, "python", str(pos.path), Cursor(pos.line, pos.col), 1500, layout="stable"
                )
                score(free, pos, await complete(provider, ctx, free, False, whole, refiner))
                score(constrained, pos, await complete(provider, ctx, constrained, True, whole, refiner))
        finally:
            await provider.aclose()
    return free, constrained, load_s


def report(positions: list[Position], free: Tally, constrained: Tally, load_s: float) -> None:
    n = len(positions)
    print(f"member accesses in {len({p.path for p in positions})} standard-library files, {n} positions")
    print(f"model load + vocabulary index: {load_s:.1f} s")
    print(f"{'path':<14}{'undefined':>16}{'member exact':>14}{'line exact':>12}{'masked':>8}{'ms/token':>10}")
    for name, t in (("free", free), ("constrained", constrained)):
        und = f"{t.undefined}/{t.judged} {t.undefined / max(1, t.judged):.1%}"
        print(
            f"{name:<14}{und:>16}{t.member_exact / n:>14.1%}{t.line_exact / n:>12.1%}{t.masked:>8}"
            f"{t.gen_ms / max(1, t.tokens):>10.2f}"
        )
    steps, first = constrained.step_ms, constrained.first_ms
    print(
        f"constraint hook per token choice: mean {statistics.fmean(steps or [0]):.3f} ms,"
        f" p50 {statistics.median(steps or [0]):.3f}, max {max(steps or [0]):.2f} ({len(steps)} choices);"
        f" a generation's first choice (resolves the receiver): mean {statistics.fmean(first or [0]):.2f} ms,"
        f" max {max(first or [0]):.1f}; accept {statistics.fmean(constrained.accept_ms or [0]):.3f} ms/token"
    )
    changed = sum(a != b for a, b in zip(free.answers, constrained.answers, strict=True))
    print(f"answers that differ: {changed}/{n}")
    if free.undefined:
        ratio = (constrained.undefined / max(1, constrained.judged)) / (free.undefined / free.judged)
        print(f"undefined names, constrained / free: {ratio:.2f}x")


def main() -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("--positions", type=int, default=80)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--model", default="gemma3-270m")
    ap.add_argument(
        "--whole",
        action="store_true",
        help="read each whole prompt (as the refine model does), not the jump budget's cut",
    )
    ap.add_argument(
        "--refiner",
        action="store_true",
        help="--model as the refine model beside Gemma, asked as an escalation (its prompt layout)",
    )
    args = ap.parse_args()
    positions = sample(args.positions, args.seed, args.files)
    free, constrained, load_s = asyncio.run(run(positions, args.model, args.whole, args.refiner))
    report(positions, free, constrained, load_s)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
