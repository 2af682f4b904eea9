"""The rule predictor's errors on the next-edit corpus, replayed in process, by cause.

The stdio benchmark (`next_edit.py`) measures; this replays the same cases in process (a
`DocumentStore` and an `EditHistory`, the first change typed one key per character as
the benchmark types it, `rules.predict` asked at its end: the same proposals, judged by
the same `judge`) in a few seconds, and says for each error what the tree knew:

- a false alarm on a control, or a wrong proposal on a repeated change: the rule path
  (call site; rename; repeated; a deletion left once; plain evidence), the old token's
  kind (identifier, a name's node kind, punctuation, in a string or comment), the
  edit's kind (rename, switch to an existing name, wrap, deletion, other), and the scope
  relation of the proposed place (same function, other function, module), its confidence;
- a miss on a repeated change: no token change, a wrap waiting, the right place not
  admissible (which hard rule), below the threshold (its confidence), or a wrong place
  chosen first.

    PYTHONPATH=. python -m benchmarks.next_edit_errors [--half tune] [--list] [--confidence learned]
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from typing import Any

from benchmarks.next_edit import load
from benchmarks.next_edit_score import Outcome, figures, half_of, judge, places_after_first
from benchmarks.next_edit_session import u16
from lsp_assist.documents.store import Document, DocumentStore, TextChange
from lsp_assist.domain import Cursor
from lsp_assist.nextedit import confidence, evidence, rules
from lsp_assist.nextedit.history import Edit, EditHistory
from lsp_assist.nextedit.proposal import Proposal
from lsp_assist.nextedit.site import Place, place_of
from lsp_assist.nextedit.tokens import Syntax, TokenChange, token_change

URI = "file:///ws/case.py"


@dataclass
class Replayed:
    index: int
    case: dict[str, Any]
    doc: Document
    proposal: Proposal | None
    outcome: Outcome


@dataclass
class Typed:
    """A case's first change typed key by key, as the benchmark does: the document, its
    last edit and the edits before it (`rules.LOOKBACK`), the cursor, the text's lines."""

    doc: Document
    last: Edit
    earlier: list[Edit]
    cursor: Cursor
    lines: list[str]


def type_first_change(case: dict[str, Any]) -> Typed:
    store, history = DocumentStore(), EditHistory()
    store.on_open.append(history.open)
    store.on_edit.append(history.on_edit)
    store.open(URI, "python", 1, case["before"])
    first, _, lines = places_after_first(case)
    new = first.new or ""
    start, end = Cursor(first.line, first.col), Cursor(first.line, first.col + len(first.old))
    doc = store.change(URI, 2, [TextChange(start, end, new[:1])])
    col = first.col + len(new[:1])
    for ch in new[1:]:
        assert doc is not None
        at = Cursor(first.line, col)
        doc = store.change(URI, doc.version + 1, [TextChange(at, at, ch)])
        col += 1
    assert doc is not None
    h = history.get(URI)
    assert h is not None and h.last is not None
    earlier = list(h.edits)[-1 - rules.LOOKBACK : -1]
    return Typed(doc, h.last, earlier, Cursor(first.line, col), lines)


def lsp_edit(lines: list[str], start: Cursor, end: Cursor, text: str) -> dict[str, Any]:
    """An edit as the client receives it (UTF-16 columns), for `judge`."""
    return {
        "range": {
            "start": {"line": start.line, "character": u16(lines[start.line][: start.character])},
            "end": {"line": end.line, "character": u16(lines[end.line][: end.character])},
        },
        "text": text,
    }


def replay(
    i: int, case: dict[str, Any], threshold: float = evidence.THRESHOLD, table: confidence.Table | None = None
) -> Replayed:
    """Type the first change key by key as the benchmark does, then ask the rules."""
    t = type_first_change(case)
    found = rules.predict(t.doc, t.last, t.cursor, [], t.earlier, rules.Gate(threshold, table))
    p = found[0] if found else None
    edit = None if p is None else lsp_edit(t.lines, p.start, p.end, p.text)
    return Replayed(i, case, t.doc, p, judge(i, case, edit))


def _facts(r: Replayed) -> tuple[TokenChange | None, Place, Syntax | None]:
    tree = r.doc.tree()
    syntax = Syntax(r.doc.text, tree) if tree is not None else None
    first, _, lines = places_after_first(r.case)
    at = sum(len(x) + 1 for x in lines[: first.line]) + first.col
    change = token_change(r.doc.text, Edit(at, first.old, first.new or "", 0))
    if change is None:
        return None, Place(), syntax
    return change, rules._edited_place(syntax, change), syntax


def edit_kind(change: TokenChange, syntax: Syntax | None) -> str:
    if not change.new.strip():
        return "deletion"
    if rules._wraps(change):
        return "wrap"
    if change.new in change.old and not change.old.isidentifier():
        return "unwrap"
    if change.old.isidentifier() and change.new.isidentifier():
        if syntax is not None and not rules._fresh(syntax, change, (0, len(syntax.text))):
            return "ident->existing"
        return "ident->fresh"
    return "other"


def token_kind(change: TokenChange, edited: Place) -> str:
    if edited.literal:
        return "literal"
    if evidence.is_common(change.old):
        return "common"
    if change.old.isidentifier():
        return f"ident:{edited.kind}/{edited.role}" + ("/bind" if edited.binding else "")
    return "expr"


def path_of(r: Replayed, change: TokenChange, edited: Place, syntax: Syntax | None) -> str:
    if r.proposal is not None and r.proposal.rule != "replace":
        return r.proposal.rule
    rename, _ = rules._renamed(syntax, change, edited)
    if rename:
        return "rename"
    if rules._left_once(r.doc.text, change):
        return "left-once"
    return "evidence"


