"""Which names a line of code binds: assignments, loop targets, `as` names, local defs.

Line-based and per language family (Python, or the C-like rest), so it works on any text
with or without a tree and costs one cached regex pass per distinct line. The context
engine uses it to find, for the names around the cursor, the line that gave each its
value (a local assigned 80 lines up in a long function, `self.x = ...` in `__init__`)
when that line is outside the kept window.
"""

from __future__ import annotations

import re

from lsp_assist.context.crossfile import IDENT, STOPWORDS

_PY_ASSIGN = re.compile(
    r"^\s*([A-Za-z_][\w.]*(?:\s*,\s*\*?[A-Za-z_][\w.]*)*)\s*,?\s*"
    r"(?::\s*[^=]+?)?(?:[-+*/%&|^@]|//|>>|<<|\*\*)?=(?!=)"
)
_PY_PAREN_ASSIGN = re.compile(r"^\s*[(\[]([\w\s.,*]+)[)\]]\s*=(?!=)")
_PY_FOR = re.compile(r"^\s*(?:async\s+)?for\s+([\w\s.,*()\[\]]+?)\s+in\s")
_PY_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
_AS = re.compile(r"\bas\s+([A-Za-z_]\w*)")
_WALRUS = re.compile(r"([A-Za-z_]\w*)\s*:=")
_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+)?import\s+(.+)$")

_C_DECL = re.compile(r"\b(?:let|const|var|val|auto)\s+(?:mut\s+)?([A-Za-z_$][\w$]*)")
_C_DESTRUCT = re.compile(r"\b(?:let|const|var)\s+[{\[]([^}\]=]*)[}\]]\s*=")
_C_TYPED = re.compile(r"^\s*(?:[\w<>\[\]*&:,.]+\s+)+\**([A-Za-z_]\w*)\s*(?:=(?!=)|;|\[)")
_C_ASSIGN = re.compile(r"^\s*(?:this\.|self\.)?([A-Za-z_$][\w$]*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)")
_C_GO_MULTI = re.compile(r"^\s*([\w\s,]+?)\s*:=")
_C_FUNC = re.compile(
    r"\b(?:function|func|fn|class|struct|interface|type)\s+(?:\([^)]*\)\s*)?\*?([A-Za-z_$][\w$]*)"
)

_NOT_NAMES = STOPWORDS | {"self", "this"}


def _names(text: str) -> list[str]:
    """Bound names in a target list; `a.b` binds `b` (an attribute), `*rest` binds `rest`."""
    out = []
    for target in text.split(","):
        parts = IDENT.findall(target)
        if parts:
            out.append(parts[-1])
    return out


def python_bindings(line: str) -> frozenset[str]:
    names: list[str] = []
    m = _PY_ASSIGN.match(line)
    if m and line.rstrip().endswith(","):
        m = None  # `name=value,` on a continuation line is a keyword argument
    if m:
        names += _names(m.group(1))
    else:
        m = _PY_PAREN_ASSIGN.match(line)
        if m:
            names += _names(m.group(1))
    m = _PY_FOR.match(line)
    if m:
        names += IDENT.findall(m.group(1))
    m = _PY_DEF.match(line)
    if m:
        names.append(m.group(1))
    m = _IMPORT.match(line)
    if m:
        for item in m.group(1).strip("()\\ ").split(","):
            words = item.split()
            if words:
                names.append(words[-1].split(".")[0] if len(words) == 1 else words[-1])
    names += _AS.findall(line)
    names += _WALRUS.findall(line)
    return frozenset(n for n in names if n not in _NOT_NAMES and len(n) > 1)


def clike_bindings(line: str) -> frozenset[str]:
    names: list[str] = list(_C_DECL.findall(line))
    for group in _C_DESTRUCT.findall(line):
        names += IDENT.findall(group)
    for rx in (_C_TYPED, _C_ASSIGN):
        m = rx.match(line)
        if m:
            names.append(m.group(1))
    m = _C_GO_MULTI.match(line)
    if m:
        names += _names(m.group(1))
    names += _C_FUNC.findall(line)
    return frozenset(n for n in names if n not in _NOT_NAMES and len(n) > 1)


class BindingCache:
    """Bound names per line text, per language family (bounded memory)."""

    def __init__(self, limit: int = 50_000) -> None:
        self._py: dict[str, frozenset[str]] = {}
        self._c: dict[str, frozenset[str]] = {}
        self._limit = limit

    def of(self, line: str, python: bool) -> frozenset[str]:
        cache = self._py if python else self._c
        got = cache.get(line)
        if got is None:
            got = python_bindings(line) if python else clike_bindings(line)
            if len(cache) >= self._limit:
                cache.clear()
            cache[line] = got
        return got
