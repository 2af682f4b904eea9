"""Model-free quality of the context: identifier recall of a deleted line.

On code no one here wrote (packages of the Python standard library), for many seeded
positions: blank out one line (keeping its indentation, the cursor after it), build the
context at a fixed character budget, and measure the fraction of the deleted line's
identifiers that appear anywhere in what would be sent. Printed next to two naive
windows of the same size (prefix only; 75 % prefix / 25 % suffix) and the whole-file
oracle, without and with cross-file context (the other files of the same package as open
documents).

    .venv/bin/python benchmarks/context_recall.py [--positions 400] [--budget 4000]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sysconfig
import time

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.crossfile import identifiers
from lsp_assist.context.symbols import parse_text
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext

PACKAGES = (
    "json",
    "email",
    "http",
    "asyncio",
    "logging",
    "concurrent/futures",
    "importlib",
    "xml/etree",
    "urllib",
    "unittest",
    "multiprocessing",
    "sqlite3",
    "tomllib",
    "zoneinfo",
    "wsgiref",
    "html",
    "dbm",
    "curses",
)


def load_packages(lib: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for pkg in PACKAGES:
        root = os.path.join(lib, pkg)
        if not os.path.isdir(root):
            continue
        files: dict[str, str] = {}
        for name in sorted(os.listdir(root)):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    files[path] = f.read()
        if len(files) >= 2:
            out[pkg] = files
    return out


def prose_rows(text: str) -> set[int]:
    """Rows inside strings that span lines (docstrings): prose, not code to complete."""
    parsed = parse_text(text, "python")
    if parsed is None:
        return set()
    rows: set[int] = set()
    stack = [parsed[0].root_node]
    while stack:
        node = stack.pop()
        if node.type == "string":
            if node.end_point.row > node.start_point.row:
                rows.update(range(node.start_point.row, node.end_point.row + 1))
            continue
        stack.extend(node.children)
    return rows


def recall(wanted: set[str], text: str) -> float:
    return len(wanted & identifiers(text)) / len(wanted)


def prompt_text(ctx: PromptContext) -> str:
    return "\n".join([ctx.prefix, ctx.suffix, *(s.text for s in ctx.snippets)])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=400)
    ap.add_argument("--budget", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    lib = sysconfig.get_paths()["stdlib"]
    packages = load_packages(lib)
    rng = random.Random(args.seed)
    candidates: list[tuple[str, str, int]] = []
    for pkg, files in packages.items():
        for path, text in files.items():
            prose = prose_rows(text)
            for i, line in enumerate(text.split("\n")):
                s = line.strip()
                if s and i not in prose and not s.startswith("#") and len(identifiers(line)) >= 2:
                    candidates.append((pkg, path, i))
    picks = rng.sample(candidates, min(args.positions, len(candidates)))
    picks.sort()
    others_by_pkg = {
        pkg: [Document("file://" + p, "python", 1, t, p) for p, t in files.items()]
        for pkg, files in packages.items()
    }
    engine = ContextEngine()
    b = args.budget
    scores: dict[str, list[float]] = {
        k: []
        for k in (
            "prefix-only window",
            "75/25 prefix/suffix window",
            "context engine",
            "whole-file oracle",
            "context engine + cross-file",
            "oracle: whole package",
        )
    }
    sizes: list[int] = []
    sizes_x: list[int] = []
    build_ms: list[float] = []
    build_x_ms: list[float] = []
    t_start = time.perf_counter()
    for pkg, path, row in picks:
        lines = packages[pkg][path].split("\n")
        deleted = lines[row]
        indent = deleted[: len(deleted) - len(deleted.lstrip())]
        wanted = identifiers(deleted)
        lines[row] = indent
        text = "\n".join(lines)
        offset = sum(len(x) + 1 for x in lines[:row]) + len(indent)
        before, after = text[:offset], text[offset:]
        scores["prefix-only window"].append(recall(wanted, before[-b:]))
        scores["75/25 prefix/suffix window"].append(
            recall(wanted, before[-(b * 3 // 4) :] + "\n" + after[: b - b * 3 // 4])
        )
        scores["whole-file oracle"].append(recall(wanted, text))
        cursor = Cursor(row, len(indent))
        t0 = time.perf_counter()
        ctx = engine.build_from_text(text, "python", path, cursor, b, crossfile=False)
        build_ms.append((time.perf_counter() - t0) * 1000)
        assert ctx.size <= b, (ctx.size, b)
        sizes.append(ctx.size)
        scores["context engine"].append(recall(wanted, prompt_text(ctx)))
        others = [d for d in others_by_pkg[pkg] if d.path != path]
        t0 = time.perf_counter()
        ctx_x = engine.build_from_text(
            text, "python", path, cursor, b, others=others, deadline_ms=50.0, crossfile=True
        )
        build_x_ms.append((time.perf_counter() - t0) * 1000)
        assert ctx_x.size <= b, (ctx_x.size, b)
        sizes_x.append(ctx_x.size)
        scores["context engine + cross-file"].append(recall(wanted, prompt_text(ctx_x)))
        scores["oracle: whole package"].append(recall(wanted, "\n".join([text, *(d.text for d in others)])))
    elapsed = time.perf_counter() - t_start
    print(
        f"{len(picks)} deleted code lines (not docstrings) from {len(packages)} stdlib packages "
        f"({sum(len(f) for f in packages.values())} files), seed {args.seed}, budget {b} chars"
    )
    print(f"{'context':<30} {'identifier recall':>18}")
    for name, xs in scores.items():
        print(f"{name:<30} {statistics.mean(xs):>17.1%}")
    print(
        f"engine prompt size: mean {statistics.mean(sizes):.0f} chars (no cross-file), "
        f"{statistics.mean(sizes_x):.0f} (cross-file); baselines use the full {b}"
    )
    print(
        f"build time (incl. full parse of the file): median {statistics.median(build_ms):.1f} ms; "
        f"with cross-file {statistics.median(build_x_ms):.1f} ms; total run {elapsed:.1f} s"
    )


if __name__ == "__main__":
    main()
