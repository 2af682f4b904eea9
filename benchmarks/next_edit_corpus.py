"""Mine next-edit cases from real git history: one change repeated at two or more places.

For each commit (no merges) of the given repositories' Python files, every hunk whose
removed and added lines pair up one to one gives line changes; each line change is cut to
its smallest differing span, widened to whole identifiers (`old` -> `new` at a column).
When the same span change appears on two or more lines of one file in one commit, that
file before the commit and those places make a case: the benchmark replays the first
place as keystrokes and checks whether the next edit proposed is one of the others.

    python benchmarks/next_edit_corpus.py /work/.mirror/psf+requests/repo:psf/requests ...

writes `benchmarks/data/next_edit_cases.json.gz` (provenance: repo, commit, path; the file
before the commit; the places). Git directories come from any clone (bare is fine); the
corpus is committed, so the benchmark runs offline.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "next_edit_cases.json.gz"
MAX_FILE_CHARS = 30_000
#: Cases kept from one commit (a sweeping commit must not make up the corpus).
PER_COMMIT = 3
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


def file_changes(diff: str) -> dict[str, list[tuple[int, str, str]]]:
    """path -> [(0-based line in the old file, old line, new line)] from a -U0 diff."""
    out: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    path = ""
    minus: list[str] = []
    plus: list[str] = []
    start = 0

    def flush() -> None:
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


def cases_of_commit(git_dir: str, repo: str, sha: str) -> list[dict[str, Any]]:
    diff = _git(git_dir, "show", "--no-color", "--format=", "--unified=0", "--no-renames", sha, "--", "*.py")
    found = []
    for path, changes in file_changes(diff).items():
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for row, old, new in changes:
            span = span_change(old, new)
            if span is not None:
                col, o, w = span
                groups[(o, w)].append({"line": row, "col": col, "old": o, "new": w})
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="+", help="GIT_DIR:owner/name")
    ap.add_argument("--commits", type=int, default=2000, help="commits scanned per repository")
    ap.add_argument("--per-repo", type=int, default=40, help="cases kept per repository")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    cases: list[dict[str, Any]] = []
    for source in args.sources:
        git_dir, _, repo = source.rpartition(":")
        got = mine(git_dir, repo, args.commits, args.per_repo)
        head = _git(git_dir, "rev-parse", "HEAD").strip()
        print(f"{repo} (HEAD {head[:12]}): {len(got)} cases", file=sys.stderr)
        cases += got
    args.out.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"cases": cases}, separators=(",", ":"), sort_keys=True).encode()
    args.out.write_bytes(gzip.compress(data, mtime=0))
    print(f"{len(cases)} cases, {args.out.stat().st_size} bytes -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
