"""The context engine stays readable: in `lsp_assist/context/` and the code-structure model
it reads (`lsp_assist/structure/`) no class over 300 lines, no function over 60 lines and
no parameter list over 6 (not counting `self`/`cls`; `*args` and `**kwargs` count one
each). Larger inputs go in a small parameter dataclass."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "lsp_assist"
CHECKED = (PACKAGE / "context", PACKAGE / "structure")
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 6


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    a = node.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return [n for n in names if n not in ("self", "cls")]


def violations(source: str, where: str) -> list[str]:
    """Each class, function or lambda of `source` over a limit, as `where:line name: why`."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        end = getattr(node, "end_lineno", None)
        if end is None:
            continue
        lines = end - node.lineno + 1
        if isinstance(node, ast.ClassDef) and lines > MAX_CLASS_LINES:
            out.append(f"{where}:{node.lineno} class {node.name}: {lines} lines")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            name = getattr(node, "name", "lambda")
            if lines > MAX_FUNCTION_LINES:
                out.append(f"{where}:{node.lineno} {name}: {lines} lines")
            params = _parameters(node)
            if len(params) > MAX_PARAMETERS:
                out.append(f"{where}:{node.lineno} {name}: {len(params)} parameters")
    return out


def test_no_class_function_or_parameter_list_in_context_over_its_limit() -> None:
    found = [
        v
        for folder in CHECKED
        for path in sorted(folder.rglob("*.py"))
        for v in violations(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    ]
    assert found == []


def test_the_size_check_sees_each_kind_of_violation() -> None:
    big_class = "class C:\n" + "    x = 1\n" * MAX_CLASS_LINES
    long_function = "def f():\n" + "    pass\n" * MAX_FUNCTION_LINES
    many = "def g(self, a, b, c, d, e, f, *args):\n    pass\n"
    ok = "def h(self, a, b, c, d, e, f):\n    pass\n"
    assert violations(big_class, "m.py") == [f"m.py:1 class C: {MAX_CLASS_LINES + 1} lines"]
    assert violations(long_function, "m.py") == [f"m.py:1 f: {MAX_FUNCTION_LINES + 1} lines"]
    assert violations(many, "m.py") == ["m.py:1 g: 7 parameters"]
    assert violations(ok, "m.py") == []
