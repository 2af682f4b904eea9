"""Mine next-edit cases from real git history: repeated changes, and single-edit controls.

For each commit (no merges) of the given repositories' Python files, every hunk whose
removed and added lines pair up one to one gives line changes; each line change is cut to
its smallest differing span, widened to whole identifiers (`old` -> `new` at a column).

- A **repeated** case: the same span change on two or more lines of one file in one
  commit. The benchmark replays the first place as keystrokes and checks whether the next
  edit proposed is one of the others.
- A **control** (`"control": true`): a span change made on one line only, while the old
  span (with identifier boundaries) stays on at least one line the commit did not touch.
  The developer changed one place and left the others: any proposal there is a false
  alarm, unless it leaves a row as the commit did (`rows`: the commit's paired changes in
  that file, old row -> new row).

    python -m benchmarks.next_edit_corpus /work/.mirror/psf+requests/repo:psf/requests ...

writes `benchmarks/data/next_edit_cases.json.gz` (provenance: repo, commit, path; the file
before the commit; the places). Git directories come from any clone (bare is fine); the
corpus is committed, so the benchmark runs offline. The order of the repeated cases does
not depend on the controls: adding controls leaves the earlier cases as they were.

The corpus is three files, so that adding repositories never changes a case already mined:
`next_edit_cases.json.gz` holds the tuning and validation halves (psf/requests,
pallets/click, pallets/flask; encode/httpx, python-attrs/attrs, pallets/werkzeug), and
`next_edit_cases_fresh.json.gz` the fresh half, mined later from repositories nothing was
tuned or looked at on (pallets/jinja, marshmallow-code/marshmallow, encode/starlette):

    python -m benchmarks.next_edit_corpus --out benchmarks/data/next_edit_cases_fresh.json.gz \
        /work/.mirror/pallets+jinja/repo:pallets/jinja ...

`next_edit_cases_tune2.json.gz` adds four repositories to the tuning half
(pytest-dev/pluggy, Textualize/rich, python-poetry/tomlkit, hynek/structlog; issue 38: the
first three tuning repositories had too few false alarms of too few kinds to tune on):

    python -m benchmarks.next_edit_corpus --out benchmarks/data/next_edit_cases_tune2.json.gz \
        /work/.mirror/pytest-dev+pluggy/repo:pytest-dev/pluggy \
        /work/.mirror/Textualize+rich/repo:Textualize/rich \
        /work/.mirror/python-poetry+tomlkit/repo:python-poetry/tomlkit \
        /work/.mirror/hynek+structlog/repo:hynek/structlog

The benchmark reads every file in `CORPORA`, in order (so earlier cases keep their index).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.common import arg_parser

OUT = Path(__file__).resolve().parent / "data" / "next_edit_cases.json.gz"
#: The fresh half's cases (mined after the rules were tuned; see the docstring).
FRESH_OUT = OUT.with_name("next_edit_cases_fresh.json.gz")
#: More tuning repositories (mined later, so that the files above stay unchanged).
TUNE2_OUT = OUT.with_name("next_edit_cases_tune2.json.gz")
#: Every corpus file the benchmark replays, in order.
CORPORA = (OUT, FRESH_OUT, TUNE2_OUT)
MAX_FILE_CHARS = 30_000
#: Cases kept from one commit (a sweeping commit must not make up the corpus).
PER_COMMIT = 3
#: Controls kept from one commit: one, so that no single commit's style decides the rate.
CONTROLS_PER_COMMIT = 1
#: A control's old span is at most this long (a token or two, like the repeated cases).
MAX_CONTROL_SPAN = 40
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _ident(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def span_change(old: str, new: str) -> tuple[int, str, str] | None:
    """(column, old span, new span): the smallest differing span, widened to identifiers."""
    if old == new:
        return None
    n = min(len(old), len(new))
    a = 0
    while a < n and old[a] == new[a]:
        a += 1
    b = 0
    while b < n - a and old[len(old) - 1 - b] == new[len(new) - 1 - b]:
        b += 1
    oe, ne = len(old) - b, len(new) - b
    while a > 0 and _ident(old[a - 1]) and (_ident(old[a : a + 1] or " ") or _ident(new[a : a + 1] or " ")):
        a -= 1
    while (
        oe < len(old)
        and _ident(old[oe])
        and (_ident(old[oe - 1 : oe] or " ") or _ident(new[ne - 1 : ne] or " "))
    ):
        oe, ne = oe + 1, ne + 1
    o, w = old[a:oe], new[a:ne]
    if not o.strip() or o.strip() == w.strip():
        return None
    return a, o, w


def _git(git_dir: str, *args: str) -> str:
    out = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, check=False)
    return out.stdout.decode("utf-8", "replace")


def file_changes(
    diff: str, touched: dict[str, set[int]] | None = None
) -> dict[str, list[tuple[int, str, str]]]:
    """path -> [(0-based line in the old file, old line, new line)] from a -U0 diff.
    `touched`, when given, receives every removed line of each path (paired or not)."""
    out: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    path = ""
    minus: list[str] = []
    plus: list[str] = []
    start = 0

    def flush() -> None:
        if path and touched is not None:
            touched.setdefault(path, set()).update(range(start, start + len(minus)))
        if path and minus and len(minus) == len(plus):
            for i, (o, n) in enumerate(zip(minus, plus, strict=True)):
                out[path].append((start + i, o, n))
        minus.clear()
        plus.clear()

    for line in diff.split("\n"):
        if line.startswith("diff --git"):
            flush()
            path = ""
        elif line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
        elif line.startswith("@@"):
            flush()
            m = _HUNK.match(line)
            start = int(m.group(1)) - 1 if m else 0
        elif line.startswith("-") and not line.startswith("---"):
            minus.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            plus.append(line[1:])
    flush()
    return out


def _groups(changes: list[tuple[int, str, str]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row, old, new in changes:
        span = span_change(old, new)
        if span is not None:
            col, o, w = span
            groups[(o, w)].append({"line": row, "col": col, "old": o, "new": w})
    return groups


def _stays_elsewhere(lines: list[str], old: str, skip: set[int]) -> bool:
    """`old` (identifier boundaries at identifier ends) on a line outside `skip`."""
    pattern = (
        (r"(?<![\w])" if _ident(old[0]) else "") + re.escape(old) + (r"(?![\w])" if _ident(old[-1]) else "")
    )
    rx = re.compile(pattern)
    return any(i not in skip and rx.search(line) for i, line in enumerate(lines))


def controls_of_commit(git_dir: str, repo: str, sha: str) -> list[dict[str, Any]]:
    """Single edits: a span changed on one line only, its old text left on untouched lines."""
    diff = _git(git_dir, "show", "--no-color", "--format=", "--unified=0", "--no-renames", sha, "--", "*.py")
    touched: dict[str, set[int]] = {}
    found = []
    for path, changes in file_changes(diff, touched).items():
        groups = _groups(changes)
        olds = defaultdict(int)
        for (o, _), places in groups.items():
            olds[o] += len(places)
        singles = [
            places[0]
            for (o, w), places in groups.items()
            if len(places) == 1 and olds[o] == 1 and len(o) <= MAX_CONTROL_SPAN and "\t" not in o
        ]
        if not singles:
            continue
        before = _git(git_dir, "show", f"{sha}^:{path}")
        if not before or len(before) > MAX_FILE_CHARS:
            continue
        lines = before.split("\n")
        rows = [[row, new] for row, old, new in changes if row < len(lines) and lines[row] == old]
        for p in singles:
            line = lines[p["line"]] if p["line"] < len(lines) else ""
            if line[p["col"] : p["col"] + len(p["old"])] != p["old"]:
                continue
            if _stays_elsewhere(lines, p["old"], touched.get(path, set())):
                found.append(
                    {
                        "repo": repo,
                        "commit": sha,
                        "path": path,
                        "before": before,
                        "places": [p],
                        "control": True,
                        "rows": rows,
                    }
                )
    return found


def cases_of_commit(git_dir: str, repo: str, sha: str) -> list[dict[str, Any]]:
    diff = _git(git_dir, "show", "--no-color", "--format=", "--unified=0", "--no-renames", sha, "--", "*.py")
    found = []
    for path, changes in file_changes(diff).items():
        groups = _groups(changes)
        repeated = [places for places in groups.values() if len({p["line"] for p in places}) >= 2]
        if not repeated:
            continue
        before = _git(git_dir, "show", f"{sha}^:{path}")
        if not before or len(before) > MAX_FILE_CHARS:
            continue
        lines = before.split("\n")
        for places in repeated:
            places = sorted(places, key=lambda p: (p["line"], p["col"]))
            ok = all(
                p["line"] < len(lines) and lines[p["line"]][p["col"] : p["col"] + len(p["old"])] == p["old"]
                for p in places
            )
            if ok:
                found.append({"repo": repo, "commit": sha, "path": path, "before": before, "places": places})
    return found


def mine(git_dir: str, repo: str, commits: int, per_repo: int) -> list[dict[str, Any]]:
    shas = _git(git_dir, "log", "--no-merges", "--format=%H", "-n", str(commits), "--", "*.py").split()
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for sha in shas:
        for case in cases_of_commit(git_dir, repo, sha)[:PER_COMMIT]:
            key = (case["path"], case["places"][0]["old"], case["places"][0]["new"])
            if key in seen:
                continue
            seen.add(key)
            out.append(case)
        if len(out) >= per_repo:
            break
    return out[:per_repo]


def mine_controls(git_dir: str, repo: str, commits: int, per_repo: int) -> list[dict[str, Any]]:
    shas = _git(git_dir, "log", "--no-merges", "--format=%H", "-n", str(commits), "--", "*.py").split()
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for sha in shas:
        for case in controls_of_commit(git_dir, repo, sha)[:CONTROLS_PER_COMMIT]:
            key = (case["path"], case["places"][0]["old"], case["places"][0]["new"])
            if key not in seen:
                seen.add(key)
                out.append(case)
        if len(out) >= per_repo:
            break
    return out[:per_repo]


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser(__doc__)
    ap.add_argument("sources", nargs="+", help="GIT_DIR:owner/name")
    ap.add_argument("--commits", type=int, default=2000, help="commits scanned per repository")
    ap.add_argument("--per-repo", type=int, default=40, help="repeated cases kept per repository")
    ap.add_argument("--controls", type=int, default=20, help="single-edit controls kept per repository")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    cases: list[dict[str, Any]] = []
    for source in args.sources:
        git_dir, _, repo = source.rpartition(":")
        got = mine(git_dir, repo, args.commits, args.per_repo)
        controls = mine_controls(git_dir, repo, args.commits, args.controls)
        head = _git(git_dir, "rev-parse", "HEAD").strip()
        print(f"{repo} (HEAD {head[:12]}): {len(got)} cases, {len(controls)} controls", file=sys.stderr)
        cases += got + controls
    args.out.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"cases": cases}, separators=(",", ":"), sort_keys=True).encode()
    args.out.write_bytes(gzip.compress(data, mtime=0))
    print(f"{len(cases)} cases, {args.out.stat().st_size} bytes -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
