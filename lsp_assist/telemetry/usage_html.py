"""The usage report as one self-contained HTML file: charts drawn by matplotlib (extra
`report`) as inline SVG, and the figures as real HTML tables.

- Offline: no script, no stylesheet or font link, no image URL; the SVG text is drawn as
  paths (`svg.fonttype = "path"`), so a chart looks the same whatever fonts the viewer has,
  and `bbox_inches="tight"` sizes each figure to everything drawn in it (no label is cut).
- A chart with nothing to draw is replaced by a sentence saying why (no model call in the
  period, no price configured for any model, no editor events...).
- Every figure in a table cell carries `data-figure="<dimension>|<name>|<key>"` and is
  printed with `usage.format_figure`, so a test can check the page against `usage --json`
  (`tests/editors/test_usage_report_render.py` renders it in headless Chromium).
- Without matplotlib the page still has every table, and a sentence where each chart would
  be saying how to get them.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lsp_assist.telemetry.usage import (
    ACCEPTANCE_COLUMNS,
    CHECKPOINTS,
    DIMENSIONS,
    HEADLINE_CHECKPOINT,
    KIND_COLUMNS,
    Group,
    UsageReport,
    acceptance_rows,
    format_figure,
    kind_rows,
    percentile,
)

COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")

CALL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("requests", "calls"),
    ("error_rate", "errors"),
    ("fallback_rate", "fallbacks"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("cost", "cost"),
    ("ttft_p50", "ttft p50 ms"),
    ("ttft_p95", "ttft p95 ms"),
    ("total_p50", "total p50 ms"),
    ("total_p95", "total p95 ms"),
)

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px auto;
max-width:1200px;padding:0 16px;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:4px}h2{font-size:1.25em;margin-top:32px;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:18px 0 6px}
.meta{color:#555;font-size:.92em}
.charts{display:flex;flex-wrap:wrap;gap:20px;align-items:flex-start}
figure{margin:0;max-width:100%}figure svg{max-width:100%;height:auto;display:block}
figcaption{font-size:.9em;color:#444;margin-top:4px;max-width:560px}
p.empty{background:#f6f6f6;border-left:4px solid #bbb;padding:10px 14px;max-width:560px;margin:0}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;margin:6px 0 14px}
th,td{border-bottom:1px solid #e4e4e4;padding:4px 8px;white-space:nowrap}
th{text-align:left;background:#fafafa;font-weight:600}thead th{white-space:normal;vertical-align:bottom}
caption{text-align:left}td.num,th.num{text-align:right;
font-variant-numeric:tabular-nums}
tr.all td{font-weight:600}
"""


# --- charts --------------------------------------------------------------------------------


def _matplotlib() -> Any:
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        return None
    return matplotlib, Figure


