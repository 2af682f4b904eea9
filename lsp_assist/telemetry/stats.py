"""Latency statistics: percentiles per stage and outcome, waste, hit rate, budget overruns.

The server keeps a bounded in-memory window for `lspAssist.stats` (the last `window`
requests, within `WINDOW_BYTES`) and appends one JSON line per request to `stats.jsonl`
under the cache dir (metadata only, never code) so `lsp-assist stats` can report across
sessions.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_assist.config.schema import BudgetConfig
from lsp_assist.telemetry.latency import STAGES

log = logging.getLogger(__name__)

STATS_FILE = "stats.jsonl"
_MAX_FILE_BYTES = 8 * 1024 * 1024
WINDOW_BYTES = 4 << 20  # the in-memory window: ~5,000 records of ~10 stages each


@dataclass
class RequestRecord:
    time: float
    outcome: str
    tier: str
    stages: dict[str, float]
    feature: str = "completion"
    model_call: bool = False  # a model stream was started for this request
    wasted_tokens: int = 0  # tokens streamed after the result was no longer wanted
    over_budget: list[str] = field(default_factory=list)


def _record_bytes(rec: RequestRecord) -> int:
    # The record and its attribute dict, the stages (a dict of floats) and the overrun list.
    return (
        sys.getsizeof(rec)
        + sys.getsizeof(rec.__dict__)
        + sys.getsizeof(rec.stages)
        + 24 * len(rec.stages)
        + sys.getsizeof(rec.over_budget)
    )


def record_row(rec: RequestRecord) -> dict[str, Any]:
    """`asdict(rec)` for this flat record, without its recursive deep copy (which cost the
    request path ~0.1 ms before every answer)."""
    return {
        "time": rec.time,
        "outcome": rec.outcome,
        "tier": rec.tier,
        "stages": dict(rec.stages),
        "feature": rec.feature,
        "model_call": rec.model_call,
        "wasted_tokens": rec.wasted_tokens,
        "over_budget": list(rec.over_budget),
    }


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of an unsorted list; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def check_budget(tier: str, stages: Mapping[str, float], budget: BudgetConfig) -> list[str]:
    """Names of the stages that overran their share of the tier's total (and "total")."""
    total = budget.total_ms.get(tier)
    if not total:
        return []
    over = [name for name, share in budget.shares.items() if stages.get(name, 0.0) > share * total]
    if stages.get("total", 0.0) > total:
        over.append("total")
    return over


class StatsCollector:
    def __init__(
        self,
        budget: BudgetConfig,
        path: Path | None = None,
        window: int = 5000,
        max_bytes: int = WINDOW_BYTES,
    ) -> None:
        self.budget = budget
        self.path = path
        self.records: deque[RequestRecord] = deque()
        self._sizes: deque[int] = deque()  # the estimated bytes of each record, in step
        self.window = window
        self.max_bytes = max_bytes
        self.nbytes = 0
        self.accepted = 0
        self.model_calls = 0
        self.wasted_tokens = 0
        self._buffer: list[dict[str, Any]] = []
        self._flush_scheduled = False
        # Called with every request record (OpenTelemetry export); must not block.
        self.observers: list[Callable[[RequestRecord], None]] = []

    def record(
        self,
        outcome: str,
        tier: str,
        stages: Mapping[str, float],
        *,
        feature: str = "completion",
        model_call: bool = False,
    ) -> RequestRecord:
        rec = RequestRecord(
            time=time.time(),
            outcome=outcome,
            tier=tier,
            stages={k: round(v, 3) for k, v in stages.items()},
            feature=feature,
            model_call=model_call,
            over_budget=check_budget(tier, stages, self.budget) if outcome == "model" else [],
        )
        self._keep(rec)
        if model_call:
            self.model_calls += 1
        self._append(record_row(rec))
        for observe in self.observers:
            try:
                observe(rec)
            except Exception as exc:  # telemetry must never break the request path
                log.debug("stats observer failed: %s", exc)
        return rec

    def _keep(self, rec: RequestRecord) -> None:
        size = _record_bytes(rec)
        self.records.append(rec)
        self._sizes.append(size)
        self.nbytes += size
        while len(self.records) > self.window or (self.nbytes > self.max_bytes and len(self.records) > 1):
            self.records.popleft()
            self.nbytes -= self._sizes.popleft()

    def record_waste(self, tokens: int) -> None:
        self.wasted_tokens += tokens
        self._append({"time": time.time(), "wasted_tokens": tokens})

    def record_accept(self) -> None:
        self.accepted += 1
        self._append({"time": time.time(), "accepted": 1})

    def _append(self, row: dict[str, Any]) -> None:
        """Buffer a row; the file is written at most every second, off the answer's path."""
        if self.path is None:
            return
        self._buffer.append(row)
        if self._flush_scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._flush_scheduled = True
        loop.call_later(1.0, self.flush)

    def flush(self) -> None:
        self._flush_scheduled = False
        rows, self._buffer = self._buffer, []
        if not rows or self.path is None:
            return
        try:
            if self.path.exists() and self.path.stat().st_size > _MAX_FILE_BYTES:
                os.replace(self.path, self.path.with_suffix(".jsonl.1"))
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode())
            finally:
                os.close(fd)
        except OSError as exc:  # stats must never break a request
            log.debug("stats: cannot append to %s: %s", self.path, exc)

    def report(self) -> dict[str, Any]:
        return summarize(self.records, accepted=self.accepted, wasted=self.wasted_tokens)

    def format(self) -> str:
        return format_report(self.report())


