"""The usage report: requests, tokens, cost, error and fallback rates, latency percentiles,
and what users keep: next edits beside inline completions (shown, accepted, dismissed,
acceptance rate), acceptance rate, accepted and retained characters per model call and
per 1,000 prompt tokens, cost per retained character.

Reads audit JSONL files (the current one and rotated backups; malformed lines are
skipped and counted), filters by `since`, groups by feature, tier, model and language, and
renders text, JSON or a self-contained HTML page (`usage_html.py`). A line with an
``event`` field is a suggestion event (telemetry/events.py); any other line is a model call.

Latency comes from the record's `stages_ms`: `ttft` (time to first token) and `total`.
Cost is `prompt_tokens/1000 * prompt_per_1k + completion_tokens/1000 * completion_per_1k`
from `governance.prices`, keyed by model name.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from lsp_assist.governance.audit import audit_files
from lsp_assist.governance.settings import Price

ERROR_OUTCOMES = frozenset({"error", "timeout"})
FALLBACK_OUTCOMES = frozenset({"fallback"})
DIMENSIONS = ("feature", "tier", "model", "language")
CHECKPOINTS = ("30s", "2m", "10m")
HEADLINE_CHECKPOINT = "2m"
"""The checkpoint the one-number figures use (retained chars per call, cost per retained char)."""
_CHECKPOINT_OF_SECONDS = {30: "30s", 120: "2m", 600: "10m"}
EVENT_KINDS = ("shown", "accepted", "accepted_partial", "dismissed", "typed_over")


def parse_since(value: str, now: _dt.datetime | None = None) -> _dt.datetime:
    """`7d`, `24h`, `30m`, `2w`, or an ISO date/time (naive means UTC)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", value)
    if m:
        n = float(m.group(1))
        unit = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]
        return now - _dt.timedelta(seconds=n * unit)
    try:
        dt = _dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"--since: expected e.g. 7d, 24h or an ISO date, got {value!r}") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=_dt.timezone.utc)


def _ts(rec: Mapping[str, object]) -> _dt.datetime | None:
    v = rec.get("ts")
    if not isinstance(v, str):
        return None
    try:
        dt = _dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=_dt.timezone.utc)


def read_records(
    paths: Iterable[str | os.PathLike[str]], since: _dt.datetime | None = None
) -> tuple[list[dict[str, object]], int]:
    """Records from every file (and its backups), oldest file first; plus a malformed count."""
    records: list[dict[str, object]] = []
    bad = 0
    for path in paths:
        for f in audit_files(path):
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        if not line.strip():
                            continue
                        try:
                            rec = json.loads(line)
                        except json.JSONDecodeError:
                            bad += 1
                            continue
                        if not isinstance(rec, dict):
                            bad += 1
                            continue
                        if since is not None:
                            ts = _ts(rec)
                            if ts is None or ts < since:
                                continue
                        records.append(rec)
            except OSError:
                bad += 1
    return records, bad


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]


def _num(v: object) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def cost_of(rec: Mapping[str, object], prices: Mapping[str, Price]) -> float:
    price = prices.get(str(rec.get("model", "")))
    if price is None:
        return 0.0
    return (
        _num(rec.get("prompt_tokens")) / 1000 * price.prompt_per_1k
        + _num(rec.get("completion_tokens")) / 1000 * price.completion_per_1k
    )


