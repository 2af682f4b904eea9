"""The rule predictor (no model, always on): repeat the user's last change where it applies.

1. A parameter list changed (a parameter added or removed): the next call site of that
   function in the open documents gets the matching argument change (`calls.py`).
2. One identifier or token sequence replaced another: a place that still has the old form
   gets the same replacement, when the change means the same thing there. With a syntax
   tree (`site.py`), a place is admissible only when it is in a string or a comment
   exactly when the edit was; for a rename, the same kind of node in the same role (a
   renamed variable is not `obj.name`); for a renamed local or parameter, in its function;
   for an attribute, reached through the same receiver (`self.x` in the same class, not
   `other.x`); for a name switched inside a call's arguments, a call of the same callee
   (an expression rewritten there, `dict()` -> `{}`, goes to any call); never on the line
   just edited. Each admissible place gets a confidence (`evidence.py`); of those at or
   above the threshold the next after the cursor is proposed: weak evidence (one edit, a
   common token or a value, an unlike context) waits for a second matching edit. A rename
   is strong evidence: the binding itself renamed, or a use of a local, a parameter or a
   name the file defines renamed to a name found nowhere else in its scope; a renamed use
   proposes the other uses, and the old name's binding only once the change repeats. An
   edit that wraps the old text (`int` -> `Optional[int]`) waits for a second one too;
   a deletion whose text is left at one place only proposes it whatever the threshold.
   Without a tree (no grammar) the text evidence alone applies.

Pure and synchronous: a search over one document's text and a few node look-ups (only for
places whose best possible confidence reaches the threshold), a few milliseconds on a file
of thousands of lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import islice
from typing import NamedTuple

from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor
from lsp_assist.nextedit import confidence, evidence
from lsp_assist.nextedit.calls import call_site_proposal
from lsp_assist.nextedit.history import Edit
from lsp_assist.nextedit.proposal import Proposal, proposal
from lsp_assist.nextedit.site import Place, place_of
from lsp_assist.nextedit.tokens import Syntax, TokenChange, edit_change, occurrences, token_change

#: Occurrences weighed per request at most (a few ms): a token that is everywhere must not
#: hold the event loop.
MAX_CANDIDATES = 2000
#: Occurrences of a renamed-to name looked up in the tree (are they in strings or comments?)
#: before the name counts as taken.
_FRESH_CHECKS = 20
#: Earlier edits looked at for the same change (the second matching edit).
LOOKBACK = 3


class Gate(NamedTuple):
    """What a place must reach to be proposed: `threshold` confidence
    (`next_edit.min_confidence`), or with a learned `table` (`next_edit.confidence =
    "learned"`) the table's probability threshold."""

    threshold: float = evidence.THRESHOLD
    table: confidence.Table | None = None


#: The default: the evidence threshold, no learned table.
EVIDENCE = Gate()


def predict(
    doc: Document,
    edit: Edit,
    cursor: Cursor,
    others: Iterable[Document] = (),
    earlier: Sequence[Edit] = (),
    gate: Gate = EVIDENCE,
) -> list[Proposal]:
    """The rule predictor's proposals for `doc`, whose last recorded edit is `edit`;
    `earlier` are the document's edits before it, oldest first; a place is proposed when it
    passes `gate`."""
    tree = doc.tree()
    syntax = Syntax(doc.text, tree) if tree is not None else None
    if syntax is not None:
        found = call_site_proposal(doc, syntax, edit, cursor, others)
        if found is not None:
            return [found]
    change = token_change(doc.text, edit)
    if change is None:
        return []
    repeated = any(edit_change(e) == (change.old, change.new) for e in list(earlier)[-LOOKBACK:])
    found = _best_occurrence(doc, syntax, change, doc.offset(cursor), (repeated, gate))
    return [] if found is None else [found]


def candidates(
    doc: Document, edit: Edit, cursor: Cursor, earlier: Sequence[Edit] = ()
) -> list[tuple[int, dict[str, float], float]]:
    """Every admissible place for the last edit's token change, in the order the predictor
    walks them: (offset, its learned-confidence features, its `evidence` confidence). The
    refit script (`benchmarks/next_edit_confidence.py`) fits and sets the threshold on
    these; empty where the predictor would not weigh places (no token change, a call site,
    a wrap waiting)."""
    tree = doc.tree()
    syntax = Syntax(doc.text, tree) if tree is not None else None
    if syntax is not None and call_site_proposal(doc, syntax, edit, cursor, []) is not None:
        return []
    change = token_change(doc.text, edit)
    if change is None:
        return []
    repeated = any(edit_change(e) == (change.old, change.new) for e in list(earlier)[-LOOKBACK:])
    out: list[tuple[int, dict[str, float], float]] = []
    _best_occurrence(doc, syntax, change, doc.offset(cursor), (repeated, Gate(-1e9, _COLLECT)), out)
    return out