class Charts:
    """Draws figures to inline SVG; each figure gets its own id salt (several SVGs share a page)."""

    def __init__(self) -> None:
        self.n = 0
        self.mpl = _matplotlib()

    def svg(self, draw: Callable[[Any], None], size: tuple[float, float], label: str) -> str:
        matplotlib, figure_cls = self.mpl
        self.n += 1
        rc = {
            "svg.fonttype": "path",
            "svg.hashsalt": f"lsp-assist-chart-{self.n}",
            "font.size": 9.5,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
        with matplotlib.rc_context(rc):
            fig = figure_cls(figsize=size, dpi=96, layout="constrained")
            draw(fig)
            buf = io.StringIO()
            fig.savefig(
                buf,
                format="svg",
                bbox_inches="tight",
                pad_inches=0.08,
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
            )
        text = buf.getvalue()
        text = text[text.index("<svg") :]
        text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
        # Ids unique in the page (glyph and clip-path ids repeat between figures).
        text = re.sub(r'id="([^"]+)"', rf'id="c{self.n}-\1"', text)
        text = re.sub(r'(xlink:href|href)="#([^"]+)"', rf'\1="#c{self.n}-\2"', text)
        text = re.sub(r"url\(#([^)]+)\)", rf"url(#c{self.n}-\1)", text)
        return text.replace("<svg ", f'<svg role="img" aria-label="{html.escape(label)}" ', 1)


def _figure(chart: str, caption: str) -> str:
    return f"<figure>{chart}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _empty(why: str) -> str:
    return f'<p class="empty">{html.escape(why)}</p>'


def latency_chart(charts: Charts, values: Sequence[float], title: str, why_empty: str) -> str:
    if not values:
        return _empty(why_empty)
    if charts.mpl is None:
        return _empty(_NO_MPL)
    vals = [float(v) for v in values]
    hi = max(1.0, percentile(vals, 99) or max(vals))
    p50, p95 = percentile(vals, 50) or 0.0, percentile(vals, 95) or 0.0

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        ax.hist([min(v, hi) for v in vals], bins=30, range=(0, hi), color=COLORS[0])
        for q, p, color in ((50, p50, COLORS[2]), (95, p95, COLORS[3])):
            ax.axvline(p, color=color, linestyle="--", linewidth=1.2, label=f"p{q} = {p:.0f} ms")
        ax.set_title(title)
        ax.set_xlabel("milliseconds (values above p99 in the last bar)")
        ax.set_ylabel("model calls")
        ax.legend(loc="upper right", frameon=False)

    return _figure(
        charts.svg(draw, (5.4, 3.0), title),
        f"{title}: {len(vals)} calls, p50 {p50:.0f} ms, p95 {p95:.0f} ms.",
    )


def cost_chart(charts: Charts, report: UsageReport) -> str:
    days = sorted(report.cost_by_day)
    total = sum(sum(d.values()) for d in report.cost_by_day.values())
    if not days:
        return _empty("No cost chart: no model calls in this period.")
    if total <= 0:
        return _empty(
            "No cost chart: no model called in this period has a price. Set "
            '[governance.prices."MODEL"] prompt_per_1k and completion_per_1k to see the cost.'
        )
    if charts.mpl is None:
        return _empty(_NO_MPL)
    features = sorted({f for d in days for f in report.cost_by_day[d]})

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        bottom = [0.0] * len(days)
        for i, feature in enumerate(features):
            heights = [report.cost_by_day[d].get(feature, 0.0) for d in days]
            ax.bar(range(len(days)), heights, bottom=bottom, color=COLORS[i % len(COLORS)], label=feature)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        step = max(1, len(days) // 10)
        ax.set_xticks(range(0, len(days), step), [d[5:] for d in days][::step])
        ax.set_ylabel("estimated cost")
        ax.set_title("Estimated cost per feature per day")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)

    return _figure(
        charts.svg(draw, (8.0, 3.0), "Estimated cost per feature per day"),
        f"Estimated cost per feature per day: {format_figure('cost', round(total, 6))} in all.",
    )


def acceptance_chart(charts: Charts, report: UsageReport, dim: str) -> str:
    groups = [(name, g) for name, g in sorted(report.by[dim].items()) if g.shown]
    if not groups:
        return _empty(_NO_EVENTS)
    if charts.mpl is None:
        return _empty(_NO_MPL)
    names = [name for name, _ in groups]
    rates = [len(g.accepted_ids) / g.shown for _, g in groups]
    kept = [
        (g.retained_chars.get(HEADLINE_CHECKPOINT, 0) / g.measured_chars[HEADLINE_CHECKPOINT])
        if g.measured_chars.get(HEADLINE_CHECKPOINT)
        else 0.0
        for _, g in groups
    ]
    title = f"Acceptance and retention by {dim}"

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        ys = list(range(len(names)))
        ax.barh([y - 0.2 for y in ys], rates, height=0.38, color=COLORS[0], label="accepted / shown")
        ax.barh(
            [y + 0.2 for y in ys],
            kept,
            height=0.38,
            color=COLORS[2],
            label=f"accepted characters still there at {HEADLINE_CHECKPOINT}",
        )
        ax.set_yticks(ys, names)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(_percent_formatter())
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.18), frameon=False, ncols=2)

    height = 1.6 + 0.45 * len(names)
    return _figure(
        charts.svg(draw, (5.8, height), title),
        f"{title}: the share of shown suggestions accepted, and of accepted characters kept.",
    )


