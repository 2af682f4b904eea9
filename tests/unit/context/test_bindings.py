"""Line-based binding detection and the prose/definition steps of the context engine."""

from __future__ import annotations

import pytest

from lsp_assist.context import builder
from lsp_assist.context.bindings import BindingCache, clike_bindings, python_bindings
from lsp_assist.context.builder import ContextEngine
from lsp_assist.domain import Cursor


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("    self.attr = 1", {"attr"}),
        ("    ab, cd = f()", {"ab", "cd"}),
        ("    for ii, (kk, vv) in enumerate(xs):", {"ii", "kk", "vv"}),
        ("    with open(path) as fh:", {"fh"}),
        ("from .foo import bar, baz as qux", {"bar", "qux"}),
        ("import os.path", {"os"}),
        ("    total += step", {"total"}),
        ("    count: int = 3", {"count"}),
        ("    if (nn := len(a)) > 3:", {"nn"}),
        ("    strict=True,", set()),  # a keyword argument, not an assignment
        ("    foo(arg=1)", set()),
        ("    left == right", set()),
    ],
)
def test_python_bindings(line: str, names: set[str]) -> None:
    assert python_bindings(line) == names


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("  const foo = 1;", {"foo"}),
        ("  int count = 0;", {"count"}),
        ("  val, err := f()", {"val", "err"}),
        ("  this.name = n;", {"name"}),
        ("func (s *S) Run() error {", {"Run"}),
        ("  if (a == b) {", set()),
    ],
)
def test_clike_bindings(line: str, names: set[str]) -> None:
    assert clike_bindings(line) == names


def test_binding_cache_is_bounded() -> None:
    cache = BindingCache(limit=2)
    for i in range(5):
        assert cache.of(f"name_{i} = 1", True) == {f"name_{i}"}
    assert len(cache._py) <= 2


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


def test_definitions_step_adds_the_binding_line(monkeypatch: pytest.MonkeyPatch) -> None:
    text, cursor = _long_function(False)
    text = text.replace("    return 1\n", "    return cached_value\n")
    monkeypatch.setattr(builder, "DEFS_SHARE", 0.2)
    ctx = ContextEngine().build_from_text(text, "python", "/p/m.py", cursor, 700)
    labels = {p.label for p in ctx.parts}
    assert "definitions" in labels
    assert "cached_value = load(source)" in ctx.prefix
    assert sum(p.chars for p in ctx.parts) == ctx.size <= 700
    monkeypatch.setattr(builder, "DEFS_SHARE", 0.0)
    ctx = ContextEngine().build_from_text(text, "python", "/p/m.py", cursor, 700)
    assert "definitions" not in {p.label for p in ctx.parts}