@dataclass
class Group:
    requests: int = 0
    errors: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: int = 0
    cost: float = 0.0
    ttft: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    events: dict[str, int] = field(default_factory=dict)  # event kind -> count
    accepted_ids: set[str] = field(default_factory=set)
    accepted_chars: int = 0
    retained_chars: dict[str, int] = field(default_factory=dict)  # checkpoint -> chars kept
    measured_chars: dict[str, int] = field(default_factory=dict)  # checkpoint -> chars measured

    def add_event(self, rec: Mapping[str, object]) -> None:
        kind = str(rec.get("event", ""))
        if kind == "retained":
            label = _CHECKPOINT_OF_SECONDS.get(int(_num(rec.get("checkpoint_s"))))
            if label is None:
                return
            self.retained_chars[label] = self.retained_chars.get(label, 0) + int(
                _num(rec.get("retained_chars"))
            )
            self.measured_chars[label] = self.measured_chars.get(label, 0) + int(
                _num(rec.get("accepted_chars"))
            )
            return
        if kind not in EVENT_KINDS:
            return
        self.events[kind] = self.events.get(kind, 0) + 1
        if kind in ("accepted", "accepted_partial"):
            self.accepted_chars += int(_num(rec.get("accepted_chars")))
            sid = rec.get("suggestion_id")
            if isinstance(sid, str):
                self.accepted_ids.add(sid)

    @property
    def shown(self) -> int:
        return self.events.get("shown", 0)

    def acceptance(self) -> dict[str, object]:
        """The suggestion figures: counts, rates and characters per call, token and cost."""
        shown = self.shown
        accepted = len(self.accepted_ids)
        retained = {cp: self.retained_chars.get(cp, 0) for cp in CHECKPOINTS}
        head = retained[HEADLINE_CHECKPOINT]
        measured_head = self.measured_chars.get(HEADLINE_CHECKPOINT, 0)
        k_tokens = self.prompt_tokens / 1000

        def ratio(a: float, b: float, digits: int = 4) -> float | None:
            return round(a / b, digits) if b else None

        return {
            "shown": shown,
            "accepted": accepted,
            "accepted_whole": self.events.get("accepted", 0),
            "accepted_partial": self.events.get("accepted_partial", 0),
            "dismissed": self.events.get("dismissed", 0),
            "typed_over": self.events.get("typed_over", 0),
            "acceptance_rate": ratio(accepted, shown),
            "accepted_chars": self.accepted_chars,
            "retained_chars": retained,
            "measured_chars": {cp: self.measured_chars.get(cp, 0) for cp in CHECKPOINTS},
            "retention_rate": {cp: ratio(retained[cp], self.measured_chars.get(cp, 0)) for cp in CHECKPOINTS},
            "accepted_chars_per_call": ratio(self.accepted_chars, self.requests, 2),
            "retained_chars_per_call": ratio(head, self.requests, 2) if measured_head else None,
            "accepted_chars_per_1k_prompt_tokens": ratio(self.accepted_chars, k_tokens, 2),
            "retained_chars_per_1k_prompt_tokens": ratio(head, k_tokens, 2) if measured_head else None,
            "cost_per_retained_char": ratio(self.cost, head, 8) if self.cost and measured_head else None,
        }

    def add(self, rec: Mapping[str, object], cost: float) -> None:
        self.requests += 1
        outcome = str(rec.get("outcome", ""))
        if outcome in ERROR_OUTCOMES or rec.get("error_class"):
            self.errors += 1
        if outcome in FALLBACK_OUTCOMES or rec.get("fallback_from"):
            self.fallbacks += 1
        self.prompt_tokens += int(_num(rec.get("prompt_tokens")))
        self.completion_tokens += int(_num(rec.get("completion_tokens")))
        self.estimated += bool(rec.get("tokens_estimated"))
        self.cost += cost
        stages = rec.get("stages_ms")
        if isinstance(stages, dict):
            if isinstance(stages.get("ttft"), (int, float)):
                self.ttft.append(float(stages["ttft"]))
            if isinstance(stages.get("total"), (int, float)):
                self.total.append(float(stages["total"]))

    def summary(self) -> dict[str, object]:
        n = self.requests or 1
        return {
            "requests": self.requests,
            "errors": self.errors,
            "error_rate": round(self.errors / n, 4),
            "fallback_rate": round(self.fallbacks / n, 4),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": round(self.cost, 6),
            "ttft_ms": {f"p{q}": percentile(self.ttft, q) for q in (50, 95, 99)},
            "total_ms": {f"p{q}": percentile(self.total, q) for q in (50, 95, 99)},
            "suggestions": self.acceptance(),
        }


