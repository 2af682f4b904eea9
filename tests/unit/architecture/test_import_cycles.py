"""No import cycle inside `lsp_assist`, counting every import (also `TYPE_CHECKING` and
function-level ones: a cycle hidden behind them is still two modules that know each other)."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import lsp_assist

PACKAGE = Path(lsp_assist.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules `name` imports (a `from pkg import sub` names the submodule)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                if sub in known:
                    found.add(sub)
                elif mod in known:
                    found.add(mod)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    # CPython 3.11 raises "AST constructor recursion depth mismatch" when a finalizer left
    # by an earlier test (an unclosed asyncio subprocess transport) runs inside ast.parse:
    # collect first and keep the collector out of the parsing.
    gc.collect()
    gc.disable()
    try:
        graph = {name: _imports(name, path, known) for name, path in mods.items()}
    finally:
        gc.enable()
    # A package's __init__ re-exporting its own submodules is not a dependency between them.
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not (name.startswith(d + ".") and mods[d].name == "__init__.py")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_cycle_finder_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_graph_resolves_submodule_imports() -> None:
    graph = import_graph()
    assert "lsp_assist.pipeline.launcher" in graph["lsp_assist.pipeline.engine"]
    assert "lsp_assist.pipeline.stages" in graph["lsp_assist.pipeline.engine"]


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []
