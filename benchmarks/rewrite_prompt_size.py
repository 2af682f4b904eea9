"""How often the code model writes the developer's line at a typing rest, per rewrite prompt
shape, with no timing: what the rewrite would show if it always reached the screen.

At each place (a line of real code cut at a token boundary, `quality_over_time.pick_places`)
the code model writes greedily, from a cold cache, to the end of the line, from:

- `whole`: the rewrite's whole shaped prompt (`rewrite_prompt.shaped`), as when its warm-up
  read all of it before the rest;
- `rest-cut`: what a rest reads today when the warm-up had read `--warmed` tokens of it: that
  head, then the lines nearest the cursor within `rewrite_allowance`, with a two-line suffix
  (`rest_cut`, `fit_prompt`);
- `small-P`: a prompt a warm-up could finish before the first key: P characters of code above
  the cursor and a two-line suffix.

The rates that shape the prompt are fixed (the code model on these two cores), so two runs
agree. Exact = the first line written equals the developer's rest of the line.

    PYTHONPATH=. flock -x /tmp/lsp-cpu.lock .venv/bin/python -m benchmarks.rewrite_prompt_size \\
        [--corpus stdlib] [--positions 30] [--seed 5] [--warmed 64]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from benchmarks.context_recall import corpus_loaders
from benchmarks.quality_over_time import Place, pick_places
from lsp_assist.context.templates import MARKERS
from lsp_assist.domain import PromptContext
from lsp_assist.providers.model_rates import ModelRates
from lsp_assist.providers.prompt_budget import fit_prompt
from lsp_assist.providers.rewrite_prompt import render, rest_cut, rewrite_allowance, rewrite_context, shaped

#: The code model on two cores (`lsp-assist doctor`, 2026-12-07): 6.5 tokens/s written on one
#: thread, 11.8 on two, 120 prompt tokens/s of arithmetic.
RATES = ModelRates(gen_tps=6.5, compute_tps=120.0, measured=True, rest_gen_tps=11.8)
SMALL = (250, 400)


def _context(p: Place) -> PromptContext:
    lines = p.cut_text().split("\n")
    before = "\n".join(lines[: p.row]) + "\n" + p.indent + p.typed
    after = "\n" + "\n".join(lines[p.row + 1 :])
    return PromptContext("python", p.rel, before[-6000:], after[:4000], line_prefix=p.indent + p.typed)


def _prompts(engine: object, ctx: PromptContext, warmed: int) -> dict[str, list[int]]:
    tokenize = engine.tokenize  # type: ignore[attr-defined]
    markers = MARKERS.get("qwen", ())
    whole_ctx = shaped(ctx, RATES)
    whole = tokenize(render(whole_ctx, "qwen").text, markers)
    short = tokenize(render(rest_cut(whole_ctx), "qwen").text, markers)
    enders = frozenset(int(t) for t in engine.line_enders)  # type: ignore[attr-defined]
    cut, _ = fit_prompt(short, whole[:warmed], rewrite_allowance(RATES, 64), enders)
    out = {"whole": whole, "rest-cut": cut}
    for chars in SMALL:
        small = rest_cut(rewrite_context(ctx, chars))  # the rest cut's two-line suffix
        out[f"small-{chars}"] = tokenize(render(small, "qwen").text, markers)
    return out


def _line(engine: object, tokens: list[int]) -> str:
    from lsp_assist.providers.llama_engine import Job

    engine.reset()  # type: ignore[attr-defined]
    out: list[str] = []
    engine.run(Job(tokens, 32, 0.0, lambda s: out.append(s) or True, stop=("\n",)))  # type: ignore[attr-defined]
    return "".join(out).split("\n")[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="stdlib")
    ap.add_argument("--positions", type=int, default=30)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--warmed", type=int, default=64, help="tokens the warm-up read before typing")
    args = ap.parse_args()
    from lsp_assist.providers.llama_engine import LlamaEngine
    from lsp_assist.providers.models import resolve_model

    places = pick_places(
        args.corpus, corpus_loaders([args.corpus])[args.corpus](), args.positions, random.Random(args.seed)
    )
    path = resolve_model("qwen2.5-coder-1.5b", Path(tempfile.gettempdir()) / "lsp-assist-bench")
    engine = LlamaEngine(path, n_ctx=2048, threads=2, batch_threads=2)
    exact: dict[str, int] = {}
    sizes: dict[str, list[int]] = {}
    try:
        for p in places:
            for name, tokens in _prompts(engine, _context(p), args.warmed).items():
                exact[name] = exact.get(name, 0) + (_line(engine, tokens).strip() == p.rest.strip())
                sizes.setdefault(name, []).append(len(tokens))
    finally:
        engine.close()
    print(f"{args.corpus}: {len(places)} places, seed {args.seed}, warm-up read {args.warmed} tokens")
    for name, hits in exact.items():
        s = sorted(sizes[name])
        share = f"{hits}/{len(places)} = {hits / len(places):.0%}"
        print(f"  {name:10} exact {share}, prompt p50 {s[len(s) // 2]} tokens")


if __name__ == "__main__":
    main()
