"""Suffix-aware reranking of the embedded model's line on HumanEval (issue 26, experiment).

Gemma 3 270M has no fill-in-the-middle tokens, so the code after the hole never reaches
its prompt. InCoder's "left-to-right reranking" (Fried et al. 2022) uses the suffix anyway:
generate K candidate lines from the left-to-right prompt, then score each by the model's
log-probability of the suffix's first lines given prompt + candidate (optionally plus the
candidate's own log-probability) and keep the best.

The prompt is the one the product sends: each task first runs through the real pipeline
exactly as in `humaneval_local.py` (same tasks, same config; its final line is the
"pipeline" column), and the `ModelRequest` the embedded provider got last for the task
(the whole-prompt refinement where there was one) is captured; its prompt is rendered with
the provider's own template (`render_completion`), and its member constraint is rebuilt
from the same context (`LocalProvider._constraint`). Then, on the same loaded engine:

- the whole prompt is read once (prefix kept in the KV cache); the K best first tokens
  (line enders masked, member constraint applied) are each continued greedily to the end
  of the line: candidate 1 is the greedy line;
- each candidate is scored by one batched decode of `candidate + "\\n" + suffix lines`
  after the cached prompt: log p(candidate) and log p(first 1/2/3 non-blank suffix lines);
- exact and pass@1 are computed for every candidate, so any scoring rule is tallied offline
  (`--report`): choose a rule on seed 7, check it on seed 2.

Each task's record goes to a JSONL file; `--start/--stop` run a slice (short locked runs).

    flock -x /tmp/lsp-cpu.lock .venv/bin/python -m benchmarks.humaneval_rerank \\
        --seed 7 --n 80 --start 0 --stop 40 --out /tmp/rerank-s7.jsonl
    .venv/bin/python -m benchmarks.humaneval_rerank --report /tmp/rerank-s7.jsonl [--rule ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import arg_parser
from benchmarks.humaneval_local import (
    DATA,
    _members_ready,
    final_first_line,
    load_tasks,
    passes,
    quality_config,
)

K_MAX = 8
ORACLE_K = (1, 3, 5, 8)
SUFFIX_LINES = (1, 2, 3)
MAX_LINE_TOKENS = 48
WEIGHTS = (0.5, 1.0, 2.0)  # the suffix's weight against the candidate's own log-prob


def suffix_head(suffix: str, n: int) -> str:
    """The suffix up to and including its n-th non-blank line ("" when it has none)."""
    out: list[str] = []
    seen = 0
    for line in suffix.split("\n"):
        out.append(line)
        if line.strip():
            seen += 1
            if seen == n:
                break
    return "\n".join(out) if seen else ""


def log_softmax_at(logits: np.ndarray[Any, Any], token: int) -> float:
    m = float(logits.max())  # float32 throughout: 262k entries per position, ~0.3 ms
    return float(logits[token] - m - np.log(np.exp(logits - m).sum(dtype=np.float64)))


class Reranker:
    """Candidates and scores on the provider's loaded `LlamaEngine` (its worker thread)."""

    def __init__(self, engine: Any, branch: int = 0) -> None:
        self.e = engine
        self.branch = branch
        self.newline_ids = np.array(engine.line_enders, dtype=np.int64)

    def _line(
        self, base: int, head: list[int], first: int, constraint_factory: Any
    ) -> tuple[list[int], str, list[tuple[float, int]]]:
        """`head` (tokens of the line already chosen) + `first`, continued greedily to the end
        of the line. Returns the line's tokens, its text, and per step (the step of token j
        chose it) the gap between the two best logits and the runner-up token."""
        e = self.e
        e._truncate(base)
        c = constraint_factory()
        if head:
            e._decode(head, logits_from=len(head) - 1)
        if c is not None:
            for h in head:
                c.accept(h)
        out = bytearray(b"".join(e._piece(h) for h in head))
        toks = list(head)
        gaps: list[tuple[float, int]] = [(0.0, -1)] * (len(head) + 1)
        tok = first
        while True:
            piece = e._piece(tok)
            if e.is_eog(tok) or b"\n" in piece:
                out += piece.split(b"\n", 1)[0] if not e.is_eog(tok) else b""
                break
            out += piece
            toks.append(tok)
            if c is not None:
                c.accept(tok)
            if len(toks) >= MAX_LINE_TOKENS:
                break
            e._decode([tok], logits_from=0)
            logits = e._logits(0)
            if c is not None:
                logits = c.restrict(logits)
            top2 = np.argpartition(logits, -2)[-2:]
            best, second = (
                (int(top2[1]), int(top2[0]))
                if logits[top2[1]] >= logits[top2[0]]
                else (
                    int(top2[0]),
                    int(top2[1]),
                )
            )
            gap = float(logits[best] - logits[second])
            gaps.append((gap if np.isfinite(gap) else float("inf"), second))
            tok = best
        return toks, out.decode("utf-8", "replace").rstrip(), gaps

    def tok(self, text: str) -> list[int]:
        return list(self.e.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def run(self, prompt: str, constraint_factory: Any, suffix: str) -> dict[str, Any]:
        e = self.e
        t0 = time.perf_counter()
        tokens = e.tokenize(prompt)
        room = e.n_ctx - MAX_LINE_TOKENS - 200
        if len(tokens) > room:  # keep the BOS and the end nearest the cursor, as `run` does
            tokens = tokens[:1] + tokens[len(tokens) - room + 1 :]
        import threading

        e.prefill(tokens, threading.Event())
        e._decode(tokens[-1:], logits_from=0)
        base = len(e._tokens)
        first = e._logits(0).copy()
        t_prompt = time.perf_counter()
        c0 = constraint_factory()
        masked = c0.restrict(first) if c0 is not None else first
        masked = masked.copy()
        masked[self.newline_ids] = -np.inf  # a hole line is never empty
        order = np.argsort(-masked)[:K_MAX]
        cands: list[dict[str, Any]] = []
        gen_tokens = 0
        greedy: tuple[list[int], list[tuple[float, int]]] | None = None
        for rank, t in enumerate(order.tolist()):
            if not np.isfinite(masked[t]):
                break
            toks, text, gaps = self._line(base, [], int(t), constraint_factory)
            gen_tokens += len(toks)
            cands.append({"rank": rank, "text": text})
            if rank == 0:
                greedy = (toks, gaps)
        # Branches (--branch M): at the M steps of the greedy line where the model was least
        # sure (smallest gap between its two best tokens), take the runner-up and go on greedily.
        if greedy is not None and self.branch > 0:
            toks, gaps = greedy
            steps = sorted(range(1, len(gaps)), key=lambda j: gaps[j][0])[: self.branch]
            for b, j in enumerate(steps):
                more, text, _ = self._line(base, toks[:j], gaps[j][1], constraint_factory)
                gen_tokens += len(more) - j
                cands.append({"rank": K_MAX + b, "branch": j, "text": text})
        t_gen = time.perf_counter()
        # Score: one batched decode of candidate + "\n" + the suffix's first lines.
        heads = [suffix_head(suffix, k) for k in SUFFIX_LINES]
        longest = heads[-1]
        score_tokens = 0
        for cand in cands:
            ctext = cand["text"]
            seq = self.tok(ctext + "\n" + longest)
            seq = seq[: max(1, min(len(seq), e.n_ctx - base - 8, 500))]
            e._truncate(base)
            e._decode(seq, logits_from=0)
            score_tokens += len(seq)
            # char end of each token, to split candidate / suffix lines
            ends: list[int] = []
            acc = 0
            for s in seq:
                acc += len(e._piece(s))
                ends.append(acc)
            lps = [log_softmax_at(first, seq[0])]
            for i in range(1, len(seq)):
                lps.append(log_softmax_at(e._logits(i - 1), seq[i]))
            cbytes = len(ctext.encode("utf-8"))
            cand_lp = sum(lp for lp, end in zip(lps, ends, strict=True) if end <= cbytes)
            cand["cand_lp"] = cand_lp
            cand["cand_n"] = sum(1 for end in ends if end <= cbytes)
            cand["suf_lp"] = []
            for head in heads:
                limit = cbytes + 1 + len(head.encode("utf-8")) if head else cbytes
                cand["suf_lp"].append(
                    sum(lp for lp, end in zip(lps, ends, strict=True) if cbytes < end <= limit)
                    if head
                    else 0.0
                )
        t_score = time.perf_counter()
        return {
            "cands": cands,
            "prompt_tokens": len(tokens),
            "prompt_ms": (t_prompt - t0) * 1000,
            "gen_ms": (t_gen - t_prompt) * 1000,
            "score_ms": (t_score - t_gen) * 1000,
            "gen_tokens": gen_tokens,
            "score_tokens": score_tokens,
        }


def append_record(path: str, rec: dict[str, Any]) -> None:
    """One task's record, written at once (a slice that stops keeps what it did)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")


async def collect(args: argparse.Namespace) -> None:
    from lsp_assist.cli.session import complete_text
    from lsp_assist.providers import local as local_mod
    from lsp_assist.server import build_runtime

    tasks = load_tasks(args.n, args.seed)
    captured: list[Any] = []
    original = local_mod.LocalProvider.stream

    def stream(self: Any, request: Any) -> Any:
        captured.append(request)
        return original(self, request)

    local_mod.LocalProvider.stream = stream  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as td:
        cache_dir = Path(td)
        os.environ["LSP_ASSIST_CACHE_DIR"] = str(cache_dir / "gemma3-270m-inprocess")
        rt = build_runtime([], quality_config(args.model, "inprocess", members=True))
        await rt.warm()
        await _members_ready(rt, True)
        provider = next(p for p in rt.local_models() if isinstance(p, local_mod.LocalProvider))
        rr = Reranker(provider._engine, args.branch)
        loop = asyncio.get_running_loop()
        try:
            for i in range(args.start, min(args.stop, len(tasks))):
                task = tasks[i]
                hole = task["canonical_solution"].rstrip("\n")
                indent = hole[: len(hole) - len(hole.lstrip())]
                text = task["prompt"] + indent + "\n" + task["suffix"]
                line_no = task["prompt"].count("\n")
                path = cache_dir / f"task_{i}.py"
                captured.clear()
                res = await complete_text(rt, path, text, line_no, len(indent), version=i + 1)
                got = await final_first_line(rt, res, path, text, line_no, len(indent), i + 1)
                request = captured[-1]
                rendered = local_mod.render_completion(
                    request.context,
                    local_mod.resolve_template(request.fim_template, provider._path_name, provider._template),
                    "",
                )
                provider._stop_background()
                out = await loop.run_in_executor(
                    provider._executor,
                    rr.run,
                    rendered.prompt,
                    lambda req=request: provider._constraint(req),
                    task["suffix"],
                )
                verdict: dict[str, bool] = {}
                for cand in out["cands"]:
                    line = cand["text"].strip()
                    cand["exact"] = line == hole.strip()
                    if line not in verdict:
                        verdict[line] = bool(line) and passes(task, line, indent)
                    cand["pass"] = verdict[line]
                rec = {
                    "seed": args.seed,
                    "i": i,
                    "task_id": task["task_id"],
                    "hole": hole.strip(),
                    "pipeline": got.strip(),
                    "pipeline_exact": got.strip() == hole.strip(),
                    "pipeline_pass": bool(got) and passes(task, got, indent),
                    "refine": bool(getattr(request, "refine", False)),
                    "suffix_lines": [bool(suffix_head(task["suffix"], k)) for k in SUFFIX_LINES],
                    **out,
                }
                append_record(args.out, rec)
                best = out["cands"][0]["text"].strip() if out["cands"] else ""
                print(
                    f"{i:3d} pipe={int(rec['pipeline_exact'])} greedy={int(best == hole.strip())} "
                    f"oracle8={int(any(c['exact'] for c in out['cands']))} "
                    f"gen {out['gen_ms']:.0f} ms score {out['score_ms']:.0f} ms",
                    flush=True,
                )
        finally:
            local_mod.LocalProvider.stream = original  # type: ignore[method-assign]
            await rt.aclose()


RULES = {
    "greedy": lambda c: -c["rank"],
    **{f"suf{k}": (lambda c, k=k: c["suf_lp"][k - 1]) for k in SUFFIX_LINES},
    **{
        f"cand+{a:g}suf{k}": (lambda c, k=k, a=a: c["cand_lp"] + a * c["suf_lp"][k - 1])
        for k in SUFFIX_LINES
        for a in WEIGHTS
    },
}


def is_code(text: str) -> bool:
    """Not a comment, a docstring quote or a new `def`: never the hole line in HumanEval's
    function bodies, and ~1 in 6 of the greedy misses (docs/embedded-latency.md)."""
    t = text.strip()
    return bool(t) and not t.startswith(("#", '"""', "'''", "def "))


# Candidate sets: the K best first tokens, or first tokens plus branches of the greedy line.
SETS: dict[str, Any] = {
    **{f"K={k}": (lambda c, k=k: c["rank"] < k) for k in ORACLE_K},
    "4+4br": lambda c: c["rank"] < 4 or K_MAX <= c["rank"] < K_MAX + 4,
    "8+all br": lambda c: True,
}


def pick(rec: dict[str, Any], rule: str, cset: str, code_only: bool = False) -> dict[str, Any] | None:
    cands = [c for c in rec["cands"] if SETS[cset](c)]
    if code_only:  # keep the others only when no candidate is code
        cands = [c for c in cands if is_code(c["text"])] or cands
    if not cands:
        return None
    return max(cands, key=lambda c: (RULES[rule](c), -c["rank"]))


def report(paths: list[str]) -> None:
    recs: list[dict[str, Any]] = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            recs += [json.loads(line) for line in fh if line.strip()]
    recs.sort(key=lambda r: (r["seed"], r["i"]))
    n = len(recs)
    seeds = sorted({r["seed"] for r in recs})
    print(f"HumanEval single-line infilling, {n} tasks (seeds {seeds}), embedded gemma3-270m")
    pe = sum(r["pipeline_exact"] for r in recs) / n
    pp = sum(r["pipeline_pass"] for r in recs) / n
    print(f"pipeline (humaneval_local's final line, same run): exact {pe:.1%}  pass@1 {pp:.1%}")
    agree = sum((r["cands"][0]["text"].strip() == r["pipeline"]) for r in recs if r["cands"]) / n
    print(f"candidate 1 (greedy) equals the pipeline's line: {agree:.1%}")
    branched = any("branch" in c for r in recs for c in r["cands"])
    sets = [name for name in SETS if branched or "br" not in name]
    print("oracle (any candidate of the set exact / passes):")
    for cset in sets:
        oe = sum(any(c["exact"] for c in r["cands"] if SETS[cset](c)) for r in recs) / n
        op = sum(any(c["pass"] for c in r["cands"] if SETS[cset](c)) for r in recs) / n
        print(f"  {cset}: exact {oe:.1%}  pass {op:.1%}")
    shown = [s for s in sets if s != "K=1"]
    print(f"{'rule':<17}" + "".join(f"{s + ' exact/pass':>20}" for s in shown))
    for code_only in (False, True):
        for rule in RULES:
            cells = []
            for cset in shown:
                chosen = [pick(r, rule, cset, code_only) for r in recs]
                e = sum(bool(c and c["exact"]) for c in chosen) / n
                p = sum(bool(c and c["pass"]) for c in chosen) / n
                cells.append(f"{e:>9.1%} / {p:<7.1%}")
            print(f"{rule + ('/code' if code_only else ''):<17}" + "".join(f"{c:>20}" for c in cells))
    med = lambda xs: float(np.median(xs))  # noqa: E731
    print(
        "cost per task, median: prompt read {:.0f} ms ({} tokens); all candidates {:.0f} ms ({} tokens, "
        "greedy line alone {} tokens); scoring {:.0f} ms ({} tokens)".format(
            med([r["prompt_ms"] for r in recs]),
            int(med([r["prompt_tokens"] for r in recs])),
            med([r["gen_ms"] for r in recs]),
            int(med([r["gen_tokens"] for r in recs])),
            int(med([r["cands"][0]["cand_n"] for r in recs if r["cands"]])),
            med([r["score_ms"] for r in recs]),
            int(med([r["score_tokens"] for r in recs])),
        )
    )


async def main() -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("--n", type=int, default=80)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--stop", type=int, default=80)
    ap.add_argument("--model", default="gemma3-270m")
    ap.add_argument(
        "--branch", type=int, default=0, help="also branch the greedy line at its M least sure steps"
    )
    ap.add_argument("--out", default="/tmp/humaneval-rerank.jsonl")
    ap.add_argument("--report", nargs="*", help="tally JSONL files instead of running")
    args = ap.parse_args()
    if args.report is not None:
        report(args.report or [args.out])
        return 0
    if not DATA.exists():
        print(f"data not found: {DATA}")
        return 1
    await collect(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