def summarize(records: Iterable[RequestRecord], *, accepted: int, wasted: int) -> dict[str, Any]:
    recs = list(records)
    by_stage: dict[str, list[float]] = {s: [] for s in STAGES}
    by_outcome: dict[str, list[float]] = {}
    overruns: Counter[str] = Counter()
    model_calls = 0
    for r in recs:
        for stage, ms in r.stages.items():
            by_stage.setdefault(stage, []).append(ms)
        by_outcome.setdefault(r.outcome, []).append(r.stages.get("total", 0.0))
        overruns.update(r.over_budget)
        model_calls += int(r.model_call)
    answered = [r for r in recs if r.outcome not in ("cancelled", "stale")]
    hits = sum(1 for r in answered if r.outcome in ("cache", "typing_through", "attached"))

    def pct(values: list[float]) -> dict[str, float]:
        return {
            "n": len(values),
            "p50": percentile(values, 50),
            "p95": percentile(values, 95),
            "p99": percentile(values, 99),
        }

    return {
        "requests": len(recs),
        "stages": {k: pct(v) for k, v in by_stage.items() if v},
        "outcomes": {k: pct(v) for k, v in sorted(by_outcome.items())},
        "model_calls": model_calls,
        "accepted": accepted,
        "calls_per_accepted": (model_calls / accepted) if accepted else None,
        "wasted_tokens": wasted,
        "cache_hit_rate": (hits / len(answered)) if answered else None,
        "budget_overruns": dict(overruns),
    }


def load_records(path: Path) -> tuple[list[RequestRecord], int, int]:
    """Read stats.jsonl (and its rotated backup): records, accepted count, wasted tokens."""
    records: list[RequestRecord] = []
    accepted = wasted = 0
    for p in (path.with_suffix(".jsonl.1"), path):
        try:
            lines = p.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if "outcome" in row:
                known = {k: row[k] for k in RequestRecord.__dataclass_fields__ if k in row}
                try:
                    records.append(RequestRecord(**known))
                except TypeError:
                    continue
            accepted += int(row.get("accepted", 0))
            wasted += int(row.get("wasted_tokens", 0))
    return records, accepted, wasted


def _fmt(v: float) -> str:
    return "-" if isinstance(v, float) and math.isnan(v) else f"{v:8.1f}"


def format_report(rep: Mapping[str, Any]) -> str:
    lines = [f"requests: {rep['requests']}   model calls: {rep['model_calls']}   accepted: {rep['accepted']}"]
    cpa = rep.get("calls_per_accepted")
    hit = rep.get("cache_hit_rate")
    lines.append(
        f"calls per accepted suggestion: {cpa:.2f}" if cpa is not None else "calls per accepted suggestion: -"
    )
    lines.append(f"cache/typing-through/attach hit rate: {hit:.1%}" if hit is not None else "hit rate: -")
    lines.append(f"tokens streamed after cancellation (wasted): {rep['wasted_tokens']}")
    lines.append("")
    lines.append(f"{'stage (ms)':<16}{'n':>6}{'p50':>9}{'p95':>9}{'p99':>9}")
    for name, p in rep["stages"].items():
        lines.append(f"{name:<16}{p['n']:>6}{_fmt(p['p50'])}{_fmt(p['p95'])}{_fmt(p['p99'])}")
    lines.append("")
    lines.append(f"{'outcome (total ms)':<20}{'n':>6}{'p50':>9}{'p95':>9}{'p99':>9}")
    for name, p in rep["outcomes"].items():
        lines.append(f"{name:<20}{p['n']:>6}{_fmt(p['p50'])}{_fmt(p['p95'])}{_fmt(p['p99'])}")
    over = rep.get("budget_overruns") or {}
    lines.append("")
    if over:
        lines.append("budget overruns (model answers): " + ", ".join(f"{k} x{v}" for k, v in over.items()))
    else:
        lines.append("budget overruns: none")
    return "\n".join(lines)
