"""The prose step of the context engine: other definitions' docstrings are stepped over."""

from __future__ import annotations

from lsp_assist.context.builder import ContextEngine
from lsp_assist.domain import Cursor


def _long_function(with_docstring_above: bool) -> tuple[str, Cursor]:
    doc = '    """' + "\n".join(["    prose line words here"] * 12) + '\n    """\n'
    other = "def other(a):\n" + (doc if with_docstring_above else "") + "    return a\n\n\n"
    body = "".join(f"    step_{i} = compute_{i}(source)\n" for i in range(60))
    text = other + "def target(source):\n    cached_value = load(source)\n" + body + "    \n    return 1\n"
    row = text.split("\n").index("    ") if "    " in text.split("\n") else 0
    return text, Cursor(row, 4)


def test_other_definitions_docstring_is_stepped_over() -> None:
    text, cursor = _long_function(True)
    ctx = ContextEngine().build_from_text(text, "python", "/p/m.py", cursor, 8000)
    assert "def other(a):" in ctx.prefix and "return a" in ctx.prefix
    assert "prose line words here" not in ctx.prefix
    assert ctx.size <= 8000


def test_own_docstring_is_kept() -> None:
    text = 'def target(x):\n    """Doc\n    more\n    more.\n    """\n    y = x\n    \n'
    ctx = ContextEngine().build_from_text(text, "python", "/p/m.py", Cursor(6, 4), 4000)
    assert '"""Doc' in ctx.prefix
