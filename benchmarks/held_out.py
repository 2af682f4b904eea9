"""Does each per-language tuned value help cursors it was not fitted on?

Issue 24: the values of `CrossFileTuning` a profile overrides were fitted on the same ten
corpora they were judged on. This harness splits each corpus's files into a tuning and a
validation half (`context_recall.half_of`: a stable hash of the file's directory and name;
every file stays context, only where the cursor is differs), and for each override runs
`context_recall`'s strata with the profile's value and with the default, on the validation
half (seeds 1 and 2) and on the tuning half (seed 1). A value earns its place when it does
not lose on the validation half; the table it prints is the one in docs/tuning.md.

    .venv/bin/python -m benchmarks.held_out [--positions 150] [--corpus npm:tree-sitter@0.21.1 ...]

The columns are `context_recall`'s: in-file recall with 3 tabs and the index (random
lines), cross-file recall from a tab and from the index only.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import time
from collections.abc import Iterator
from typing import Any

from benchmarks.context_recall import Corpus, Run, _language_of, corpus_loaders, run_corpus
from lsp_assist.languages import registry
from lsp_assist.languages.tuning import DEFAULT

#: corpus -> the profile (language) whose overrides it chose.
OVERRIDES = {
    "npm:tree-sitter@0.21.1": "c",
    "go": "go",
    "crate:librust-clap-dev=4.0.32-1": "rust",
    "npm:leveldown@6.1.1": "cpp",
}
COLUMNS = (
    ("+tabs+index", "random: engine + 3 tabs + index"),
    ("tab", "cross: (a) defining file open as a tab"),
    ("index", "cross: (b) only in the workspace index"),
)
HALVES = (("validation", 1), ("validation", 2), ("tuning", 1))


@contextlib.contextmanager
def tuned(language: str, name: str, value: Any) -> Iterator[None]:
    """The registry's profile of `language` with one tuning value replaced, then restored."""
    prof = registry.profile(language)
    assert prof is not None
    registry._BY_NAME[prof.name] = dataclasses.replace(
        prof, tuning=dataclasses.replace(prof.tuning, **{name: value})
    )
    try:
        yield
    finally:
        registry._BY_NAME[prof.name] = prof


def measure(corpus: Corpus, positions: int) -> list[dict[str, float]]:
    """The strata's recall on each half and seed of HALVES (run_corpus's own output hidden)."""
    out = []
    for split, seed in HALVES:
        with contextlib.redirect_stdout(io.StringIO()):
            out.append(run_corpus(corpus, Run(positions, 4000, seed, split)))
    return out


def cells(results: list[dict[str, float]]) -> str:
    return "  ".join(" / ".join(f"{r[key]:.1%}".rjust(6) for r in results) for _, key in COLUMNS)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=150)
    ap.add_argument("--corpus", action="append", default=None, help=f"one of {', '.join(OVERRIDES)}")
    args = ap.parse_args()
    t0 = time.perf_counter()
    head = "  ".join(f"{h + ' (val s1 / val s2 / tune s1)':>28}" for h, _ in COLUMNS)
    for name, load in corpus_loaders(args.corpus or list(OVERRIDES)).items():
        language = OVERRIDES[name]
        prof = registry.profile(language)
        assert prof is not None
        packages = load()
        corpus = Corpus(name, packages, _language_of(packages))
        print(f"\n== {name} ({language}), {args.positions} positions per stratum")
        print(f"{'value':<38} {head}")
        base = measure(corpus, args.positions)
        print(f"{'profile (every override)':<38} {cells(base)}", flush=True)
        for f in dataclasses.fields(prof.tuning):
            ours, default = getattr(prof.tuning, f.name), getattr(DEFAULT, f.name)
            if ours == default:
                continue
            with tuned(language, f.name, default):
                without = measure(corpus, args.positions)
            label = f"{f.name} {ours} -> default {default}"
            print(f"{label:<38} {cells(without)}", flush=True)
    print(f"\ntotal run {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
