"""The composition root stays small: `server.py` is the order of the build steps and the
facade, each step a short function with a short parameter list (issue 39)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "lsp_assist"
CHECKED = [PACKAGE / "server.py", *sorted((PACKAGE / "composition").glob("*.py"))]


def _oversized(path: Path) -> list[str]:
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        lines = (getattr(node, "end_lineno", 0) or 0) - getattr(node, "lineno", 0) + 1
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ClassDef) and lines > 300:
            out.append(f"{where} class {node.name}: {lines} lines")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if p.arg not in ("self", "cls")]
            if lines > 60:
                out.append(f"{where} {node.name}: {lines} lines")
            if len(params) > 6:
                out.append(f"{where} {node.name}: {len(params)} parameters")
    return out


def test_server_module_is_the_wiring_and_the_facade() -> None:
    assert len((PACKAGE / "server.py").read_text(encoding="utf-8").splitlines()) <= 250


def test_no_long_function_class_or_parameter_list() -> None:
    assert len(CHECKED) > 5  # the steps are where this looks
    assert [v for path in CHECKED for v in _oversized(path)] == []
