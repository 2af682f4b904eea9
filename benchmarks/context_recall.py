"""Model-free quality of the context: identifier recall of a deleted line, in-file and cross-file.

On code no one here wrote (packages of the Python standard library, a real package
downloaded from PyPI by this script, and a package of the JDK's own Java sources), for
seeded positions: blank out one line (keeping
its indentation, the cursor after it), build the context at a fixed character budget,
and measure the fraction of the deleted line's identifiers that appear anywhere in what
would be sent.

Two strata per corpus:

- **random**: any code line (not docstrings or comments). In-file recall: the engine
  without other files (today's local context) and with the package's other files both
  open as tabs and in the workspace index.
- **cross-file**: lines that use a name defined in another file of the same package and
  nowhere else in the current file (in its code, not inside a string or comment;
  builtins and methods of builtin types left out). Scored on those names (cross-file recall) with the
  defining file (a) open as a tab (plus two other sibling files, no index) and (b) only in
  the workspace index (a real `WorkspaceIndex` of the package directory, no tabs).

Each row is printed next to the same-size prefix-only and 75/25 windows and the
whole-package oracle. Each cross-file name that missed the prompt is counted by why: its
defining file was not chosen, chosen but not ranked before the deadline, chosen with
nothing of it kept, or kept with that name left out (the budget or the ranking). Build
times are for a document whose tree is already up to date (the typing path: the server
parses incrementally on didChange).

    .venv/bin/python benchmarks/context_recall.py [--positions 150] [--budget 4000]
        [--corpus stdlib --corpus pypi:rich==13.9.4 --corpus jdk:java/util/concurrent]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.crossfile import identifiers
from lsp_assist.context.outline import outline_from_text
from lsp_assist.context.symbols import SymbolIndex, parse_text
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext
from lsp_assist.workspace.index import WorkspaceIndex, build_symbol_index

STDLIB_PACKAGES = (
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
CORPUS_DIR = Path(__file__).resolve().parent / ".corpora"  # gitignored
# Names every Python file can use without another file (builtins and the methods of
# builtin types: `", ".join` is not a cross-file need even if a sibling defines `join`).
BUILTIN_NAMES = frozenset(
    n
    for obj in (__builtins__, str, bytes, list, dict, set, tuple, int, float, object, BaseException)
    for n in (obj.keys() if isinstance(obj, dict) else dir(obj))
)


def _read_dir(root: str, ext: str = ".py") -> dict[str, str]:
    files: dict[str, str] = {}
    for name in sorted(os.listdir(root)):
        if name.endswith(ext):
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                files[path] = f.read()
    return files


def load_stdlib() -> dict[str, dict[str, str]]:
    lib = sysconfig.get_paths()["stdlib"]
    out: dict[str, dict[str, str]] = {}
    for pkg in STDLIB_PACKAGES:
        root = os.path.join(lib, pkg)
        if os.path.isdir(root):
            files = _read_dir(root)
            if len(files) >= 2:
                out[pkg] = files
    return out


def load_pypi(spec: str) -> dict[str, dict[str, str]]:
    """Download one wheel with pip (no dependencies), unpack it here, one package per directory."""
    target = CORPUS_DIR / spec.replace("==", "-")
    if not target.is_dir():
        wheels = CORPUS_DIR / "wheels"
        wheels.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "-q",
                "-d",
                str(wheels),
                spec,
            ],
            check=True,
        )
        name = spec.split("==")[0].replace("-", "_").lower()
        wheel = next(p for p in sorted(wheels.glob("*.whl")) if p.name.lower().startswith(name))
        with zipfile.ZipFile(wheel) as z:
            z.extractall(target)
    out: dict[str, dict[str, str]] = {}
    for dirpath, dirnames, _ in os.walk(target):
        dirnames[:] = sorted(d for d in dirnames if not d.endswith(".dist-info") and d != "__pycache__")
        files = _read_dir(dirpath)
        if len(files) >= 2:
            out[os.path.relpath(dirpath, target)] = files
    return out


_STRINGS = re.compile(r"""[rbuRBUfF]{0,2}(\"\"\"|'''|"|')(?:\\.|(?!\1).)*\1""")


def code_identifiers(line: str, language: str = "python") -> set[str]:
    """Identifiers of a line outside its string literals and comment (names it uses)."""
    code = _STRINGS.sub(" ", line)
    return identifiers(code.split(COMMENT.get(language, "//"), 1)[0])


def load_jdk(package: str) -> dict[str, dict[str, str]]:
    """One package of the JDK's own sources (`lib/src.zip` of an installed JDK)."""
    zips = sorted(Path("/usr/lib/jvm").glob("*/lib/src.zip"))
    if not zips:
        raise SystemExit("no JDK src.zip under /usr/lib/jvm (install a JDK with sources)")
    target = CORPUS_DIR / ("jdk-" + package.replace("/", "."))
    if not target.is_dir():
        prefix = f"java.base/{package}/"
        with zipfile.ZipFile(zips[0]) as z:
            for name in z.namelist():
                if name.startswith(prefix) and name.endswith(".java") and "/" not in name[len(prefix) :]:
                    z.extract(name, target)
    root = target / "java.base" / package
    return {package: _read_dir(str(root), ".java")}


LANG_OF_EXT = {".py": "python", ".java": "java"}
COMMENT = {"python": "#", "java": "//"}
IMPORT_PREFIXES = ("import ", "from ", "package ")
# java.lang is visible everywhere: its common names are not cross-file needs either.
JAVA_LANG = frozenset(
    """String Object Integer Long Boolean Character Math System Thread Runnable Override
    Exception RuntimeException IllegalArgumentException IllegalStateException
    NullPointerException UnsupportedOperationException Class Iterable Comparable
    equals hashCode toString getClass length charAt valueOf compareTo clone wait notify
    notifyAll size get set add put remove contains isEmpty iterator next hasNext""".split()
)


def prose_rows(text: str, language: str = "python") -> set[int]:
    """Rows inside strings or comments that span lines (docstrings, javadoc): prose."""
    parsed = parse_text(text, language)
    if parsed is None:
        return set()
    rows: set[int] = set()
    stack = [parsed[0].root_node]
    while stack:
        node = stack.pop()
        if node.type == "string" or "comment" in node.type:
            if node.end_point.row > node.start_point.row:
                rows.update(range(node.start_point.row, node.end_point.row + 1))
            continue
        stack.extend(node.children)
    return rows


def recall(wanted: set[str], text: str) -> float:
    return len(wanted & identifiers(text)) / len(wanted)


def prompt_text(ctx: PromptContext) -> str:
    return "\n".join([ctx.prefix, ctx.suffix, *(s.text for s in ctx.snippets)])


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))] if s else 0.0


