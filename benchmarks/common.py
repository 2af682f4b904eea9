"""What the benchmarks share: the checkout's root, percentiles, the argument parser, and the
loopback fake model (`tests/fakes/`).

Run a benchmark as a module from the repository root, so `lsp_assist`, `benchmarks` and
`tests` all import from this checkout without path edits:

    .venv/bin/python -m benchmarks.latency --n 20
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

from tests.fakes.fake_model_server import FakeModelServer, Script, prompt_of, split_tokens
from tests.fakes.process import FakeModelProcess

ROOT = Path(__file__).resolve().parents[1]

__all__ = [
    "ROOT",
    "FakeModelProcess",
    "FakeModelServer",
    "Script",
    "arg_parser",
    "percentile",
    "prompt_of",
    "split_tokens",
]


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`th percentile (0-100) of `values`: the value at rank round(q * n / 100 + 0.5),
    clamped to 1..n; NaN when there are none. That is the nearest rank, except that a half
    rounds to even (p95 of 100 values is the 96th): the rule `benchmarks/latency.py` has
    always used, kept so today's figures compare with the recorded ones."""
    if not values:
        return math.nan
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


def arg_parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser whose help is the benchmark's docstring, as written."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