def scope_of(r: Replayed, change: TokenChange, edited: Place, syntax: Syntax | None) -> str:
    """Where the proposed place is from the edit: the same function, another, the module."""
    p = r.proposal
    if p is None or syntax is None:
        return "-"
    c = r.doc.offset(p.start)
    cand = place_of(syntax, c, c + len(change.old))
    if edited.function is not None and edited.function == cand.function:
        rel = "same-fn"
    elif cand.function is None and edited.function is None:
        rel = "module"
    elif cand.function is None or edited.function is None:
        rel = "fn<->module"
    else:
        rel = "other-fn"
    return rel


def miss_reason(r: Replayed, change: TokenChange, edited: Place, syntax: Syntax | None) -> str:
    """Why the right places were not proposed: wait (wrap), inadmissible (the first hard
    rule that excludes each), below the threshold (the best confidence), or absent."""
    _, others, lines = places_after_first(r.case)
    text = r.doc.text
    rename, local = rules._renamed(syntax, change, edited)
    ctx = rules._context(r.doc, syntax, change, edited, (False, evidence.THRESHOLD), rename)
    if not (ctx.rename or ctx.repeated) and rules._wraps(change):
        return "wrap-waits"
    best, why = -9.0, "absent"
    for p in others:
        row_at = sum(len(x) + 1 for x in lines[: p.line])
        for c in range(row_at + max(0, p.col - len(change.old)), row_at + p.col + len(p.old) + 1):
            if text[c : c + len(change.old)] != change.old:
                continue
            if local is not None and not local[0] <= c < local[1]:
                why = "outside-local" if best < -1 else why
                continue
            cand = place_of(syntax, c, c + len(change.old))
            if not rules._admissible(change, edited, cand):
                if best < -1:
                    why = "inadmissible:" + _excluded_by(change, edited, cand)
                continue
            end = c + len(change.old)
            row_end = text.find("\n", end)
            row = text[row_at : len(text) if row_end < 0 else row_end]
            score = evidence.cheap(ctx, text[c - 1 : c] if c else "", text[end : end + 1], row)
            conf = evidence.confidence(ctx, score, edited, cand)
            if conf > best:
                best, why = conf, f"below:{conf:.1f}"
    return why


def _excluded_by(change: TokenChange, edited: Place, cand: Place) -> str:
    if edited.literal is not None and cand.literal is not None and edited.literal != cand.literal:
        return "literal"
    if change.old.isidentifier() and change.new.isidentifier() and edited.kind is not None:
        if cand.kind != edited.kind:
            return "kind"
        if cand.role != edited.role:
            return "role"
        if cand.binding and not edited.binding:
            return "binding"
    if edited.role == "member":
        return "receiver"
    return "callee"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--half", default="tune")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--threshold", type=float, default=evidence.THRESHOLD)
    ap.add_argument("--confidence", default="evidence", help="evidence | learned (confidence_table.py)")
    args = ap.parse_args()
    cases = load(0)
    results: list[Replayed] = []
    for i, c in enumerate(cases):
        if args.half != "all" and half_of(c["repo"]) != args.half:
            continue
        table = confidence.TABLE if args.confidence == "learned" else None
        results.append(replay(i, c, args.threshold, table))
    for half in ("tune", "valid", "fresh"):
        f = figures(r.outcome for r in results if half_of(r.case["repo"]) == half)
        if f.cases:
            print(
                f"{half}: proposed {f.proposed} correct {f.correct} wrong {f.proposed - f.correct} "
                f"false alarms {f.false_alarms}/{f.controls} prec {f.precision:.3f} recall {f.recall:.3f} "
                f"FP {f.false_alarm_rate:.3f}"
            )
    errors: Counter[tuple[str, ...]] = Counter()
    for r in results:
        o = r.outcome
        kind = "FA" if o.false_alarm else "wrong" if o.proposed and not o.correct and not o.control else ""
        if not kind and not o.control and not o.proposed:
            kind = "miss"
        if not kind:
            continue
        change, edited, syntax = _facts(r)
        if change is None:
            key: tuple[str, ...] = (kind, "no-change")
        else:
            rel = scope_of(r, change, edited, syntax)
            if kind == "miss":
                rel = miss_reason(r, change, edited, syntax)
            key = (
                kind,
                path_of(r, change, edited, syntax),
                edit_kind(change, syntax),
                token_kind(change, edited),
                rel,
            )
        errors[key] += 1
        if args.list:
            where = f"{r.case['repo']} {r.case['commit'][:8]} {r.case['path']}"
            ch = f"{change.old!r} -> {change.new!r}" if change else "-"
            prop = ""
            if r.proposal is not None:
                prop = (
                    f" | proposed L{r.proposal.start.line}: {r.doc.line(r.proposal.start.line).strip()[:90]}"
                )
            print(f"[{r.index}] {' '.join(key)} | {where} | {ch}{prop}")
    dims = ("rule path", "edit kind", "token kind", "scope / why missed")
    for kind in ("FA", "wrong", "miss"):
        rows = {k: n for k, n in errors.items() if k[0] == kind}
        print(f"\n{kind}: {sum(rows.values())}")
        for d, name in enumerate(dims, start=1):
            by: Counter[str] = Counter()
            for k, n in rows.items():
                by[k[d] if len(k) > d else k[-1]] += n
            print(f"  by {name}: " + ", ".join(f"{v} {n}" for v, n in by.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