@dataclass
class Position:
    pkg: str
    path: str
    row: int
    wanted: set[str]  # identifiers scored
    defining: list[str] = field(default_factory=list)  # other files defining the wanted names


@dataclass
class Corpus:
    name: str
    packages: dict[str, dict[str, str]]
    language: str = "python"
    defined: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)  # pkg -> path -> names

    def __post_init__(self) -> None:
        for pkg, files in self.packages.items():
            self.defined[pkg] = {p: outline_from_text(t, self.language, p).names() for p, t in files.items()}


def pick_positions(corpus: Corpus, n: int, rng: random.Random) -> tuple[list[Position], list[Position]]:
    randoms: list[Position] = []
    crosses: list[Position] = []
    for pkg, files in corpus.packages.items():
        for path, text in files.items():
            prose = prose_rows(text, corpus.language)
            ambient = JAVA_LANG if corpus.language == "java" else BUILTIN_NAMES
            lines = text.split("\n")
            per_line = [identifiers(x) for x in lines]
            counts: dict[str, int] = {}
            for ids in per_line:
                for t in ids:
                    counts[t] = counts.get(t, 0) + 1
            own = corpus.defined[pkg][path]
            others = {p: names for p, names in corpus.defined[pkg].items() if p != path}
            for i, line in enumerate(lines):
                s = line.strip()
                if not s or i in prose or s.startswith("#") or len(per_line[i]) < 2:
                    continue
                randoms.append(Position(pkg, path, i, per_line[i]))
                if s.startswith(IMPORT_PREFIXES) or s.startswith(("/*", "*", "//")):
                    continue  # an import line names its module: a different question
                cross = {
                    t
                    for t in code_identifiers(line, corpus.language)
                    if counts[t] == 1 and t not in own and t not in ambient
                }
                defining = sorted(p for p, names in others.items() if cross & names)
                cross = {t for t in cross if any(t in others[p] for p in defining)}
                if cross and defining:
                    crosses.append(Position(pkg, path, i, cross, defining))
    return (
        sorted(rng.sample(randoms, min(n, len(randoms))), key=lambda p: (p.pkg, p.path, p.row)),
        sorted(rng.sample(crosses, min(n, len(crosses))), key=lambda p: (p.pkg, p.path, p.row)),
    )


