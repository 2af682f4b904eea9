"""How the next-edit benchmark judges a proposal, and the tables it prints.

A case is either repeated (the commit made one change at several places; the first is
replayed, a proposal is correct when it leaves a row exactly as one of the others does) or
a control (the commit changed one place and left the old text elsewhere: a proposal is a
false alarm unless it leaves a row as the commit did). Each predictor's run yields one
`Outcome` per case; figures are summed over any set of cases (a repository, the tuning or
the validation half, the subset the real model ran on), so every row of a table comes from
the same run.

The halves: thresholds are tuned on `TUNING` and checked on `VALIDATION`; `FRESH` was
mined after the last change to the rules and is never looked at case by case (the
validation half's errors were analysed, so it is no longer untouched). `TUNING` grew by
`TUNING_NEW` later; its two parts are printed too. A repository never moves between halves.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from benchmarks.common import percentile

#: Repositories the rules' constants were first tuned on.
TUNING_OLD = ("psf/requests", "pallets/click", "pallets/flask")
#: Added to the tuning half later (`next_edit_cases_tune2.json.gz`), for more false alarms
#: of more kinds to tune on.
TUNING_NEW = ("pytest-dev/pluggy", "Textualize/rich", "python-poetry/tomlkit", "hynek/structlog")
#: Repositories the rules' constants are tuned on.
TUNING = TUNING_OLD + TUNING_NEW
#: Held-out repositories: figures only, nothing tuned on them.
VALIDATION = ("encode/httpx", "python-attrs/attrs", "pallets/werkzeug")
#: Held out and never analysed: repositories first mined after the rules were set.
FRESH = ("pallets/jinja", "marshmallow-code/marshmallow", "encode/starlette")
HALVES = (("TUNING half", TUNING), ("VALIDATION half", VALIDATION), ("FRESH half", FRESH))
#: The tuning half's two parts, printed after the halves: the old part keeps the figures of
#: runs before the new repositories comparable.
TUNING_PARTS = (("tuning: old 3", TUNING_OLD), ("tuning: new 4", TUNING_NEW))


def half_of(repo: str) -> str:
    """The short label of `repo`'s half: tune, valid, fresh or other."""
    for label, (_, repos) in zip(("tune", "valid", "fresh"), HALVES, strict=True):
        if repo in repos:
            return label
    return "other"


@dataclass(frozen=True)
class Place:
    line: int
    col: int  # code points
    old: str
    new: str


@dataclass(frozen=True)
class Outcome:
    """One predictor on one case."""

    case: int
    control: bool
    proposed: bool = False
    correct: bool = False  # repeated: one of the commit's other places
    next: bool = False  # repeated: the place the commit changed next in file order
    false_alarm: bool = False  # control: a row the developer did not change so
    latency_ms: float | None = None  # last didChange written -> answer parsed
    after_token_ms: float | None = None  # model's last token -> answer parsed


@dataclass(frozen=True)
class SessionOutcome:
    """One predictor over one repeated change made as a session (`next_edit_session.py`)."""

    case: int
    follow_ups: int  # places after the first
    proposed: int
    correct: int  # proposals accepted: one of the places still to do


def places_after_first(case: dict[str, Any]) -> tuple[Place, list[Place], list[str]]:
    """The first place, the others as they stand after the first change, and the lines."""
    first, *rest = [Place(p["line"], p["col"], p["old"], p["new"]) for p in case["places"]]
    lines = case["before"].split("\n")
    line = lines[first.line]
    lines[first.line] = line[: first.col] + first.new + line[first.col + len(first.old) :]
    shift = len(first.new) - len(first.old)
    moved = [
        Place(p.line, p.col + shift if p.line == first.line and p.col > first.col else p.col, p.old, p.new)
        for p in rest
    ]
    return first, moved, lines


def next_of(first: Place, others: list[Place]) -> Place:
    after = [p for p in others if (p.line, p.col) > (first.line, first.col)]
    return after[0] if after else others[0]


def _applied(lines: list[str], edit: dict[str, Any]) -> tuple[int, str] | None:
    """(row, the row after the edit) for a one-row edit; None for anything else."""
    r = edit["range"]
    row = r["start"]["line"]
    if row != r["end"]["line"] or not 0 <= row < len(lines):
        return None
    units = lines[row].encode("utf-16-le")
    a, b = 2 * r["start"]["character"], 2 * r["end"]["character"]
    new = (units[:a] + edit["text"].encode("utf-16-le") + units[b:]).decode("utf-16-le", "replace")
    return row, new


def _place_applied(lines: list[str], p: Place) -> tuple[int, str]:
    line = lines[p.line]
    return p.line, line[: p.col] + p.new + line[p.col + len(p.old) :]


