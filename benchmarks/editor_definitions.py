"""Cross-file recall when the editor supplies definitions (`lspAssist/definitions`).

Same corpora, positions and scoring as `benchmarks/context_recall.py` (its cross-file stratum:
a deleted line that uses a name defined in another file of the package and nowhere else in the
current file; its random stratum for in-file recall), with the editor's language server
simulated two ways:

- **oracle**: a perfect language server. For the names the clients would ask about (the same
  rules as editors/vscode/src/definitions.ts and editors/nvim/lua/lsp_assist/definitions.lua:
  names of the enclosing function, nearest the cursor first, at most 8, no members after a dot,
  no keywords), it returns the true definition in another file of the package (the package's
  tree-sitter symbols; a name defined in several files: the first), and the text is what the
  clients read there (the declaration and the lines indented under it, 8 lines / 480 chars).
  This is an upper bound of what a perfect language server can give *for those names*: the
  deleted line's own names are not in the buffer (it is blank), so they can only arrive inside
  another name's definition (a class's first members, a signature).
- **pyright** (`--pyright`, stdlib corpus, `--pyright-positions` positions): the real pyright
  language server (npm, `benchmarks/.peers/pyright`), asked `textDocument/definition` at the
  same names' positions in the blanked file, each answer's text read the clients' way.

Rows, all in one run: local only; (a) the defining file open as a tab; (b) only in the workspace
index; (c) editor definitions only (no tabs, no index); (d) index + editor definitions;
(e) tab + editor definitions; and in-file recall on the random stratum, local only vs index +
editor definitions (the editor's share is taken from the same cross-file budget).

    flock -x /tmp/lsp-cpu.lock .venv/bin/python -m benchmarks.editor_definitions \
        [--positions 150] [--budget 4000] [--corpus stdlib --corpus pypi:rich==13.9.4] [--pyright]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import percentile
from benchmarks.context_recall import (
    Corpus,
    Position,
    _copy,
    _tabs,
    blank,
    load_pypi,
    load_stdlib,
    package_index,
    pick_positions,
    prompt_text,
    recall,
)
from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.editor_definitions import (
    AMBIENT_FILES,
    EditorDefinition,
    cap_text,
    load_definition_files,
)
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext
from lsp_assist.structure.symbols import SymbolIndex

MAX_NAMES = 8
ABOVE, BELOW, NEAR_ABOVE = 40, 4, 12
IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
DEFINITION_START = re.compile(
    r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|func|fn|pub\s+fn|impl|interface|type|struct"
    r"|public|private|protected|static)\b"
)
KEYWORDS = frozenset(
    """and as assert async await break case catch class const continue def default del delete do elif
    else enum except export extends false finally for from func function global go if impl import in
    interface is lambda let match mut new nil nonlocal none not null or package pass private protected
    pub public raise return self static struct super switch this throw true try type typeof undefined
    use var void while with yield None True False fn mod crate where loop defer chan map range select
    int str float bool string""".split()
)
PEERS = Path(__file__).resolve().parent / ".peers"  # gitignored
PYRIGHT_VERSION = "1.1.408"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def names_near_cursor(lines: list[str], row: int, col: int) -> list[tuple[str, int, int]]:
    """The clients' `namesNearCursor` (definitions.ts), ported: (name, row, col), nearest first."""
    if not 0 <= row < len(lines):
        return []
    cursor_indent = _indent(lines[row])
    top = max(0, row - ABOVE)
    for r in range(row - 1, max(0, row - ABOVE) - 1, -1):
        text = lines[r]
        if text.strip() and _indent(text) < cursor_indent and DEFINITION_START.match(text):
            top = r
            break
    bottom = min(len(lines) - 1, row + BELOW)
    found: dict[str, tuple[int, int, int]] = {}
    for r in range(top, bottom + 1):
        text = lines[r]
        for m in IDENT.finditer(text):
            name, c = m.group(0), m.start()
            if len(name) < 2 or name in KEYWORDS or (c > 0 and text[c - 1] == "."):
                continue
            if r == row and c <= col <= c + len(name):
                continue
            distance = 1000 + row - r if r < row - NEAR_ABOVE else abs(r - row)
            prev = found.get(name)
            if prev is None or distance < prev[0]:
                found[name] = (distance, r, c)
    ranked = sorted(found.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[1][2]))
    return [(n, r, c) for n, (_, r, c) in ranked]


