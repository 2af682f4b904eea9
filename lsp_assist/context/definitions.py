"""Cross-file definitions: signature lines of what the code at the cursor uses from other files.

The names near the cursor that this file does not define are resolved through the
symbol index, most trustworthy route first: names imported by this file (`from .m import
f`, `from pkg.m import C as D`), attributes of imported modules (`import pkg.m as m` +
`m.attr`), methods reached through `self.`/`this.` that this file does not define (a base
class elsewhere), then any other name by plain lookup. Each definition costs one
signature line (a class adds its `__init__` signature and a few method names), never a
body. The result is grouped per file and ordered by (path, row), so it does not move
while the user types and provider-side prompt caches keep hitting.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from lsp_assist.context.symbols import Symbol, SymbolIndex
from lsp_assist.domain import Snippet

MAX_DEFINITIONS = 6
MAX_LINE_CHARS = 160
MAX_METHOD_NAMES = 8

_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?([^)#]*)")
_IMPORT = re.compile(r"^\s*import\s+([^#]+)")
_ATTR = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)")
_SPACES = re.compile(r"\s+")
_CLASS = re.compile(r"^\s*class\s+\w+\s*\((.*)\)\s*:")


@dataclass(frozen=True)
class Imported:
    """One name bound by an import: the module it comes from and the name inside it."""

    module: str  # dotted, without the leading dots
    level: int  # leading dots of a relative import (0: absolute)
    name: str | None  # the imported attribute; None when the binding is the module itself


def python_imports(statements: Iterable[str]) -> dict[str, Imported]:
    """Local name -> what it is bound to, from the text of Python import statements."""
    out: dict[str, Imported] = {}
    for stmt in statements:
        text = _SPACES.sub(" ", stmt.replace("\\\n", " "))
        m = _FROM.match(text)
        if m is not None:
            dots, module = len(m.group(1)), m.group(2)
            for item in m.group(3).split(","):
                words = item.split()
                if not words or words[0] == "*":
                    continue
                local = words[2] if len(words) == 3 and words[1] == "as" else words[0]
                if module:
                    out[local] = Imported(module, dots, words[0])
                else:  # `from . import events`: a sibling module
                    out[local] = Imported(words[0], dots, None)
            continue
        m = _IMPORT.match(text)
        if m is None:
            continue
        for item in m.group(1).split(","):
            words = item.split()
            if not words:
                continue
            if len(words) == 3 and words[1] == "as":
                out[words[2]] = Imported(words[0], 0, None)
            else:  # `import a.b` binds `a`; `a.b.attr` is followed through the index anyway
                out[words[0].split(".")[0]] = Imported(words[0], 0, None)
    return out


class ModuleResolver:
    """Dotted module names -> indexed file paths (suffix match), cached per index generation."""

    def __init__(self) -> None:
        self._generation = -1
        self._by_tail: dict[str, list[str]] = {}

    def _refresh(self, index: SymbolIndex) -> None:
        if index.generation == self._generation:
            return
        self._generation = index.generation
        by_tail: dict[str, list[str]] = {}
        for path in index.paths():
            norm = path.replace("\\", "/")
            stem = norm.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            if stem == "__init__":
                stem = norm.rsplit("/", 2)[-2] if norm.count("/") >= 1 else stem
            by_tail.setdefault(stem, []).append(norm)
        self._by_tail = by_tail

    def resolve(self, index: SymbolIndex, importer: str, imp: Imported) -> str | None:
        """The indexed path of the module `imp` names, seen from file `importer`."""
        self._refresh(index)
        parts = [p for p in imp.module.split(".") if p]
        if not parts:
            return None
        tail = "/".join(parts)
        cands = self._by_tail.get(parts[-1], ())
        if imp.level:
            base = os.path.dirname(importer.replace("\\", "/"))
            for _ in range(imp.level - 1):
                base = os.path.dirname(base)
            wanted = (f"{base}/{tail}.py", f"{base}/{tail}/__init__.py")
            return next((c for c in cands if c in wanted), None)
        hits = [c for c in cands if c.endswith((f"/{tail}.py", f"/{tail}/__init__.py"))]
        if not hits:
            return None
        # The nearest to the importer first (same tree), then by path: deterministic.
        here = os.path.dirname(importer.replace("\\", "/"))
        hits.sort(key=lambda c: (-len(_shared_dirs(here, c)), c))
        return hits[0]


def _shared_dirs(a: str, b: str) -> list[str]:
    """The leading folders two paths share (path components, not characters)."""
    out: list[str] = []
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        out.append(x)
    return out


def _one_line(text: str) -> str:
    """A signature on one line (parameter names kept), cut at `MAX_LINE_CHARS`."""
    line = _SPACES.sub(" ", text.strip()).replace("( ", "(").replace(" )", ")")
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 4].rstrip() + " ..."


def class_bases(header: str) -> list[str]:
    """Base class expressions of a `class X(A, m.B, metaclass=M):` line (Python)."""
    m = _CLASS.match(header)
    if m is None:
        return []
    return [b.strip() for b in m.group(1).split(",") if b.strip() and "=" not in b]


def render(sym: Symbol, index: SymbolIndex) -> str:
    """A definition's lines: its signature; a class adds `__init__` and some method names."""
    head = _one_line(sym.signature.split("\n", 1)[0] if sym.kind == "class" else sym.signature)
    if sym.kind == "method" and sym.container is not None:
        head = f"{head}  # in {sym.container}"
    if sym.kind != "class":
        return head
    members = [s for s in index.symbols(sym.path) if s.container == sym.name]
    lines = [head]
    init = next((s for s in members if s.name == "__init__"), None)
    if init is not None:
        lines.append("    " + _one_line(init.signature))
    names: list[str] = []
    for s in members:
        if s.kind in ("method", "function") and not s.name.startswith("__") and s.name not in names:
            names.append(s.name)
    if names:
        lines.append("    # methods: " + ", ".join(names[:MAX_METHOD_NAMES]))
    return "\n".join(lines)