def judge(i: int, case: dict[str, Any], edit: dict[str, Any] | None, **timing: float | None) -> Outcome:
    """The outcome of proposing `edit` (None: nothing) on case `i`. Correct is judged by
    the row the edit leaves, so `cookie|lib|` -> `jar` and `cookielib` -> `cookiejar` are
    the same edit."""
    control = bool(case.get("control"))
    if edit is None:
        return Outcome(i, control, **timing)
    first, others, lines = places_after_first(case)
    got = _applied(lines, edit)
    if control:
        made = {(row, new) for row, new in case.get("rows", []) if row != first.line}
        return Outcome(i, True, proposed=True, false_alarm=got not in made, **timing)
    correct = got is not None and any(got == _place_applied(lines, p) for p in others)
    is_next = correct and got == _place_applied(lines, next_of(first, others))
    return Outcome(i, False, proposed=True, correct=correct, next=is_next, **timing)


@dataclass(frozen=True)
class Figures:
    cases: int
    proposed: int
    correct: int
    next: int
    controls: int
    false_alarms: int
    latency: tuple[float, float] | None  # p50, p95 ms
    after_token: tuple[float, float] | None

    @property
    def precision(self) -> float:
        return self.correct / self.proposed if self.proposed else float("nan")

    @property
    def recall(self) -> float:
        return self.correct / self.cases if self.cases else float("nan")

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.controls if self.controls else float("nan")


def figures(outcomes: Iterable[Outcome]) -> Figures:
    rows = list(outcomes)
    rep = [o for o in rows if not o.control]
    ctl = [o for o in rows if o.control]
    lat = [o.latency_ms for o in rows if o.latency_ms is not None]
    tok = [o.after_token_ms for o in rows if o.after_token_ms is not None]
    return Figures(
        cases=len(rep),
        proposed=sum(o.proposed for o in rep),
        correct=sum(o.correct for o in rep),
        next=sum(o.next for o in rep),
        controls=len(ctl),
        false_alarms=sum(o.false_alarm for o in ctl),
        latency=(statistics.median(lat), percentile(lat, 95)) if lat else None,
        after_token=(statistics.median(tok), percentile(tok, 95)) if tok else None,
    )


HEADER = (
    f"{'':<22}{'predictor':<22}{'cases':>6}{'prop.':>6}{'corr.':>6}{'prec.':>7}{'recall':>7}"
    f"{'ctrl':>6}{'alarm':>6}{'FP':>6}{'p50 ms':>9}{'p95 ms':>9}{'tok p50':>9}{'tok p95':>9}"
)


def _ms(pair: tuple[float, float] | None) -> str:
    return f"{'-':>9}{'-':>9}" if pair is None else f"{pair[0]:>9.1f}{pair[1]:>9.1f}"


def row(scope: str, name: str, f: Figures) -> str:
    return (
        f"{scope[:21]:<22}{name[:21]:<22}{f.cases:>6}{f.proposed:>6}{f.correct:>6}"
        f"{f.precision:>7.2f}{f.recall:>7.2f}{f.controls:>6}{f.false_alarms:>6}{f.false_alarm_rate:>6.2f}"
        f"{_ms(f.latency)}{_ms(f.after_token)}"
    )


def scopes(cases: list[dict[str, Any]]) -> list[tuple[str, set[int]]]:
    """(label, case indices): every repository, each half, then all."""
    order = ("tune", "valid", "fresh", "other")
    repos = sorted({c["repo"] for c in cases}, key=lambda r: (order.index(half_of(r)), r))
    out = []
    for repo in repos:
        out.append((f"{half_of(repo)}: {repo}", {i for i, c in enumerate(cases) if c["repo"] == repo}))
    for label, half in (*HALVES, *TUNING_PARTS):
        idx = {i for i, c in enumerate(cases) if c["repo"] in half}
        if idx:
            out.append((label, idx))
    out.append(("all", set(range(len(cases)))))
    return out


def table(
    cases: list[dict[str, Any]], runs: list[tuple[str, list[Outcome]]], only: set[int] | None = None
) -> str:
    """One block per scope, one row per predictor (side by side, the same run)."""
    lines = [HEADER]
    for label, idx in scopes(cases):
        if only is not None:
            idx &= only
        if not idx:
            continue
        for name, outcomes in runs:
            lines.append(row(label, name, figures(o for o in outcomes if o.case in idx)))
        lines.append("")
    return "\n".join(lines)


SESSION_HEADER = (
    f"{'':<22}{'predictor':<22}{'cases':>6}{'follow':>7}{'prop.':>6}{'corr.':>6}{'prec.':>7}{'recall':>7}"
)


def session_table(cases: list[dict[str, Any]], runs: list[tuple[str, list[SessionOutcome]]]) -> str:
    """Sessions per scope: precision = correct / proposed, recall = correct / follow-ups."""
    lines = [SESSION_HEADER]
    for label, idx in scopes(cases):
        for name, outcomes in runs:
            rows = [o for o in outcomes if o.case in idx]
            if not rows:
                continue
            follow = sum(o.follow_ups for o in rows)
            prop = sum(o.proposed for o in rows)
            corr = sum(o.correct for o in rows)
            precision = corr / prop if prop else float("nan")
            recall = corr / follow if follow else float("nan")
            lines.append(
                f"{label[:21]:<22}{name[:21]:<22}{len(rows):>6}{follow:>7}{prop:>6}{corr:>6}"
                f"{precision:>7.2f}{recall:>7.2f}"
            )
        lines.append("")
    return "\n".join(lines)