def definition_text(lines: list[str]) -> str:
    """The clients' `definitionText`: the declaration and the lines indented under it."""
    if not lines or not lines[0].strip():
        return ""
    base = _indent(lines[0])
    out: list[str] = []
    for i, raw in enumerate(lines[:24]):
        line = raw.rstrip()
        if i > 0 and line.strip() and _indent(line) <= base and not re.match(r"^\s*[)\]]", line):
            break
        out.append(line)
    return cap_text("\n".join(out))


class Oracle:
    """A perfect language server for one package: each name's definition in another file."""

    def __init__(self, files: dict[str, str], index: SymbolIndex) -> None:
        self.lines = {p: t.split("\n") for p, t in files.items()}
        self.index = index

    def resolve(self, path: str, text: str, cursor: Cursor) -> list[EditorDefinition]:
        out = []
        for name, _, _ in names_near_cursor(text.split("\n"), cursor.line, cursor.character)[:MAX_NAMES]:
            syms = sorted(
                (s for s in self.index.lookup(name) if s.path != path and s.path in self.lines),
                key=lambda s: (s.container is not None, s.path, s.start_row),
            )
            if not syms:
                continue
            s = syms[0]
            body = definition_text(self.lines[s.path][s.start_row : s.start_row + 24])
            if body:
                out.append(EditorDefinition(name, s.path, s.start_row, body, 2))
        return out