def blank(text: str, row: int) -> tuple[str, Cursor, str, str]:
    lines = text.split("\n")
    deleted = lines[row]
    indent = deleted[: len(deleted) - len(deleted.lstrip())]
    lines[row] = indent
    new = "\n".join(lines)
    offset = sum(len(x) + 1 for x in lines[:row]) + len(indent)
    return new, Cursor(row, len(indent)), new[:offset], new[offset:]


def package_index(corpus: Corpus, pkg: str, cache: dict[str, SymbolIndex]) -> SymbolIndex:
    """The workspace index of one package directory, built by the real indexer."""
    got = cache.get(pkg)
    if got is None:
        root = os.path.dirname(next(iter(corpus.packages[pkg])))
        idx = WorkspaceIndex(root, None, max_files=5000)
        idx.refresh()
        # Only this directory's files: subpackages are their own packages here.
        idx.records = {p: r for p, r in idx.records.items() if os.path.dirname(p) == root}
        got = cache[pkg] = build_symbol_index([idx])
    return got


def run_corpus(corpus: Corpus, n: int, b: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    randoms, crosses = pick_positions(corpus, n, rng)
    docs = {
        pkg: {p: Document("file://" + p, corpus.language, 1, t, p) for p, t in files.items()}
        for pkg, files in corpus.packages.items()
    }
    indexes: dict[str, SymbolIndex] = {}
    misses: dict[str, dict[str, int]] = {}
    scores: dict[str, list[float]] = {}
    sizes: dict[str, list[int]] = {}
    times: dict[str, list[float]] = {}

    def add(key: str, v: float) -> None:
        scores.setdefault(key, []).append(v)

    def build(
        key: str, engine: ContextEngine, pos: Position, text: str, cursor: Cursor, others: list[Document]
    ) -> PromptContext:
        doc = Document("file://" + pos.path, corpus.language, 2, text, pos.path)
        doc.tree()  # the typing path: the tree is current when the request arrives
        for o in others:
            engine.index_document(o)  # as didOpen does: tabs are outlined when opened
        t0 = time.perf_counter()
        ctx = engine.build(doc, cursor, b, others=others, deadline_ms=15.0)
        times.setdefault(key, []).append((time.perf_counter() - t0) * 1000)
        assert ctx.size <= b, (ctx.size, b)
        sizes.setdefault(key, []).append(ctx.size)
        return ctx

    local = ContextEngine()
    for pos in randoms:
        text, cursor, before, after = blank(corpus.packages[pos.pkg][pos.path], pos.row)
        siblings = [d for p, d in docs[pos.pkg].items() if p != pos.path]
        add("random: prefix-only window", recall(pos.wanted, before[-b:]))
        add(
            "random: 75/25 window",
            recall(pos.wanted, before[-(b * 3 // 4) :] + "\n" + after[: b - b * 3 // 4]),
        )
        ctx = build("random: local only", local, pos, text, cursor, [])
        add("random: engine, local only (today's in-file)", recall(pos.wanted, prompt_text(ctx)))
        full = ContextEngine(symbol_index=_copy(package_index(corpus, pos.pkg, indexes)))
        ctx = build("random: cross-file", full, pos, text, cursor, _tabs(siblings, [], rng, 3))
        add("random: engine + 3 tabs + index", recall(pos.wanted, prompt_text(ctx)))
        add(
            "random: oracle, whole package",
            recall(pos.wanted, "\n".join([text, *(d.text for d in siblings)])),
        )
    for pos in crosses:
        text, cursor, before, after = blank(corpus.packages[pos.pkg][pos.path], pos.row)
        siblings = [d for p, d in docs[pos.pkg].items() if p != pos.path]
        add("cross: prefix-only window", recall(pos.wanted, before[-b:]))
        add(
            "cross: 75/25 window",
            recall(pos.wanted, before[-(b * 3 // 4) :] + "\n" + after[: b - b * 3 // 4]),
        )
        ctx = build("cross: local only", local, pos, text, cursor, [])
        add("cross: engine, local only", recall(pos.wanted, prompt_text(ctx)))
        tabs = _tabs(siblings, pos.defining, rng, 3)
        eng = ContextEngine()
        ctx = build("cross: (a) tab", eng, pos, text, cursor, tabs)
        add("cross: (a) defining file open as a tab", recall(pos.wanted, prompt_text(ctx)))
        _why_missed(misses.setdefault("(a) tab", {}), corpus, pos, ctx, eng)
        eng = ContextEngine(symbol_index=_copy(package_index(corpus, pos.pkg, indexes)))
        ctx = build("cross: (b) index", eng, pos, text, cursor, [])
        add("cross: (b) only in the workspace index", recall(pos.wanted, prompt_text(ctx)))
        _why_missed(misses.setdefault("(b) index", {}), corpus, pos, ctx, eng)
        add(
            "cross: oracle, whole package", recall(pos.wanted, "\n".join([text, *(d.text for d in siblings)]))
        )
    n_files = sum(len(f) for f in corpus.packages.values())
    print(
        f"\n== corpus {corpus.name}: {len(corpus.packages)} packages, {n_files} files; "
        f"{len(randoms)} random + {len(crosses)} cross-file positions, seed {seed}, budget {b} chars"
    )
    print(f"{'context':<48} {'recall':>7}")
    for name, xs in scores.items():
        print(f"{name:<48} {statistics.mean(xs):>7.1%}")
    print(f"{'build (tree current)':<26} {'mean size':>9} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    for key, ms in times.items():
        print(
            f"{key:<26} {statistics.mean(sizes[key]):>9.0f} {statistics.median(ms):>10.2f} "
            f"{pct(ms, 95):>8.2f} {max(ms):>8.2f}"
        )
    print("why a cross-file name missed the prompt (names, not positions):")
    for key, counts in misses.items():
        total = sum(counts.values())
        print(f"  {key}: {total} missed" + "".join(f"; {k} {v}" for k, v in sorted(counts.items())))
    return {k: statistics.mean(v) for k, v in scores.items()}


def _why_missed(
    out: dict[str, int], corpus: Corpus, pos: Position, ctx: PromptContext, eng: ContextEngine
) -> None:
    """Per missed name: was its defining file not chosen, chosen but not ranked before the
    deadline, or ranked with the name left out (the budget or the ranking)?"""
    got = eng.last_gathered
    kept = identifiers(prompt_text(ctx))
    for name in sorted(pos.wanted - kept):
        files = [p for p in pos.defining if name in corpus.defined[pos.pkg][p]]
        if got is None:
            why = "no cross-file step"
        elif not any(p in got.candidates for p in files):
            why = "file not chosen"
        elif not any(p in got.candidates[: got.ranked] for p in files):
            why = "file chosen, not ranked (deadline)"
        elif any(s.path in files for s in ctx.snippets):
            why = "file kept, name left out"
        else:
            why = "file chosen, nothing of it kept"
        out[why] = out.get(why, 0) + 1


def _copy(index: SymbolIndex) -> SymbolIndex:
    """A fresh index with the same files (each engine adds the blanked document to its own)."""
    out = SymbolIndex()
    for p in index.paths():
        out.set_symbols(p, index.symbols(p), index.version(p), index.outline(p))
    return out


def _tabs(siblings: list[Document], defining: list[str], rng: random.Random, n: int) -> list[Document]:
    """The defining files plus other siblings, `n` tabs in all (a seeded, stable choice)."""
    chosen = [d for d in siblings if d.path in defining][:n]
    rest = [d for d in siblings if d.path not in defining]
    rng.shuffle(rest)
    return chosen + rest[: max(0, n - len(chosen))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=150, help="per stratum per corpus")
    ap.add_argument("--budget", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", action="append", default=None, help="stdlib | pypi:NAME==VERSION")
    args = ap.parse_args()
    t0 = time.perf_counter()
    loaders: dict[str, Callable[[], dict[str, dict[str, str]]]] = {}
    for spec in args.corpus or ["stdlib", "pypi:rich==13.9.4", "jdk:java/util/concurrent"]:
        if spec == "stdlib":
            loaders[spec] = load_stdlib
        elif spec.startswith("jdk:"):
            loaders[spec] = lambda s=spec[4:]: load_jdk(s)  # type: ignore[misc]
        elif spec.startswith("pypi:"):
            loaders[spec] = lambda s=spec[5:]: load_pypi(s)  # type: ignore[misc]
        else:
            raise SystemExit(f"unknown corpus {spec!r}")
    for name, load in loaders.items():
        language = "java" if name.startswith("jdk:") else "python"
        run_corpus(Corpus(name, load(), language), args.positions, args.budget, args.seed)
    print(f"\ntotal run {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