@dataclass
class UsageReport:
    since: _dt.datetime | None
    overall: Group
    by: dict[str, dict[str, Group]]  # "feature" | "tier" | "model" | "language" -> name -> group
    cost_by_day: dict[str, dict[str, float]]  # day -> feature -> cost
    malformed: int = 0
    first: str | None = None
    last: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "since": self.since.isoformat() if self.since else None,
            "overall": self.overall.summary(),
            "by": {dim: {k: g.summary() for k, g in groups.items()} for dim, groups in self.by.items()},
            "cost_by_day": self.cost_by_day,
            "suggestion_kinds": dict(kind_rows(self)),
            "malformed_lines": self.malformed,
            "headline_checkpoint": HEADLINE_CHECKPOINT,
        }


def build_report(
    records: list[dict[str, object]],
    prices: Mapping[str, Price] | None = None,
    since: _dt.datetime | None = None,
    malformed: int = 0,
) -> UsageReport:
    prices = prices or {}
    overall = Group()
    by: dict[str, dict[str, Group]] = {dim: {} for dim in DIMENSIONS}
    cost_by_day: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    stamps: list[str] = []
    for rec in records:
        if "event" in rec:
            overall.add_event(rec)
            for dim in by:
                by[dim].setdefault(str(rec.get(dim) or "-"), Group()).add_event(rec)
            continue
        c = cost_of(rec, prices)
        overall.add(rec, c)
        for dim in by:
            name = str(rec.get(dim) or "-")
            by[dim].setdefault(name, Group()).add(rec, c)
        ts = _ts(rec)
        if ts is not None:
            stamps.append(ts.isoformat())
            cost_by_day[ts.date().isoformat()][str(rec.get("feature") or "-")] += c
    stamps.sort()
    return UsageReport(
        since=since,
        overall=overall,
        by=by,
        cost_by_day={d: dict(v) for d, v in sorted(cost_by_day.items())},
        malformed=malformed,
        first=stamps[0] if stamps else None,
        last=stamps[-1] if stamps else None,
    )


def _ms(v: object) -> str:
    return "-" if v is None else f"{float(v):.0f}"  # type: ignore[arg-type]


def render_text(report: UsageReport) -> str:
    lines = []
    span = f"{report.first or '-'} .. {report.last or '-'}"
    lines.append(f"lsp-assist usage  ({report.overall.requests} model calls, {span})")
    if report.since:
        lines.append(f"since {report.since.isoformat()}")
    header = (
        f"{'':<22}{'requests':>9}{'err%':>7}{'fallb%':>7}{'prompt tok':>12}{'compl tok':>11}"
        f"{'cost':>11}{'ttft p50/p95/p99':>20}{'total p50/p95/p99':>20}"
    )
    for dim in DIMENSIONS:
        lines.append("")
        lines.append(f"by {dim}")
        lines.append(header)
        rows = [("(all)", report.overall)] if dim == "feature" else []
        rows += sorted(report.by[dim].items())
        for name, g in rows:
            s = g.summary()
            t = s["ttft_ms"]
            tot = s["total_ms"]
            assert isinstance(t, dict) and isinstance(tot, dict)
            lines.append(
                f"{name[:21]:<22}{g.requests:>9}{100 * g.errors / max(1, g.requests):>6.1f}%"
                f"{100 * g.fallbacks / max(1, g.requests):>6.1f}%"
                f"{g.prompt_tokens:>12}{g.completion_tokens:>11}"
                f"{g.cost:>11.4f}{'/'.join(_ms(t[k]) for k in ('p50', 'p95', 'p99')):>20}"
                f"{'/'.join(_ms(tot[k]) for k in ('p50', 'p95', 'p99')):>20}"
            )
    lines.extend(render_acceptance_text(report))
    if report.overall.estimated:
        lines.append("")
        lines.append(
            f"{report.overall.estimated} call(s) had estimated token counts (no usage from the provider)."
        )
    if report.malformed:
        lines.append(f"{report.malformed} malformed line(s) skipped.")
    return "\n".join(lines) + "\n"