class Pyright:
    """pyright's language server over stdio, as an editor drives it (one document at a time)."""

    def __init__(self, root: str) -> None:
        node = shutil.which("node")
        npm = shutil.which("npm")
        entry = PEERS / "pyright" / "node_modules" / "pyright" / "langserver.index.js"
        if not entry.exists():
            if npm is None:
                raise RuntimeError("npm not found")
            subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(PEERS / "pyright"),
                 f"pyright@{PYRIGHT_VERSION}"],
                check=True, capture_output=True, timeout=300,
            )  # fmt: skip
        if node is None:
            raise RuntimeError("node not found")
        self.proc = subprocess.Popen(
            [node, str(entry), "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        uri = Path(root).as_uri()
        self.request(
            "initialize",
            {"processId": os.getpid(), "rootUri": uri, "capabilities": {},
             "workspaceFolders": [{"uri": uri, "name": "ws"}]},
        )  # fmt: skip
        self.notify("initialized", {})
        self.notify(
            "workspace/didChangeConfiguration",
            {"settings": {"python": {"analysis": {"diagnosticMode": "openFilesOnly"}}}},
        )
        self.latencies: list[float] = []

    def _send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _recv(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            c = self.proc.stdout.read(1)
            if not c:
                raise RuntimeError("pyright exited")
            header += c
        sizes = [h for h in header.split(b"\r\n") if h.lower().startswith(b"content-length")]
        n = int(sizes[0].split(b":")[1])
        msg: dict[str, Any] = json.loads(self.proc.stdout.read(n))
        return msg

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self._recv()
            if "method" in msg and "id" in msg:  # a request to the client: answer it plainly
                items = (msg.get("params") or {}).get("items") or []
                result = [None] * len(items) if msg["method"] == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif msg.get("id") == rid:
                return msg.get("result")

    def resolve(self, path: str, text: str, cursor: Cursor, version: int) -> list[EditorDefinition]:
        uri = Path(path).as_uri()
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
        )
        out = []
        try:
            for name, r, c in names_near_cursor(text.split("\n"), cursor.line, cursor.character)[:MAX_NAMES]:
                t0 = time.perf_counter()
                where = {"textDocument": {"uri": uri}, "position": {"line": r, "character": c}}
                res = self.request("textDocument/definition", where)
                self.latencies.append((time.perf_counter() - t0) * 1000)
                locs = res if isinstance(res, list) else [res] if isinstance(res, dict) else []
                for loc in locs:
                    turi = loc.get("targetUri") or loc.get("uri")
                    rng = loc.get("targetRange") or loc.get("range")
                    if not turi or turi == uri or not turi.startswith("file:"):
                        continue
                    tpath = turi[len("file://") :]
                    if AMBIENT_FILES.search(tpath):
                        break  # dropped by the server as well (parse_notification)
                    try:
                        lines = Path(tpath).read_text(encoding="utf-8", errors="replace").split("\n")
                    except OSError:
                        continue
                    row = int(rng["start"]["line"])
                    body = definition_text(lines[row : row + 24])
                    if body:
                        out.append(EditorDefinition(name, os.path.normpath(tpath), row, body, version))
                    break
        finally:
            self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return out

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def _engine(index: SymbolIndex | None, doc: Document, defs: list[EditorDefinition]) -> ContextEngine:
    """An engine that got `defs` as the server does from lspAssist/definitions (Runtime.note_definitions):
    stored, and the files they point into that the index lacks read and outlined."""
    eng = ContextEngine(symbol_index=index)
    if defs:
        eng.editor_definitions.update(doc.uri, doc.version, defs)
        wanted = eng.editor_files.wanted(eng.symbols, eng.editor_definitions.current(doc.uri, doc.version))
        eng.editor_files.add(eng.symbols, load_definition_files(wanted), lambda _path: False)
    return eng


def run_corpus(corpus: Corpus, n: int, b: int, seed: int, pyright_n: int) -> None:
    rng = random.Random(seed)
    randoms, crosses = pick_positions(corpus, n, rng)
    docs = {
        pkg: {p: Document("file://" + p, corpus.language, 1, t, p) for p, t in files.items()}
        for pkg, files in corpus.packages.items()
    }
    indexes: dict[str, SymbolIndex] = {}
    oracles: dict[str, Oracle] = {}
    scores: dict[str, list[float]] = {}
    sizes: dict[str, list[int]] = {}
    sent: list[int] = []

    def add(key: str, v: float, ctx: PromptContext | None = None) -> None:
        scores.setdefault(key, []).append(v)
        if ctx is not None:
            assert ctx.size <= b, (ctx.size, b)
            sizes.setdefault(key, []).append(ctx.size)

    def build(eng: ContextEngine, doc: Document, cursor: Cursor, others: list[Document]) -> PromptContext:
        for o in others:
            eng.index_document(o)
        return eng.build(doc, cursor, b, others=others, deadline_ms=15.0)

    def oracle(pkg: str) -> Oracle:
        got = oracles.get(pkg)
        if got is None:
            got = oracles[pkg] = Oracle(corpus.packages[pkg], package_index(corpus, pkg, indexes))
        return got

    for pos in crosses:
        text, cursor, _, _ = blank(corpus.packages[pos.pkg][pos.path], pos.row)
        doc = Document("file://" + pos.path, corpus.language, 2, text, pos.path)
        doc.tree()
        siblings = [d for p, d in docs[pos.pkg].items() if p != pos.path]
        tabs = _tabs(siblings, pos.defining, rng, 3)
        defs = oracle(pos.pkg).resolve(pos.path, text, cursor)
        sent.append(len(defs))
        idx = package_index(corpus, pos.pkg, indexes)
        rows: list[tuple[str, SymbolIndex | None, list[Document], list[EditorDefinition]]] = [
            ("cross: local only", None, [], []),
            ("cross: (a) defining file open as a tab", None, tabs, []),
            ("cross: (b) only in the workspace index", _copy(idx), [], []),
            ("cross: (c) editor definitions (oracle) only", None, [], defs),
            ("cross: (d) index + editor definitions (oracle)", _copy(idx), [], defs),
            ("cross: (e) tab + editor definitions (oracle)", None, tabs, defs),
        ]
        for key, index, others, ds in rows:
            ctx = build(_engine(index, doc, ds), doc, cursor, others)
            add(key, recall(pos.wanted, prompt_text(ctx)), ctx)
    for pos in randoms:
        text, cursor, _, _ = blank(corpus.packages[pos.pkg][pos.path], pos.row)
        doc = Document("file://" + pos.path, corpus.language, 2, text, pos.path)
        doc.tree()
        defs = oracle(pos.pkg).resolve(pos.path, text, cursor)
        idx = package_index(corpus, pos.pkg, indexes)
        for key, index, ds in (
            ("random (in-file): local only", None, []),
            ("random (in-file): index", _copy(idx), []),
            ("random (in-file): index + editor definitions (oracle)", _copy(idx), defs),
        ):
            ctx = build(_engine(index, doc, ds), doc, cursor, [])
            add(key, recall(pos.wanted, prompt_text(ctx)), ctx)
    print(
        f"\n== corpus {corpus.name}: {len(crosses)} cross-file + {len(randoms)} random positions,"
        f" seed {seed}, budget {b} chars; oracle definitions sent per position:"
        f" mean {statistics.mean(sent or [0]):.1f}"
    )
    print(f"{'context':<58} {'recall':>7} {'mean size':>10}")
    for key, xs in scores.items():
        size = statistics.mean(sizes[key]) if sizes.get(key) else 0
        print(f"{key:<58} {statistics.mean(xs):>7.1%} {size:>10.0f}")
    if pyright_n > 0:
        _pyright_rows(corpus, crosses[:pyright_n], b, indexes, docs, rng)


def _pyright_rows(
    corpus: Corpus,
    crosses: list[Position],
    b: int,
    indexes: dict[str, SymbolIndex],
    docs: dict[str, dict[str, Document]],
    rng: random.Random,
) -> None:
    """The same rows with the real pyright on the first positions (one server per package)."""
    scores: dict[str, list[float]] = {}
    servers: dict[str, Pyright] = {}
    sent: list[int] = []
    t0 = time.perf_counter()
    try:
        for version, pos in enumerate(crosses, start=2):
            root = os.path.dirname(pos.path)
            server = servers.get(root)
            if server is None:
                server = servers[root] = Pyright(root)
            text, cursor, _, _ = blank(corpus.packages[pos.pkg][pos.path], pos.row)
            doc = Document("file://" + pos.path, corpus.language, version, text, pos.path)
            doc.tree()
            defs = server.resolve(pos.path, text, cursor, version)
            sent.append(len(defs))
            idx = package_index(corpus, pos.pkg, indexes)
            siblings = [d for p, d in docs[pos.pkg].items() if p != pos.path]
            tabs = _tabs(siblings, pos.defining, rng, 3)
            orc = Oracle(corpus.packages[pos.pkg], idx).resolve(pos.path, text, cursor)
            for key, index, others, ds in (
                ("pyright positions: local only", None, [], []),
                ("pyright positions: (a) tab", None, tabs, []),
                ("pyright positions: (b) index", _copy(idx), [], []),
                ("pyright positions: (c) pyright definitions only", None, [], defs),
                ("pyright positions: (d) index + pyright definitions", _copy(idx), [], defs),
                ("pyright positions: (d') index + oracle definitions", _copy(idx), [], orc),
            ):
                eng = _engine(index, doc, ds)
                for o in others:
                    eng.index_document(o)
                ctx = eng.build(doc, cursor, b, others=others, deadline_ms=15.0)
                scores.setdefault(key, []).append(recall(pos.wanted, prompt_text(ctx)))
        lat = sorted(x for s in servers.values() for x in s.latencies)
    finally:
        for s in servers.values():
            s.close()
    p50, p95 = percentile(lat or [0.0], 50), percentile(lat or [0.0], 95)
    print(
        f"-- real pyright {PYRIGHT_VERSION} on {len(crosses)} of these cross-file positions"
        f" ({len(servers)} packages, {time.perf_counter() - t0:.0f} s): definitions sent per position"
        f" mean {statistics.mean(sent or [0]):.1f}; textDocument/definition p50 {p50:.1f} ms,"
        f" p95 {p95:.1f} ms ({len(lat)} requests)"
    )
    for key, xs in scores.items():
        print(f"{key:<58} {statistics.mean(xs):>7.1%}")


_IMPORT = re.compile(r"^import\s+([\w.]+)(?:\s+as\s+(\w+))?\s*$")
_ATTR = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)")


def _module_file(module: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    return origin if origin and origin.endswith(".py") and os.path.isfile(origin) else None


def library_positions(corpus: Corpus, n: int, rng: random.Random) -> list[tuple[Position, str, str]]:
    """Lines using `module.attr` where `module` is imported with `import module` from outside
    the package (its file is in no index here), `attr` appears nowhere else in the file, and
    `module` is among the names the clients would ask about at that line (definitions.ts):
    (position scoring {attr}, the module's local name, its file)."""
    out: list[tuple[Position, str, str]] = []
    for pkg, files in corpus.packages.items():
        for path, text in files.items():
            lines = text.split("\n")
            modules: dict[str, str] = {}
            for line in lines[:400]:
                m = _IMPORT.match(line)
                if m:
                    local = m.group(2) or m.group(1).split(".")[0]
                    target = m.group(1) if m.group(2) else m.group(1).split(".")[0]
                    where = _module_file(target)
                    if where and os.path.dirname(where) != os.path.dirname(path):
                        modules[local] = where
            if not modules:
                continue
            counts: dict[str, int] = {}
            for line in lines:
                for t in IDENT.findall(line):
                    counts[t] = counts.get(t, 0) + 1
            for i, line in enumerate(lines):
                if line.lstrip().startswith(("#", "import ", "from ")):
                    continue
                for m in _ATTR.finditer(line):
                    mod, attr = m.group(1), m.group(2)
                    if mod not in modules or counts.get(attr, 0) != 1 or len(attr) < 3:
                        continue
                    blanked = [*lines[:i], line[: len(line) - len(line.lstrip())], *lines[i + 1 :]]
                    asked = [x for x, _, _ in names_near_cursor(blanked, i, len(blanked[i]))[:MAX_NAMES]]
                    if mod not in asked:
                        continue  # no client would ask about the module here
                    out.append((Position(pkg, path, i, {attr}, [modules[mod]]), mod, modules[mod]))
                    break
    return sorted(rng.sample(out, min(n, len(out))), key=lambda t: (t[0].pkg, t[0].path, t[0].row))


def run_library(corpus: Corpus, n: int, b: int, seed: int, pyright_n: int) -> None:
    """Names from modules outside the package: what no tab or workspace index of it holds."""
    rng = random.Random(seed)
    picked = library_positions(corpus, n, rng)
    indexes: dict[str, SymbolIndex] = {}
    scores: dict[str, list[float]] = {}
    servers: dict[str, Pyright] = {}
    try:
        for k, (pos, mod, where) in enumerate(picked):
            text, cursor, _, _ = blank(corpus.packages[pos.pkg][pos.path], pos.row)
            doc = Document("file://" + pos.path, corpus.language, 2, text, pos.path)
            doc.tree()
            idx = package_index(corpus, pos.pkg, indexes)
            # The oracle resolves the module's name (as a language server does) to its file.
            lines = Path(where).read_text(encoding="utf-8", errors="replace").split("\n")
            oracle = [
                EditorDefinition(mod, os.path.normpath(where), 0, definition_text(lines[:24]) or mod, 2)
            ]
            rows: list[tuple[str, SymbolIndex | None, list[EditorDefinition]]] = [
                ("library: local only", None, []),
                ("library: index of the package", _copy(idx), []),
                ("library: index + editor definitions (oracle)", _copy(idx), oracle),
            ]
            if k < pyright_n:
                root = os.path.dirname(pos.path)
                server = servers.get(root)
                if server is None:
                    server = servers[root] = Pyright(root)
                rows.append(
                    (
                        "library: index + pyright definitions",
                        _copy(idx),
                        server.resolve(pos.path, text, cursor, 2),
                    )
                )
                rows.append(("library: (same positions) index", _copy(idx), []))
            for key, index, ds in rows:
                eng = _engine(index, doc, ds)
                ctx = eng.build(doc, cursor, b, deadline_ms=15.0)
                scores.setdefault(key, []).append(recall(pos.wanted, prompt_text(ctx)))
    finally:
        for srv in servers.values():
            srv.close()
    print(
        f"\n== corpus {corpus.name}, library stratum: {len(picked)} lines using `module.name` of a module"
        f" outside the package (pyright on the first {min(pyright_n, len(picked))}), budget {b} chars"
    )
    for key, xs in scores.items():
        print(f"{key:<58} {statistics.mean(xs):>7.1%}  ({len(xs)} positions)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=150, help="per stratum per corpus")
    ap.add_argument("--budget", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", action="append", default=None, help="stdlib | pypi:NAME==VERSION")
    ap.add_argument("--pyright", action="store_true", help="also the real pyright (stdlib corpus)")
    ap.add_argument("--pyright-positions", type=int, default=40)
    args = ap.parse_args()
    t0 = time.perf_counter()
    loaders: dict[str, Callable[[], dict[str, dict[str, str]]]] = {}
    for spec in args.corpus or ["stdlib", "pypi:rich==13.9.4"]:
        if spec == "stdlib":
            loaders[spec] = load_stdlib
        elif spec.startswith("pypi:"):
            loaders[spec] = lambda s=spec[5:]: load_pypi(s)  # type: ignore[misc]
        else:
            raise SystemExit(f"unknown corpus {spec!r} (python corpora only: the oracle reads Python)")
    for name, load in loaders.items():
        n_pyright = args.pyright_positions if args.pyright and name == "stdlib" else 0
        corpus = Corpus(name, load(), "python")
        run_corpus(corpus, args.positions, args.budget, args.seed, n_pyright)
        if name == "stdlib":
            run_library(corpus, args.positions, args.budget, args.seed, n_pyright)
    print(f"\ntotal run {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
