"""Latency stages, percentiles, budget overruns and the persisted report."""

from __future__ import annotations

from pathlib import Path

from lsp_assist.config.schema import BudgetConfig
from lsp_assist.telemetry.latency import StageClock
from lsp_assist.telemetry.stats import (
    StatsCollector,
    check_budget,
    format_report,
    load_records,
    percentile,
    summarize,
)


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile(values, 99) == 99.0


def test_stage_clock_laps_add_up_to_the_total() -> None:
    clock = StageClock()
    clock.lap("debounce")
    clock.lap("context")
    clock.lap("context")
    stages = clock.finish()
    assert set(stages) == {"debounce", "context", "total"}
    assert stages["debounce"] + stages["context"] <= stages["total"] + 1e-6


def test_budget_names_the_stage_that_overran() -> None:
    budget = BudgetConfig(total_ms={"fast": 100}, shares={"queue": 0.1, "ttft": 0.6})
    assert check_budget("fast", {"queue": 25.0, "ttft": 50.0, "total": 90.0}, budget) == ["queue"]
    assert check_budget("fast", {"queue": 5.0, "ttft": 70.0, "total": 120.0}, budget) == ["ttft", "total"]
    assert check_budget("other", {"total": 1e9}, budget) == []


def test_report_counts_hits_waste_and_calls_per_accept(tmp_path: Path) -> None:
    path = tmp_path / "stats.jsonl"
    s = StatsCollector(BudgetConfig(), path)
    s.record("model", "fast", {"ttft": 50.0, "total": 80.0}, model_call=True)
    s.record("cache", "fast", {"total": 1.0})
    s.record("typing_through", "fast", {"total": 0.5})
    s.record("cancelled", "fast", {"total": 3.0})
    s.record_waste(7)
    s.record_accept()
    rep = s.report()
    assert rep["model_calls"] == 1 and rep["accepted"] == 1 and rep["calls_per_accepted"] == 1.0
    assert rep["wasted_tokens"] == 7
    assert abs(rep["cache_hit_rate"] - 2 / 3) < 1e-9  # cancelled requests are not answers
    text = format_report(rep)
    assert "ttft" in text and "typing_through" in text
    s.flush()  # no running loop in this test: rows were written synchronously already
    records, accepted, wasted = load_records(path)
    assert len(records) == 4 and accepted == 1 and wasted == 7
    assert summarize(records, accepted=accepted, wasted=wasted)["requests"] == 4


def test_the_stats_row_is_the_records_asdict() -> None:
    from dataclasses import asdict

    from lsp_assist.telemetry.stats import RequestRecord, record_row

    rec = RequestRecord(1.5, "model", "fast", {"total": 3.0}, "completion", True, 2, ["ttft"])
    assert record_row(rec) == asdict(rec)
    assert record_row(rec)["stages"] is not rec.stages