#: A table that collects every admissible place (`candidates`) instead of choosing one.
_COLLECT = confidence.Table({}, 0.0, 0.5)


def _edited_place(syntax: Syntax | None, change: TokenChange) -> Place:
    edited = place_of(syntax, change.offset, change.offset + len(change.new))
    if syntax is not None and _opens_literal(change.old) != _opens_literal(change.new):
        # A string or comment deleted, or code turned into one or back (`"App"` -> `App`):
        # the tree shows the new form only, so either is allowed.
        edited = Place(None, edited.kind, edited.role, function=edited.function, frame=edited.frame)
    return edited


def _opens_literal(token: str) -> bool:
    """The token starts a string or a comment (`"x"`, `'x'`, `# x`, `// x`)."""
    return token.lstrip().startswith(("#", "//", "/*", "'", '"'))


def _fresh(syntax: Syntax, change: TokenChange, scope: tuple[int, int]) -> bool:
    """The new name appears nowhere else in `scope` outside strings and comments: the
    rename made a name, not a switch to an existing one."""
    start, end = change.offset, change.offset + len(change.new)
    lo, hi = scope
    for n, c in enumerate(occurrences(syntax.text[lo:hi], change.new)):
        c += lo
        if start <= c < end:
            continue
        if n >= _FRESH_CHECKS or not place_of(syntax, c, c + len(change.new)).literal:
            return False
    return True


def _context(
    doc: Document,
    syntax: Syntax | None,
    change: TokenChange,
    edited: Place,
    gate: tuple[bool, float],
    rename: bool,
) -> evidence.Context:
    text = doc.text
    start, end = change.offset, change.offset + len(change.new)
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    return evidence.Context(
        left=text[start - 1 : start] if start else "",
        right=text[end : end + 1],
        line=text[line_start:line_end],
        common=evidence.is_common(change.old) or _value(syntax, change, edited),
        rename=rename,
        repeated=gate[0],
        threshold=gate[1],
    )


def _value(syntax: Syntax | None, change: TokenChange, edited: Place) -> bool:
    """The changed token is a value rather than a name of this file: a whole string's
    content (a key, a path), or a name bound nowhere in the file (a builtin such as
    `float` or `None`). Equal values elsewhere are other data, as equal numbers are."""
    if syntax is None or edited.kind is None:
        return False
    if edited.literal:
        return True
    if not (change.old.isidentifier() and change.new.isidentifier()) or edited.role != "plain":
        return False
    # The edit renamed the binding itself: the old name is bound nowhere now.
    return not edited.binding and not _bound_in(syntax, (0, len(syntax.text)), change.old)


def _renamed(
    syntax: Syntax | None, change: TokenChange, edited: Place
) -> tuple[bool, tuple[int, int] | None]:
    """(the edit renamed a binding to a fresh name, the function the name lives in or None
    for the file). A rename, when the new name occurs nowhere else in code in the name's
    scope (the other references name nothing unless they change too) and the edit was
    - the binding itself (a parameter, an assignment target, a definition, an import);
    - a use of a local or parameter of the edit's function;
    - a use of a name the file defines or imports, renamed to a name found nowhere in it.
    A use renamed after its binding was (the new name is bound in the edit's function)
    is no fresh rename, but its other references are in that function too."""
    if syntax is None or edited.literal or not (change.old.isidentifier() and change.new.isidentifier()):
        return False, None
    whole = (0, len(syntax.text))
    function = edited.function if edited.role == "plain" else None
    if edited.binding:
        # An attribute (`self.x = ...`) is fresh in its class, a local in its function.
        scope = function or (edited.owner if edited.role == "member" else None) or whole
        return _fresh(syntax, change, scope), function
    if edited.role not in ("plain", "callee"):
        return False, None
    if function is not None:
        if _bound_in(syntax, function, change.new):
            return False, function
        if _bound_in(syntax, function, change.old):
            return _fresh(syntax, change, function), function
    return _fresh(syntax, change, whole) and _bound_in(syntax, whole, change.old), None


def _bound_in(syntax: Syntax, span: tuple[int, int], name: str) -> bool:
    """`name` is bound (a parameter, an assignment target...) somewhere in `span`; the
    first `_FRESH_CHECKS` occurrences are asked."""
    start, end = span
    for n, at in enumerate(occurrences(syntax.text[start:end], name)):
        if n >= _FRESH_CHECKS:
            return False
        if place_of(syntax, start + at, start + at + len(name)).binding:
            return True
    return False


