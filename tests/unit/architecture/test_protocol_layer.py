"""The LSP surface stays thin: only `lsp_assist/protocol/` imports pygls or lsprotocol, and
no function there is over 40 lines (a handler converts in, calls one function below and
converts back; what is longer belongs below the protocol)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "lsp_assist"
PROTOCOL = PACKAGE / "protocol"
MAX_FUNCTION_LINES = 40
LSP_LIBRARIES = ("pygls", "lsprotocol")


def long_functions(source: str, where: str) -> list[str]:
    """Each function (nested ones too) of `source` over the limit, as `where:line name: n lines`."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                out.append(f"{where}:{node.lineno} {node.name}: {lines} lines")
    return out


def lsp_imports(source: str, where: str) -> list[str]:
    """Each import of pygls or lsprotocol in `source` (also inside functions)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        out += [f"{where}:{node.lineno} {n}" for n in names if n.split(".")[0] in LSP_LIBRARIES]
    return out


def test_no_function_in_protocol_over_40_lines() -> None:
    found = [
        v
        for path in sorted(PROTOCOL.rglob("*.py"))
        for v in long_functions(path.read_text(encoding="utf-8"), str(path.relative_to(PROTOCOL)))
    ]
    assert found == []


def test_only_protocol_imports_pygls_or_lsprotocol() -> None:
    found = [
        v
        for path in sorted(PACKAGE.rglob("*.py"))
        if PROTOCOL not in path.parents
        for v in lsp_imports(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    ]
    assert found == []


def test_the_checks_see_what_they_guard() -> None:
    body = "    pass\n" * MAX_FUNCTION_LINES
    assert long_functions("async def f():\n" + body, "m.py") == [f"m.py:1 f: {MAX_FUNCTION_LINES + 1} lines"]
    assert long_functions("def g():\n" + "    pass\n" * (MAX_FUNCTION_LINES - 1), "m.py") == []
    nested = "def outer():\n    def inner():\n" + "        pass\n" * MAX_FUNCTION_LINES
    assert [v.split(" ")[1] for v in long_functions(nested, "m.py")] == ["outer:", "inner:"]
    source = (
        "import pygls.io_\nfrom lsprotocol import types\nfrom .x import y\n\ndef f():\n    import pygls\n"
    )
    assert lsp_imports(source, "m.py") == ["m.py:1 pygls.io_", "m.py:2 lsprotocol", "m.py:6 pygls"]
    assert lsp_imports("import pyglsx\nfrom lsp_assist import protocol\n", "m.py") == []