def retention_chart(charts: Charts, report: UsageReport) -> str:
    g = report.overall
    if not g.accepted_chars:
        return _empty(
            "No retention chart: no suggestion was accepted in this period." if g.shown else _NO_EVENTS
        )
    if charts.mpl is None:
        return _empty(_NO_MPL)
    labels = ["accepted", *(f"kept {cp}" for cp in CHECKPOINTS)]
    measured = [g.measured_chars.get(cp, 0) for cp in CHECKPOINTS]
    values = [g.accepted_chars, *(g.retained_chars.get(cp, 0) for cp in CHECKPOINTS)]

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        bars = ax.bar(labels, values, color=[COLORS[0], COLORS[2], COLORS[2], COLORS[2]])
        ax.bar_label(bars, labels=[str(v) for v in values], padding=2)
        ax.set_ylabel("characters")
        ax.set_title("Accepted characters and what is still there")
        ax.margins(y=0.15)

    pending = [cp for cp, m in zip(CHECKPOINTS, measured, strict=True) if not m]
    note = f" Not measured yet at {', '.join(pending)}." if pending else ""
    return _figure(
        charts.svg(draw, (5.4, 3.0), "Accepted characters and what is still there"),
        "Characters accepted, and of them still in the code 30 s, 2 min and 10 min later "
        f"(a character diff of each accepted span).{note}",
    )


def _percent_formatter() -> Any:
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1.0, decimals=0)


_NO_EVENTS = (
    "No acceptance chart: no editor reported suggestion events (shown, accepted, ...) in this "
    "period. The VS Code and Neovim clients of this version report them."
)
_NO_MPL = "Charts need matplotlib: pip install 'lsp-assist[report]' (the tables below are complete)."


# --- tables ------------------------------------------------------------------------------


def _call_row(g: Group) -> dict[str, object]:
    s = g.summary()
    ttft, total = s["ttft_ms"], s["total_ms"]
    assert isinstance(ttft, dict) and isinstance(total, dict)
    return {
        "requests": g.requests,
        "error_rate": s["error_rate"],
        "fallback_rate": s["fallback_rate"],
        "prompt_tokens": g.prompt_tokens,
        "completion_tokens": g.completion_tokens,
        "cost": s["cost"],
        "ttft_p50": ttft["p50"],
        "ttft_p95": ttft["p95"],
        "total_p50": total["p50"],
        "total_p95": total["p95"],
    }


def call_figure(key: str, v: object) -> str:
    """How a call figure is printed (the render test uses it too)."""
    if v is None:
        return "-"
    if key in ("error_rate", "fallback_rate") and isinstance(v, (int, float)):
        return f"{100 * v:.1f}%"
    if key == "cost" and isinstance(v, (int, float)):
        return f"{v:.4f}"
    if key.startswith(("ttft_", "total_")) and isinstance(v, (int, float)):
        return f"{v:.0f}"
    return str(v)