def _best_occurrence(
    doc: Document,
    syntax: Syntax | None,
    change: TokenChange,
    at: int,
    gate: tuple[bool, Gate],
    collect: list[tuple[int, dict[str, float], float]] | None = None,
) -> Proposal | None:
    """`gate`: (an earlier edit made the same change, what a place must reach; a learned
    table there instead of the evidence threshold); `collect`: gather every admissible
    place there instead of choosing one (`candidates`)."""
    repeated, (threshold, table) = gate
    edited = _edited_place(syntax, change)
    rename, local = _renamed(syntax, change, edited)
    ctx = _context(doc, syntax, change, edited, (repeated, threshold), rename)
    sure = ctx.rename or ctx.repeated
    if not sure and _wraps(change):
        return None  # one place's own change until it repeats
    left_once = not sure and _left_once(doc.text, change)
    if left_once and table is None:
        # What the user deleted is left at one place only: that place, on any evidence.
        ctx = replace(ctx, threshold=0.0)
    scored = _scored(doc.text, ctx, change, local, skip_line=not sure)
    if sure:
        # The change is systematic: every admissible place wants it, so walk them in
        # order (the edit's function first, then after the cursor, then from the top).
        scope = edited.function or (0, len(doc.text))
        scored.sort(key=lambda r: (not scope[0] <= r.offset < scope[1], r.offset < at, r.offset))
    else:
        # Every confident place is as likely as the others: the next one after the
        # cursor, then from the top (file order), as the user reads on.
        scored.sort(key=lambda r: (r.offset < at, r.offset))
    if table is None:
        chosen = _first(syntax, ctx, change, edited, scored)
    else:
        request = _request(doc.text, syntax, change, edited, ctx, left_once)
        chosen = _first_learned(syntax, ctx, change, edited, scored, (table, request, collect))
    if chosen is None:
        return None
    return proposal(doc, chosen, chosen + len(change.old), change.new, "replace")


def _wraps(change: TokenChange) -> bool:
    """The edit wrapped the old text in a larger expression (`int` -> `Optional[int]`,
    `fetch` -> `await fetch`, `yield` -> `return (yield)`): more often that one place's own
    change (a parameter's type widened, one call awaited) than one to repeat, so it waits
    for a second matching edit."""
    return bool(change.old.strip()) and change.old in change.new and not change.new.isidentifier()


def _left_once(text: str, change: TokenChange) -> bool:
    """The edit deleted text (`, timeout`, a decorator) that is left at one place only:
    the pair of a change made twice (an argument dropped from both calls) more often than
    not, so the threshold does not hold it back."""
    if change.new.strip() or not change.old.strip():
        return False
    return len(list(islice(occurrences(text, change.old), 2))) == 1


class Scored(NamedTuple):
    """A candidate place before the tree is asked."""

    score: float  # the evidence it gets without the tree (`evidence.cheap`)
    offset: int
    neighbours: float  # the share of the two neighbouring characters matching the edit's
    similar_line: float  # its line's token similarity with the edited line
    lines_away: int  # its line less the edit's


def _scored(
    text: str,
    ctx: evidence.Context,
    change: TokenChange,
    local: tuple[int, int] | None,
    skip_line: bool,
) -> list[Scored]:
    """Every candidate place with what it shares with the edit without the tree; the
    edited line's other places only when the change is known to repeat."""
    edit_end = change.offset + len(change.new)
    line_start = text.rfind("\n", 0, change.offset) + 1
    line_end = text.find("\n", edit_end)
    line_end = len(text) if line_end < 0 else line_end
    # Where the new form contains the old (`fetch` -> `await fetch`), a candidate already
    # changed reads as the new form around it.
    inner = change.new.find(change.old)
    out: list[Scored] = []
    edit_line = text.count("\n", 0, change.offset)
    seen, line = 0, 0  # lines counted up to `seen`, once over the text
    for c in occurrences(text, change.old):
        end = c + len(change.old)
        if line_start <= c <= line_end and (skip_line or (end > change.offset and c < edit_end)):
            continue  # the edited line: the user just changed what they meant to there
        if inner >= 0 and text[c - inner : c - inner + len(change.new)] == change.new:
            continue  # already has the new form
        if local is not None and not local[0] <= c < local[1]:
            continue  # a renamed local's other uses are in its function only
        row_start = text.rfind("\n", 0, c) + 1
        row_end = text.find("\n", end)
        row = text[row_start : len(text) if row_end < 0 else row_end]
        left, right = text[c - 1 : c] if c else "", text[end : end + 1]
        neighbours = ((left == ctx.left) + (right == ctx.right)) / 2
        similar = evidence.similarity(ctx.line, row)
        line += text.count("\n", seen, c)
        seen = c
        out.append(
            Scored(evidence.cheap_of(ctx, neighbours, similar), c, neighbours, similar, line - edit_line)
        )
        if len(out) >= MAX_CANDIDATES:
            break
    return out