ACCEPTANCE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("shown", "shown"),
    ("accepted", "accepted"),
    ("acceptance_rate", "acc. rate"),
    ("accepted_chars", "acc. chars"),
    ("retained_30s", "kept 30s"),
    ("retained_2m", "kept 2m"),
    ("retained_10m", "kept 10m"),
    ("accepted_chars_per_call", "acc./call"),
    ("retained_chars_per_call", "kept/call"),
    ("accepted_chars_per_1k_prompt_tokens", "acc./1k tok"),
    ("retained_chars_per_1k_prompt_tokens", "kept/1k tok"),
    ("cost_per_retained_char", "cost/kept char"),
)
"""The acceptance table's columns (key in `acceptance_row`, header); the text and HTML
reports show the same ones. "kept" figures are at the headline checkpoint unless named."""


def acceptance_row(g: Group) -> dict[str, object]:
    """One row of the acceptance table, flat: the checkpoints' retained chars as columns."""
    a = g.acceptance()
    row = dict(a)
    retained = a["retained_chars"]
    assert isinstance(retained, dict)
    for cp in CHECKPOINTS:
        row[f"retained_{cp}"] = retained[cp]
    return row


def format_figure(key: str, v: object) -> str:
    """How a figure is printed, the same in text and HTML (the render test compares them)."""
    if v is None:
        return "-"
    if key == "acceptance_rate" and isinstance(v, (int, float)):
        return f"{100 * v:.1f}%"
    if key == "cost_per_retained_char" and isinstance(v, (int, float)):
        return f"{v:.6f}"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def acceptance_rows(report: UsageReport, dim: str) -> list[tuple[str, dict[str, object]]]:
    rows = [("(all)", acceptance_row(report.overall))] if dim == "feature" else []
    rows += [(name, acceptance_row(g)) for name, g in sorted(report.by[dim].items())]
    return rows


SUGGESTION_KINDS: tuple[tuple[str, str], ...] = (
    ("completion", "inline completions"),
    ("next_edit", "next edits"),
)
"""The suggestions users see, by their events' feature label, as the report names them."""

KIND_COLUMNS: tuple[tuple[str, str], ...] = (
    ("shown", "shown"),
    ("accepted", "accepted"),
    ("dismissed", "dismissed"),
    ("acceptance_rate", "acc. rate"),
)
"""The columns of the table that sets next edits beside inline completions."""


def kind_rows(report: UsageReport) -> list[tuple[str, dict[str, object]]]:
    """Inline completions and next edits side by side: shown, accepted, dismissed, rate
    (a kind with no events shows zeros: the user sees that it was not used)."""
    rows = []
    for feature, label in SUGGESTION_KINDS:
        a = report.by["feature"].get(feature, Group()).acceptance()
        rows.append((label, {key: a[key] for key, _ in KIND_COLUMNS}))
    return rows


def render_acceptance_text(report: UsageReport) -> list[str]:
    if not report.overall.shown and not report.overall.accepted_chars:
        return ["", "suggestions: no editor events recorded (shown, accepted, ...) in this period"]
    lines = ["", "inline completions and next edits"]
    lines.append(f"{'':<22}" + "".join(f"{h:>12}" for _, h in KIND_COLUMNS))
    for name, row in kind_rows(report):
        lines.append(f"{name:<22}" + "".join(f"{format_figure(k, row.get(k)):>12}" for k, _ in KIND_COLUMNS))
    lines += ["", f"suggestions (kept = retained characters; per call and cost at {HEADLINE_CHECKPOINT})"]
    widths = [max(len(h), 8) + 2 for _, h in ACCEPTANCE_COLUMNS]
    for dim in DIMENSIONS:
        lines.append("")
        lines.append(f"by {dim}")
        lines.append(
            f"{'':<22}" + "".join(f"{h:>{w}}" for (_, h), w in zip(ACCEPTANCE_COLUMNS, widths, strict=True))
        )
        for name, row in acceptance_rows(report, dim):
            cells = "".join(
                f"{format_figure(k, row.get(k)):>{w}}"
                for (k, _), w in zip(ACCEPTANCE_COLUMNS, widths, strict=True)
            )
            lines.append(f"{name[:21]:<22}{cells}")
    return lines
