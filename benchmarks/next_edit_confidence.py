"""Refit the rule predictor's learned confidence (`lsp_assist/nextedit/confidence.py`).

Replays every corpus case in process, as `next_edit_errors.py` does (the first change typed
one key per character, the same judge), and lists every admissible place the predictor
would weigh (`rules.candidates`) with its features and a label: the place is one the
commit changed (a repeated case), or any place on a control (a false alarm if proposed).
Then, on the TUNING half only:

- a logistic regression (L2, Newton's method in numpy) on the features of the places on
  weak evidence (a rename's places pass the gate, so they are left out of the fit); its
  strength chosen by leave-one-repository-out log loss within the tuning half;
- the threshold: the predictor proposes the first place, in its own order, whose
  probability reaches it; chosen as the one with the highest recall on the tuning half
  whose precision and false-alarm rate are no worse than the evidence rules' there
  (0.90, 0.20), ties to the higher threshold.

It prints, per repository and per half, the evidence rules at their threshold and the
learned confidence at its threshold, replayed on the same places (the held-out halves
only reported), and the threshold sweep; `--write` writes the table the server reads
(`lsp_assist/nextedit/confidence_table.py`). No training happens at runtime.

    PYTHONPATH=. flock -x /tmp/lsp-cpu.lock python -m benchmarks.next_edit_confidence [--write]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.next_edit import load
from benchmarks.next_edit_errors import lsp_edit, type_first_change
from benchmarks.next_edit_errors import replay as replay_rules
from benchmarks.next_edit_score import HALVES, Outcome, figures, half_of, judge
from lsp_assist.nextedit import confidence, evidence, rules
from lsp_assist.nextedit.proposal import cursor_at
from lsp_assist.nextedit.tokens import token_change

URI = "file:///ws/case.py"
TABLE = Path(__file__).resolve().parent.parent / "lsp_assist" / "nextedit" / "confidence_table.py"
#: L2 strengths tried (leave-one-repository-out on the tuning half picks one).
LAMBDAS = (0.01, 0.1, 1.0, 10.0, 100.0)
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))


@dataclass
class Case:
    index: int
    case: dict[str, Any]
    fixed: Outcome | None  # a call-site proposal: the same under either confidence
    # features, a rename (passes the gate), evidence confidence, outcome
    places: list[tuple[list[float], bool, float, Outcome]]


def collect(i: int, case: dict[str, Any]) -> Case:
    """Type the first change as the benchmark does; every admissible place, judged."""
    rules_now = replay_rules(i, case)
    if rules_now.proposal is not None and rules_now.proposal.rule != "replace":
        return Case(i, case, rules_now.outcome, [])
    t = type_first_change(case)
    change = token_change(t.doc.text, t.last)
    places = []
    for offset, values, conf in rules.candidates(t.doc, t.last, t.cursor, t.earlier):
        assert change is not None
        a, b = cursor_at(t.doc, offset), cursor_at(t.doc, offset + len(change.old))
        edit = lsp_edit(t.lines, a, b, change.new)
        feats = [values[k] for k in confidence.FEATURES]
        places.append((feats, bool(values["rename"]), conf, judge(i, case, edit)))
    return Case(i, case, None, places)


def good(o: Outcome) -> float:
    return float(o.correct if not o.control else not o.false_alarm)


def fit(x: np.ndarray, y: np.ndarray, lam: float) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression (the bias not penalised), Newton's method."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    pen = np.full(d + 1, lam)
    pen[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (p - y) + pen * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(pen) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def log_loss(x: np.ndarray, y: np.ndarray, w: np.ndarray, b: float) -> float:
    p = np.clip(1.0 / (1.0 + np.exp(-(x @ w + b))), 1e-9, 1 - 1e-9)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).sum())


def decide(c: Case, score: Any, threshold: float) -> Outcome:
    """The predictor's answer: the first place in its order whose score reaches `threshold`."""
    if c.fixed is not None:
        return c.fixed
    for feats, sure, conf, outcome in c.places:
        if score(feats, sure, conf) >= threshold:
            return outcome
    return judge(c.index, c.case, None)


def evidence_score(feats: list[float], _sure: bool, conf: float) -> float:
    # A deletion left at one place is proposed at any evidence >= 0 (rules.py).
    return conf + evidence.THRESHOLD if feats[confidence.FEATURES.index("left_once")] else conf