def _first(
    syntax: Syntax | None,
    ctx: evidence.Context,
    change: TokenChange,
    edited: Place,
    scored: list[Scored],
) -> int | None:
    """The first admissible place at or above the threshold, in the given order."""
    for score, c, *_ in scored:
        if evidence.upper_bound(score) < ctx.threshold:
            continue
        candidate = place_of(syntax, c, c + len(change.old))
        if _admissible(change, edited, candidate, ctx.repeated):
            if evidence.confidence(ctx, score, edited, candidate) >= ctx.threshold:
                return c
    return None


def _request(
    text: str,
    syntax: Syntax | None,
    change: TokenChange,
    edited: Place,
    ctx: evidence.Context,
    left_once: bool,
) -> dict[str, float]:
    """The edit's learned-confidence features (`confidence.py`)."""
    count = sum(1 for _ in islice(occurrences(text, change.old), MAX_CANDIDATES))
    start, end = change.offset, change.offset + len(change.new)
    new_exists = bool(change.new.strip()) and any(
        not start <= c < end for c in islice(occurrences(text, change.new), 2)
    )
    return confidence.request_features(
        confidence.EditFacts(
            rename=ctx.rename,
            left_once=left_once,
            common=evidence.is_common(change.old),
            value=_value(syntax, change, edited),
            old=change.old,
            new=change.new,
            edited=edited,
            occurrences=count,
            new_exists=new_exists,
        )
    )


def _first_learned(
    syntax: Syntax | None,
    ctx: evidence.Context,
    change: TokenChange,
    edited: Place,
    scored: list[Scored],
    learned: tuple[confidence.Table, dict[str, float], list[tuple[int, dict[str, float], float]] | None],
) -> int | None:
    """The first admissible place whose learned probability reaches the table's threshold,
    in the given order; places whose features before the tree cannot reach it are never
    looked up; after a rename or a second matching edit every admissible place passes
    (strong evidence: the table weighs the weak). `learned`: (the table, the edit's
    features, `collect`). With a `collect` list, every admissible place goes there instead
    and none is chosen."""
    table, request, collect = learned
    sure = ctx.rename or ctx.repeated
    bar = table.threshold_logit()
    bound = table.tree_bound()
    for r in scored:
        values = confidence.place_features(request, r.neighbours, r.similar_line, r.lines_away)
        if collect is None and not sure and table.cheap_logit(values) + bound < bar:
            continue
        candidate = place_of(syntax, r.offset, r.offset + len(change.old))
        if not _admissible(change, edited, candidate, ctx.repeated):
            continue
        values.update(confidence.tree_features(edited, candidate))
        if collect is not None:
            collect.append((r.offset, values, evidence.confidence(ctx, r.score, edited, candidate)))
        elif sure or confidence.logit(table, values) >= bar:
            return r.offset  # a rename or a second matching edit: every admissible place
    return None


def _admissible(change: TokenChange, edited: Place, candidate: Place, repeated: bool = False) -> bool:
    """The hard rules: a place where the change cannot mean the same thing is never proposed.
    `repeated`: an earlier edit made the same change."""
    if edited.literal is not None and candidate.literal is not None and edited.literal != candidate.literal:
        return False
    renamed = change.old.isidentifier() and change.new.isidentifier()
    if renamed and edited.kind is not None:
        if candidate.kind != edited.kind:
            return False
        # A renamed function's calls are its uses; a renamed callee wants callees only.
        plain_or_call = edited.role == "plain" and candidate.role == "callee"
        if candidate.role != edited.role and not plain_or_call:
            return False
        if candidate.binding and not edited.binding and not repeated:
            # One use renamed may point that use at another name, imported or defined
            # elsewhere, while the binding serves the other uses: it follows once the
            # change repeats.
            return False
    if edited.role == "member" and (candidate.receiver != edited.receiver or candidate.owner != edited.owner):
        return False
    if not renamed:
        # An expression rewritten inside a call's arguments (`dict()` -> `{}`,
        # `sys.stderr` -> `stderr`) means the same whichever call holds it.
        return True
    # A name switched there is one argument of that callee: calls of the same callee only.
    return edited.callee is None or candidate.callee is None or candidate.callee == edited.callee
