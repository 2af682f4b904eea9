"""The Grafana dashboard and the collector example in dashboards/: every metric a query
names is one the server emits (as the collector's Prometheus exporter names it), and the
acceptance and retention figures are all on the dashboard."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = ROOT / "dashboards" / "lsp-assist.json"
COLLECTOR = ROOT / "dashboards" / "otel-collector.yaml"
OTEL = ROOT / "lsp_assist" / "telemetry" / "otel.py"


def emitted_instruments() -> list[tuple[str, str, str]]:
    """(kind, name, unit) of every instrument `telemetry/otel.py` creates, read from its code."""
    tree = ast.parse(OTEL.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        kind = node.func.attr
        if kind not in ("create_counter", "create_histogram", "create_up_down_counter", "create_gauge"):
            continue
        name = node.args[0]
        unit = next((k.value for k in node.keywords if k.arg == "unit"), None)
        assert isinstance(name, ast.Constant) and isinstance(unit, ast.Constant)
        out.append((kind, str(name.value), str(unit.value)))
    return out


def prometheus_names(kind: str, name: str, unit: str) -> set[str]:
    """The series the collector's Prometheus exporter makes of one OTel instrument."""
    base = re.sub(r"[^a-zA-Z0-9_]", "_", name)
    if unit == "s":
        base += "_seconds"
    elif unit and not unit.startswith("{"):
        base += "_" + re.sub(r"[^a-zA-Z0-9_]", "_", unit)
    if kind == "create_counter":
        return {base + "_total"}
    if kind == "create_histogram":
        return {base + "_bucket", base + "_sum", base + "_count"}
    return {base}


def emitted_series() -> set[str]:
    series: set[str] = set()
    for kind, name, unit in emitted_instruments():
        series |= prometheus_names(kind, name, unit)
    return series


def queries() -> list[str]:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    out = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    for var in dash["templating"]["list"]:
        q = var.get("query")
        if isinstance(q, dict):
            out.append(q["query"])
    return out


_FUNCTIONS = {"sum", "rate", "increase", "histogram_quantile", "label_values", "by", "le", "without"}


def metric_names(expr: str) -> set[str]:
    """Identifiers used as metric selectors: followed by `{`, `[` or a closing `)`/`,` of a
    function argument, minus functions, keywords and label names in `by (...)`."""
    label_values = re.findall(r"label_values\((\w+)", expr)
    if label_values:
        return set(label_values)
    expr = re.sub(r"by \([^)]*\)", "", expr)
    expr = re.sub(r"\{[^}]*\}", "{}", expr)
    expr = re.sub(r'"[^"]*"', '""', expr)
    names = set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b\s*(?=[{\[,)])", expr))
    return {n for n in names if n not in _FUNCTIONS and not n.startswith("__")}


def test_every_query_names_a_metric_the_server_emits() -> None:
    emitted = emitted_series()
    assert "lsp_assist_suggestion_events_total" in emitted
    assert "gen_ai_client_operation_duration_seconds_bucket" in emitted
    used: set[str] = set()
    for expr in queries():
        names = metric_names(expr)
        assert names, f"no metric in {expr!r}"
        unknown = names - emitted
        assert not unknown, f"{sorted(unknown)} in {expr!r} are not emitted (emitted: {sorted(emitted)})"
        used |= names
    # The figures the issue asks for are all there.
    for wanted in (
        "lsp_assist_suggestion_accepted_total",
        "lsp_assist_suggestion_events_total",
        "lsp_assist_suggestion_accepted_chars_total",
        "lsp_assist_suggestion_retained_chars_total",
        "lsp_assist_suggestion_measured_chars_total",
        "lsp_assist_model_calls_total",
        "lsp_assist_prompt_tokens_total",
        "lsp_assist_cost_total",
    ):
        assert wanted in used, wanted


def test_the_check_catches_a_wrong_name() -> None:
    assert metric_names('sum(rate(lsp_assist_suggestion_shown_total{a="b"}[5m]))') == {
        "lsp_assist_suggestion_shown_total"
    }
    assert "lsp_assist_suggestion_shown_total" not in emitted_series()
    assert metric_names("label_values(lsp_assist_model_calls_total, lsp_assist_tier)") == {
        "lsp_assist_model_calls_total"
    }


def test_the_collector_example_receives_otlp_http_and_exports_prometheus() -> None:
    text = COLLECTOR.read_text(encoding="utf-8")
    assert "otlp:" in text and "endpoint: 0.0.0.0:4318" in text
    assert re.search(r"exporters:\s*\[prometheus\]", text)
    assert "lsp-assist.json" in text
