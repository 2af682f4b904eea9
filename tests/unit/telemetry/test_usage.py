"""The usage report from a synthetic audit log: text, HTML, --since, rotated files, CLI."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

import pytest

from lsp_assist.cli import usage_cmd
from lsp_assist.governance.settings import Price, parse_settings
from lsp_assist.telemetry.usage import (
    build_report,
    parse_since,
    percentile,
    read_records,
    render_text,
)
from lsp_assist.telemetry.usage_html import render_html

NOW = dt.datetime(2025, 3, 10, 12, 0, tzinfo=dt.timezone.utc)


def synth(path: Path) -> None:
    lines = []
    for i in range(100):
        day = NOW - dt.timedelta(days=i % 3, minutes=i)
        feature = "completion" if i % 4 else "escalation"
        lines.append(
            {
                "ts": day.isoformat(),
                "feature": feature,
                "tier": "fast" if feature == "completion" else "quality",
                "model": "small" if feature == "completion" else "big",
                "prompt_tokens": 1000,
                "completion_tokens": 100,
                "outcome": "error" if i % 10 == 0 else "model",
                "error_class": "Unavailable" if i % 10 == 0 else None,
                "fallback_from": "fast" if i % 20 == 1 else None,
                "stages_ms": {"ttft": float(i), "total": float(2 * i)},
            }
        )
    rotated = path.with_name(path.name + ".1")
    path.write_text("\n".join(json.dumps(r) for r in lines[50:]) + "\nnot json\n")
    rotated.write_text("\n".join(json.dumps(r) for r in lines[:50]) + "\n")


def test_report_numbers(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    synth(path)
    records, bad = read_records([path])
    assert len(records) == 100 and bad == 1
    prices = {"small": Price(0.001, 0.002), "big": Price(0.01, 0.03)}
    rep = build_report(records, prices, malformed=bad)
    assert rep.overall.requests == 100
    assert rep.overall.errors == 10
    assert rep.by["feature"]["escalation"].requests == 25
    # small: 75 * (1.0 * 0.001 + 0.1 * 0.002); big: 25 * (0.01 + 0.003)
    assert rep.overall.cost == pytest.approx(75 * 0.0012 + 25 * 0.013)
    assert rep.by["model"]["big"].cost == pytest.approx(25 * 0.013)
    assert rep.overall.fallbacks == 5
    assert percentile(rep.overall.ttft, 50) == 49.0
    assert percentile(rep.overall.total, 99) == 196.0
    assert len(rep.cost_by_day) == 3
    text = render_text(rep)
    assert "by feature" in text and "escalation" in text and "1 malformed" in text


def test_since_filter(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    synth(path)
    since = parse_since("2025-03-10T00:00:00+00:00")
    records, _ = read_records([path], since)
    assert 0 < len(records) < 100
    assert parse_since("24h", NOW) == NOW - dt.timedelta(hours=24)
    assert parse_since("7d", NOW) == NOW - dt.timedelta(days=7)
    with pytest.raises(ValueError):
        parse_since("yesterday")


def test_html_is_self_contained(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    synth(path)
    records, _ = read_records([path])
    page = render_html(build_report(records, {"small": Price(0.001, 0.002)}))
    assert page.count("<svg") == 3  # time to first token, end-to-end, cost per day
    assert "<script" not in page and "<link" not in page and "<img" not in page
    assert "http" not in page.replace("http://www.w3.org", "")
    assert 'aria-label="Time to first token"' in page and "Estimated cost per feature per day" in page
    assert page.count("<table") == 4  # model calls by feature/tier/model/language
    # No editor events in this log: one sentence saying why instead of charts and tables.
    assert page.count("no editor reported suggestion events") == 1


def test_html_says_why_a_chart_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    synth(path)
    records, _ = read_records([path])
    page = render_html(build_report(records, {}))  # no prices
    assert "No cost chart: no model called in this period has a price" in page
    empty = render_html(build_report([], {}))
    assert "<svg" not in empty and "No latency chart: no model calls in this period." in empty


def test_cli_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "audit.jsonl"
    synth(path)
    out_html = tmp_path / "r.html"
    parser = argparse.ArgumentParser()
    usage_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["usage", "--audit", str(path), "--html", str(out_html)])
    settings, _ = parse_settings({"prices": {"small": {"prompt_per_1k": 1.0}}}, environ={})
    assert usage_cmd.run(args, settings) == 0
    out = capsys.readouterr().out
    assert "requests" in out and "small" in out
    assert out_html.read_text().startswith("<!doctype html>")
    bad = parser.parse_args(["usage", "--audit", str(path), "--since", "never"])
    assert usage_cmd.run(bad, settings) == 2


def test_next_edits_are_shown_beside_inline_completions(tmp_path: Path) -> None:
    ts = NOW.isoformat()
    events = []
    for i in range(10):  # inline completions: 10 shown, 4 accepted, 3 dismissed
        sid = f"c{i}"
        events.append({"ts": ts, "event": "shown", "suggestion_id": sid, "feature": "completion"})
        if i < 4:
            events.append({"ts": ts, "event": "accepted", "suggestion_id": sid, "feature": "completion"})
        elif i < 7:
            events.append({"ts": ts, "event": "dismissed", "suggestion_id": sid, "feature": "completion"})
    for i in range(5):  # next edits: 5 shown, 3 accepted, 2 dismissed
        sid = f"n{i}"
        kind = "accepted" if i < 3 else "dismissed"
        events.append({"ts": ts, "event": "shown", "suggestion_id": sid, "feature": "next_edit"})
        events.append({"ts": ts, "event": kind, "suggestion_id": sid, "feature": "next_edit"})
    path = tmp_path / "audit.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    records, _ = read_records([path])
    rep = build_report(records)
    kinds = rep.to_dict()["suggestion_kinds"]
    assert kinds == {
        "inline completions": {"shown": 10, "accepted": 4, "dismissed": 3, "acceptance_rate": 0.4},
        "next edits": {"shown": 5, "accepted": 3, "dismissed": 2, "acceptance_rate": 0.6},
    }
    text = render_text(rep)
    block = text.split("inline completions and next edits\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert block[0].split() == ["shown", "accepted", "dismissed", "acc.", "rate"]
    assert block[1].split() == ["inline", "completions", "10", "4", "3", "40.0%"]
    assert block[2].split() == ["next", "edits", "5", "3", "2", "60.0%"]
    page = render_html(rep)
    assert "Inline completions and next edits" in page
    assert 'data-figure="suggestion|next edits|dismissed">2<' in page
    assert 'data-figure="suggestion|next edits|acceptance_rate">60.0%<' in page