def _pick(found: list[Symbol], path: str | None, here: str, methods: bool) -> Symbol | None:
    """The one symbol to show: in the resolved file when known, else the nearest file."""
    if path is not None:
        found = [s for s in found if s.path == path]
    found = [s for s in found if s.path != here and (s.container is not None) == methods]
    if not found:
        return None
    base = os.path.dirname(here)
    return min(found, key=lambda s: (not s.path.startswith(base + "/"), s.path, s.start_row))


def definition_snippets(
    index: SymbolIndex,
    resolver: ModuleResolver,
    path: str,
    near_text: str,
    near: Counter[str],
    imports: dict[str, Imported],
    in_file: set[str],
    budget: int,
    deadline: float,
    bases: Iterable[str] = (),
) -> list[Snippet]:
    """Signature snippets (one per file, by path) for names near the cursor defined elsewhere."""
    if budget <= 0 or len(index) == 0:
        return []
    chosen: dict[tuple[str, int], tuple[int, Symbol]] = {}
    seen: set[str] = set()
    ranked = sorted(near.items(), key=lambda kv: (-kv[1], kv[0]))

    def take(sym: Symbol | None, rank: int) -> None:
        if sym is not None and (sym.path, sym.start_row) not in chosen:
            chosen[(sym.path, sym.start_row)] = (rank, sym)

    # 0. Base classes (from other files) of the class around the cursor: `self.` reaches
    # their methods, which the next line may call.
    for base in bases:
        owner, _, attr = base.rpartition(".")
        imp = imports.get(owner) if owner else imports.get(attr)
        if owner and (imp is None or imp.name is not None):
            continue
        name = attr if imp is None or imp.name is None else imp.name
        where = resolver.resolve(index, path, imp) if imp is not None else None
        if imp is None and attr in in_file:
            continue
        take(_pick(index.lookup(name), where, path, False), -1)
    # 1. Imported names used near the cursor, in the module they are imported from.
    for name, _ in ranked:
        imp = imports.get(name)
        if imp is None or imp.name is None or name in in_file:
            continue
        seen.add(name)
        take(_pick(index.lookup(imp.name), resolver.resolve(index, path, imp), path, False), 0)
    # 2. `module.attr` and `self.attr` near the cursor.
    pairs = sorted(set(_ATTR.findall(near_text)), key=lambda p: (-near[p[1]], p))
    for owner, attr in pairs:
        if time.perf_counter() > deadline or attr in seen:
            continue
        imp = imports.get(owner)
        if imp is not None and imp.name is None:
            seen.add(attr)
            take(_pick(index.lookup(attr), resolver.resolve(index, path, imp), path, False), 1)
        elif owner in ("self", "this", "cls") and attr not in in_file:
            seen.add(attr)
            take(_pick(index.lookup(attr), None, path, True), 2)
    # 3. Any other name near the cursor that this file neither defines nor imports.
    for name, _ in ranked:
        if time.perf_counter() > deadline:
            break
        if name in seen or name in in_file or name in imports:
            continue
        take(_pick(index.lookup(name), None, path, False), 3)
    order = sorted(chosen.values(), key=lambda t: (t[0], -near[t[1].name], t[1].path, t[1].start_row))
    texts: dict[tuple[str, int], str] = {}
    used = 0
    for _, sym in order[:MAX_DEFINITIONS]:
        text = render(sym, index)
        cost = len(text) + 1
        if used + cost > budget:
            continue
        texts[(sym.path, sym.start_row)] = text
        used += cost
    by_path: dict[str, list[str]] = {}
    for key in sorted(texts):
        by_path.setdefault(key[0], []).append(texts[key])
    return [
        Snippet(path=p, text="\n".join(lines), score=1.0, reason="definition")
        for p, lines in sorted(by_path.items())
    ]
