"""The benchmarks' shared helpers: one percentile, used by every benchmark."""

from __future__ import annotations

import math
import re
from pathlib import Path

from benchmarks.common import ROOT, percentile

BENCHMARKS = ROOT / "benchmarks"


def test_percentile_takes_the_rank_latency_py_always_took() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # unsorted on purpose
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 96.0  # rank round(95.5) = 96: a half rounds to even
    assert percentile(values, 90) == 90.0
    assert percentile(values, 100) == 100.0
    assert percentile(values, 0) == 1.0
    assert percentile([7.0], 95) == 7.0
    assert math.isnan(percentile([], 50))


def test_no_benchmark_defines_its_own_percentile() -> None:
    own = re.compile(r"^\s*def (pct|_pct|_p|percentile|quantile)\(|sorted\([^)]*\)\[int\(", re.M)
    found = [
        p.name
        for p in sorted(Path(BENCHMARKS).glob("*.py"))
        if p.name != "common.py" and own.search(p.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_no_benchmark_edits_sys_path() -> None:
    found = [
        p.name
        for p in sorted(Path(BENCHMARKS).glob("*.py"))
        if "sys.path.insert(0, str(" in p.read_text(encoding="utf-8").replace("{str(root)!r}", "")
    ]
    assert found == []