def _table(
    dim: str,
    rows: Sequence[tuple[str, Mapping[str, object]]],
    columns: Sequence[tuple[str, str]],
    fmt: Callable[[str, object], str],
    caption: str,
) -> str:
    head = "".join(f'<th class="num" scope="col">{html.escape(h)}</th>' for _, h in columns)
    body = []
    for name, row in rows:
        cls = ' class="all"' if name == "(all)" else ""
        cells = "".join(
            f'<td class="num" data-figure="{html.escape(f"{dim}|{name}|{key}")}">'
            f"{html.escape(fmt(key, row.get(key)))}</td>"
            for key, _ in columns
        )
        body.append(f'<tr{cls}><th scope="row">{html.escape(name)}</th>{cells}</tr>')
    return (
        f'<div class="table-wrap"><table><caption class="meta">{html.escape(caption)}</caption>'
        f'<thead><tr><th scope="col">{html.escape(dim)}</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def call_rows(report: UsageReport, dim: str) -> list[tuple[str, dict[str, object]]]:
    rows = [("(all)", _call_row(report.overall))] if dim == "feature" else []
    rows += [(name, _call_row(g)) for name, g in sorted(report.by[dim].items()) if g.requests]
    return rows


# --- the page ------------------------------------------------------------------------------


def _keep_section(charts: Charts, report: UsageReport) -> list[str]:
    """The section on what users keep: next edits beside inline completions, then the
    charts and the acceptance tables."""
    out: list[str] = []
    g = report.overall
    if not g.shown and not g.accepted_chars:
        out.append(_empty(_NO_EVENTS.replace("No acceptance chart", "No acceptance figures")))
    else:
        out.append("<h3>Inline completions and next edits</h3>")
        out.append(
            _table(
                "suggestion",
                kind_rows(report),
                KIND_COLUMNS,
                format_figure,
                "dismissed = turned down in the editor; acc. rate = accepted / shown",
            )
        )
        out.append(
            f'<div class="charts">{retention_chart(charts, report)}'
            f"{acceptance_chart(charts, report, 'model')}</div>"
        )
        for dim in DIMENSIONS:
            out.append(f"<h3>Suggestions by {html.escape(dim)}</h3>")
            out.append(
                _table(
                    dim,
                    acceptance_rows(report, dim),
                    ACCEPTANCE_COLUMNS,
                    format_figure,
                    "kept = accepted characters still there; per call, per 1k prompt tokens and cost "
                    f"at {HEADLINE_CHECKPOINT}",
                )
            )
    return out


def render_html(report: UsageReport) -> str:
    charts = Charts()
    g = report.overall
    span = f"{report.first or '-'} to {report.last or '-'}"
    since = f" (since {report.since.isoformat()})" if report.since else ""
    a = g.acceptance()
    headline = (
        f"{g.requests} model calls from {span}{since}; {a['shown']} suggestions shown, "
        f"{a['accepted']} accepted ({format_figure('acceptance_rate', a['acceptance_rate'])}); "
        f"cost {format_figure('cost', round(g.cost, 6)) if g.cost else '-'}."
    )
    no_calls = "No latency chart: no model calls in this period."
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>lsp-assist usage</title><style>{_CSS}</style></head><body>",
        "<h1>lsp-assist usage</h1>",
        f'<p class="meta">{html.escape(headline)}</p>',
        "<h2>What users keep</h2>",
    ]
    parts += _keep_section(charts, report)
    parts += [
        "<h2>Latency</h2>",
        f'<div class="charts">{latency_chart(charts, g.ttft, "Time to first token", no_calls)}'
        f"{latency_chart(charts, g.total, 'End-to-end', no_calls)}</div>",
        "<h2>Cost</h2>",
        f'<div class="charts">{cost_chart(charts, report)}</div>',
        "<h2>Model calls</h2>",
    ]
    for dim in DIMENSIONS:
        parts.append(f"<h3>Model calls by {html.escape(dim)}</h3>")
        rows = call_rows(report, dim)
        if not rows:
            parts.append(_empty(f"No model calls with a {dim} in this period."))
            continue
        parts.append(_table(dim, rows, CALL_COLUMNS, call_figure, "latency in milliseconds"))
    notes = []
    if g.estimated:
        notes.append(f"{g.estimated} call(s) had estimated token counts (no usage from the provider).")
    if report.malformed:
        notes.append(f"{report.malformed} malformed line(s) skipped.")
    if notes:
        parts.append(f'<p class="meta">{html.escape(" ".join(notes))}</p>')
    parts.append("</body></html>\n")
    return "".join(parts)


__all__ = ["CALL_COLUMNS", "call_figure", "call_rows", "render_html"]