def line(label: str, name: str, outcomes: list[Outcome]) -> str:
    f = figures(outcomes)
    return (
        f"| {label} | {name} | {f.proposed} | {f.correct} | {f.precision:.2f} | {f.recall:.2f} | "
        f"{f.false_alarms} / {f.controls} | {f.false_alarm_rate:.2f} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--write", action="store_true", help="write lsp_assist/nextedit/confidence_table.py")
    args = ap.parse_args()
    cases = [collect(i, c) for i, c in enumerate(load(0))]
    tune = [c for c in cases if half_of(c.case["repo"]) == "tune"]
    # Renames pass the gate (`confidence.py`): the table is fitted on the weak evidence only.
    rows = [(c.case["repo"], feats, good(o)) for c in tune for feats, sure, _, o in c.places if not sure]
    x = np.array([r[1] for r in rows])
    y = np.array([r[2] for r in rows])
    repos = np.array([r[0] for r in rows])
    print(f"tuning places: {len(rows)} ({int(y.sum())} positive) from {len(tune)} cases")
    losses = {}
    for lam in LAMBDAS:
        total = 0.0
        for repo in sorted(set(repos)):
            held = repos == repo
            w, b = fit(x[~held], y[~held], lam)
            total += log_loss(x[held], y[held], w, b)
        losses[lam] = total / len(rows)
    lam = min(losses, key=lambda k: losses[k])
    print("leave-one-repository-out log loss: " + ", ".join(f"{k:g}: {v:.4f}" for k, v in losses.items()))
    w, b = fit(x, y, lam)
    table = confidence.Table(dict(zip(confidence.FEATURES, (float(v) for v in w), strict=True)), b, 0.5)

    def learned(feats: list[float], sure: bool, _conf: float) -> float:
        values = dict(zip(confidence.FEATURES, feats, strict=True))
        return 1.0 if sure else confidence.probability(table, values)

    base = figures(decide(c, evidence_score, evidence.THRESHOLD) for c in tune)
    print("\nthreshold sweep (learned): precision / recall / FP per half")
    best: tuple[float, float] | None = None
    for t in THRESHOLDS:
        cells = []
        for label, repos_ in HALVES:
            f = figures(decide(c, learned, t) for c in cases if c.case["repo"] in repos_)
            cells.append(f"{label} {f.precision:.2f} / {f.recall:.2f} / {f.false_alarm_rate:.2f}")
        ft = figures(decide(c, learned, t) for c in tune)
        ok = ft.precision >= base.precision - 1e-9 and ft.false_alarm_rate <= base.false_alarm_rate + 1e-9
        if ok and (best is None or ft.recall >= best[1]):
            best = (t, ft.recall)
        print(f"  {t:.2f}: " + "; ".join(cells) + ("  (meets the tuning bar)" if ok else ""))
    threshold = best[0] if best is not None else 0.95
    table = confidence.Table(table.weights, table.bias, threshold)
    print(f"\nchosen on the tuning half: L2 {lam:g}, threshold {threshold:.2f}")
    print("weights: " + ", ".join(f"{k} {v:+.2f}" for k, v in table.weights.items()) + f", bias {b:+.2f}")
    print("\n| scope | confidence | proposed | correct | precision | recall | false alarms / controls | FP |")
    print("|---|---|---|---|---|---|---|---|")
    scopes: list[tuple[str, tuple[str, ...]]] = [(f"{half_of(r)}: {r}", (r,)) for _, rs in HALVES for r in rs]
    scopes += [(f"**{label}**", rs) for label, rs in HALVES]
    for label, scope_repos in scopes:
        mine = [c for c in cases if c.case["repo"] in scope_repos]
        print(
            line(
                label,
                f"evidence @{evidence.THRESHOLD:g}",
                [decide(c, evidence_score, evidence.THRESHOLD) for c in mine],
            )
        )
        print(line("", f"learned @{threshold:.2f}", [decide(c, learned, threshold) for c in mine]))
    if args.write:
        body = ",\n".join(f'    "{k}": {v:.4f}' for k, v in table.weights.items())
        TABLE.write_text(
            '"""The learned confidence\'s weights (`confidence.py`); written by\n'
            "`benchmarks/next_edit_confidence.py --write` from the tuning half, do not edit by hand.\n"
            f'L2 strength {lam:g} (leave-one-repository-out); threshold set on the tuning half."""\n\n'
            f"WEIGHTS: dict[str, float] = {{\n{body},\n}}\n"
            f"BIAS = {table.bias:.4f}\n"
            f"THRESHOLD = {threshold:.2f}\n"
        )
        print(f"wrote {TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
