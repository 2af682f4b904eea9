"""The package stays readable: anywhere in `lsp_assist/` no class over 300 lines, no
function over 60 lines and no parameter list over 6 (not counting `self`/`cls`; `*args`
and `**kwargs` count one each). Larger inputs go in a small parameter dataclass.

An exception is listed below as `"path:qualified name" -> one-line reason`; a listed
exception that no longer breaks a limit fails the test, so a fixed one leaves the list."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "lsp_assist"
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 6

# Justified exceptions, keyed `path:qualified name` (path relative to `lsp_assist/`), each
# with a one-line reason. At most three.
EXCEPTIONS: dict[str, str] = {}


Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _parameters(node: Function) -> list[str]:
    a = node.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return [n for n in names if n not in ("self", "cls")]


def _named(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.AST]]:
    """Each class and function of `tree` with its dotted qualified name."""
    out: list[tuple[str, ast.AST]] = []
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{child.name}"
            out.append((name, child))
            out += _named(child, f"{name}.")
        elif isinstance(child, ast.Lambda):
            name = f"{prefix}lambda"
            out.append((name, child))
            out += _named(child, f"{name}.")
        else:
            out += _named(child, prefix)
    return out


def violations(source: str, where: str) -> dict[str, str]:
    """Each class, function or lambda of `source` over a limit: `where:name` -> why."""
    out: dict[str, str] = {}
    for name, node in _named(ast.parse(source)):
        key = f"{where}:{name}"
        assert isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        why: list[str] = []
        if isinstance(node, ast.ClassDef):
            if lines > MAX_CLASS_LINES:
                why.append(f"{lines} lines")
        else:
            if lines > MAX_FUNCTION_LINES:
                why.append(f"{lines} lines")
            params = _parameters(node)
            if len(params) > MAX_PARAMETERS:
                why.append(f"{len(params)} parameters")
        if why:
            # Two definitions under one name (a property's setter, a redefinition): both count.
            found = f"line {node.lineno}: " + ", ".join(why)
            out[key] = f"{out[key]}; {found}" if key in out else found
    return out


def _package_violations() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found.update(violations(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix()))
    return found


def test_no_class_function_or_parameter_list_in_the_package_over_its_limit() -> None:
    unlisted = {k: v for k, v in _package_violations().items() if k not in EXCEPTIONS}
    assert unlisted == {}


def test_each_listed_exception_still_breaks_a_limit() -> None:
    found = _package_violations()
    stale = sorted(k for k in EXCEPTIONS if k not in found)
    assert stale == []


def test_the_exception_list_stays_short_and_each_entry_says_why() -> None:
    assert len(EXCEPTIONS) <= 3
    assert all(reason.strip() and "\n" not in reason for reason in EXCEPTIONS.values())


def test_the_size_check_sees_each_kind_of_violation() -> None:
    big_class = "class C:\n" + "    x = 1\n" * MAX_CLASS_LINES
    long_function = "def f():\n" + "    pass\n" * MAX_FUNCTION_LINES
    many = "class K:\n    def g(self, a, b, c, d, e, f, *args):\n        pass\n"
    ok = "def h(self, a, b, c, d, e, f):\n    pass\n"
    nested = "def outer():\n    def inner(a, b, c, d, e, f, g):\n        pass\n"
    twice = "class P:\n    def x(self, a, b, c, d, e, f, g): ...\n    def x(self, a, b, c, d, e, f, g): ...\n"
    assert violations(big_class, "m.py") == {"m.py:C": f"line 1: {MAX_CLASS_LINES + 1} lines"}
    assert violations(long_function, "m.py") == {"m.py:f": f"line 1: {MAX_FUNCTION_LINES + 1} lines"}
    assert violations(many, "m.py") == {"m.py:K.g": "line 2: 7 parameters"}
    assert violations(ok, "m.py") == {}
    assert violations(nested, "m.py") == {"m.py:outer.inner": "line 2: 7 parameters"}
    assert violations(twice, "m.py") == {"m.py:P.x": "line 2: 7 parameters; line 3: 7 parameters"}
