"""What cross-file context does for a real model: the embedded model writes the deleted line.

`context_recall.py` scores the prompt (are the line's identifiers in what is sent?). This
scores the suggestion. The same seeded positions (the random and cross-file strata of
`context_recall.py`, one deleted line each, the cursor after its indentation) go through
the real pipeline (`build_runtime`, the context engine, the prompt template, the in-process
llama.cpp model, streaming post-processing), once with only the current file open and once
with other files of the package open as tabs: the defining file plus two siblings on the
cross-file stratum, three random siblings on the random one (as in `context_recall.py`).

Reported per condition: exact match of the suggestion's first line with the deleted line
(whitespace-trimmed); the share of the line's scored identifiers that the suggestion writes
(on the cross-file stratum: the names defined only in another file); empty suggestions; the
model call's median latency. Two prompt shapes: the embedded model's default (the stable
layout at its 1,500 characters) and the remote fast tier's (the trimmed layout at 4,000).
Quality only: timeouts are patient and the figures are not latency claims (2 shared cores).

    .venv/bin/python -m benchmarks.context_model [--positions 60] [--corpus stdlib]
        [--shape embedded --shape fast] [--model gemma3-270m] [--seed 1]
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import arg_parser
from benchmarks.context_recall import (
    DEFAULT_CORPORA,
    Corpus,
    Position,
    Unavailable,
    _language_of,
    _tabs,
    blank,
    corpus_loaders,
    pick_positions,
)
from benchmarks.humaneval_local import final_first_line, quality_config
from lsp_assist.context.crossfile import identifiers
from lsp_assist.documents.store import Document

#: Prompt shapes: (layout, context characters).
SHAPES = {"embedded": ("auto", 1500), "fast": ("trimmed", 4000)}


@dataclass
class Tally:
    exact: int = 0
    written: list[float] = field(default_factory=list)
    empty: int = 0
    ms: list[float] = field(default_factory=list)

    def add(self, got: str, deleted: str, wanted: set[str], ms: float) -> None:
        self.exact += int(got.strip() == deleted.strip())
        self.written.append(len(wanted & identifiers(got)) / len(wanted))
        self.empty += int(not got.strip())
        self.ms.append(ms)


def runtime_config(model: str, layout: str, chars: int) -> dict[str, Any]:
    return quality_config(model, context_chars=chars, prompt_layout=layout)


async def run_shape(
    corpus: Corpus, positions: list[tuple[str, Position]], model: str, shape: str, seed: int, tmp: Path
) -> dict[str, Tally]:
    """Both conditions at one prompt shape; each in its own runtime, so no answer of one
    (the typing-through memory, a live stream) can serve the other."""
    from lsp_assist.cli.session import complete_text
    from lsp_assist.server import build_runtime

    layout, chars = SHAPES[shape]
    rng = random.Random(seed)  # the same tabs for every shape
    tabs_at: list[list[str]] = []
    for _, pos in positions:
        siblings = [p for p in corpus.packages[pos.pkg] if p != pos.path]
        docs = [Document("file://" + p, corpus.language, 1, corpus.packages[pos.pkg][p], p) for p in siblings]
        tabs_at.append([d.path for d in _tabs(docs, pos.defining, rng, 3)])
    tallies: dict[str, Tally] = {}
    for cond in ("current file only", "with tabs"):
        os.environ["LSP_ASSIST_CACHE_DIR"] = str(tmp / f"cache-{shape}-{len(tallies)}")
        rt = build_runtime([], runtime_config(model, layout, chars))
        await rt.warm()
        try:
            for version, ((stratum, pos), tabs) in enumerate(zip(positions, tabs_at, strict=True), 1):
                source = corpus.packages[pos.pkg][pos.path]
                text, cursor, _, _ = blank(source, pos.row)
                opened = []
                for p in tabs if cond == "with tabs" else []:
                    opened.append("file://" + p)
                    rt.store.open(opened[-1], corpus.language, 1, corpus.packages[pos.pkg][p], p)
                t0 = time.perf_counter()

                args = (Path(pos.path), text, cursor.line, cursor.character)
                res = await complete_text(rt, *args, version=version)
                got = await final_first_line(rt, res, *args, version)
                ms = (time.perf_counter() - t0) * 1000
                deleted = source.split("\n")[pos.row]
                tallies.setdefault(f"{stratum}: {cond}", Tally()).add(got, deleted, pos.wanted, ms)
                for uri in [*opened, "file://" + pos.path]:
                    rt.store.close(uri)
        finally:
            await rt.aclose()
    return dict(sorted(tallies.items(), key=lambda kv: kv[0].startswith("cross")))


async def main() -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("--positions", type=int, default=60, help="per stratum")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--corpus", action="append", default=None, help=f"as context_recall.py ({DEFAULT_CORPORA[0]})"
    )
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), default=None)
    ap.add_argument("--model", default="gemma3-270m")
    args = ap.parse_args()
    for name, load in corpus_loaders(args.corpus or ["stdlib"]).items():
        try:
            packages = load()
        except Unavailable as exc:
            print(f"== corpus {name}: skipped, {exc}")
            continue
        corpus = Corpus(name, packages, _language_of(packages))
        randoms, crosses = pick_positions(corpus, args.positions, random.Random(args.seed))
        positions = [("random", p) for p in randoms] + [("cross", p) for p in crosses]
        print(
            f"\n== corpus {name} ({corpus.language}): {len(randoms)} random + {len(crosses)} cross-file "
            f"positions, seed {args.seed}, model {args.model}"
        )
        print(
            f"{'shape':<10} {'condition':<28} {'exact':>7} {'names written':>14} {'empty':>7} {'p50 ms':>8}"
        )
        for shape in args.shape or ["embedded", "fast"]:
            with tempfile.TemporaryDirectory() as td:
                got = await run_shape(corpus, positions, args.model, shape, args.seed, Path(td))
            for cond, t in got.items():
                n = len(t.written)
                print(
                    f"{shape:<10} {cond:<28} {t.exact / n:>7.1%} {statistics.mean(t.written):>14.1%} "
                    f"{t.empty / n:>7.1%} {statistics.median(t.ms):>8.0f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
