"""One pass over Python source lines: classes, their members and attribute types, imports,
and the variables whose class is known. Input of `context/members.py`.

Line based on purpose (the document being edited rarely parses: the cursor line is half
written), with the two things that break a line-based reading handled: a statement's
continuation lines (inside brackets) and triple-quoted strings are not statements.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

_CLASS = re.compile(r"class\s+([A-Za-z_]\w*)\s*(?:\((.*?)\))?\s*:")
_DEF = re.compile(r"(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\((.*)")
_SELF_ATTR = re.compile(r"\b(self|cls)\.([A-Za-z_]\w*)\s*(?::\s*([A-Za-z_][\w.]*)[^=]*)?=(?!=)\s*(.*)")
_SELF_NAME = re.compile(r"\b(?:self|cls)\.([A-Za-z_]\w*)")
_NAME_ASSIGN = re.compile(r"([A-Za-z_]\w*)\s*(?::\s*([A-Za-z_][\w.]*)[^=]*)?(?:=(?!=)\s*(.*))?$")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_PARAM = re.compile(r"([A-Za-z_]\w*)\s*:\s*([A-Za-z_][\w.]*)")
_IMPORT = re.compile(r"import\s+(.+)")
_FROM = re.compile(r"from\s+(\.*[\w.]*)\s+import\s+\(?([^)#]+)")
_BLOCK_START = re.compile(r"(?:async\s+)?(?:def|class)\s|@")
_STRINGS = re.compile(r"'''|\"\"\"|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"")


@dataclass
class ClassInfo:
    """A class as its source shows it."""

    name: str
    bases: tuple[str, ...]
    members: set[str] = field(default_factory=set)
    attr_types: dict[str, str] = field(default_factory=dict)  # attribute -> class name


@dataclass
class _Block:
    indent: int
    kind: str  # "class" | "def"
    name: str
    params: dict[str, str] = field(default_factory=dict)  # parameter -> annotated class
    first_param: str = ""
    local_vars: dict[str, str] = field(default_factory=dict)  # variable -> class it holds


@dataclass
class Scan:
    """What one pass found. `at_cursor`: the blocks enclosing the cursor line, outermost first."""

    classes: dict[str, ClassInfo] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # local name -> module
    from_names: dict[str, str] = field(default_factory=dict)  # local name -> "module.name"
    variables: dict[str, str] = field(default_factory=dict)  # module-level name -> class
    at_cursor: list[_Block] = field(default_factory=list)


def _bases(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    out = []
    for part in text.split(","):
        part = part.strip()
        if part and "=" not in part:  # `metaclass=ABCMeta` is no base
            out.append(part.split("[")[0].strip())
    return tuple(out)


def _params(text: str) -> tuple[str, dict[str, str]]:
    """(first parameter's name, annotated parameters) of a `def` line."""
    head = text.split(")")[0]
    first = head.split(",")[0].split(":")[0].split("=")[0].strip().lstrip("*")
    return first, {m.group(1): m.group(2) for m in _PARAM.finditer(head)}


def _constructed(value: str, known: dict[str, str]) -> str:
    """The class `value` makes (`Point(1, 2)` -> "Point"), a known parameter's, or ""."""
    value = value.strip()
    m = _CALL.match(value)
    if m:  # a class by the naming convention: `Point(...)`, `shapes.Point(...)`
        return m.group(1) if m.group(1).rsplit(".", 1)[-1][:1].isupper() else ""
    if value.isidentifier():
        return known.get(value, "")
    return ""


class Scanner:
    """Reads lines in order (`feed`), keeping the block stack; see `scan`."""

    def __init__(self, cursor_line: int) -> None:
        self.out = Scan()
        self.stack: list[_Block] = []
        self.cursor_line = cursor_line
        self.depth = 0  # open brackets carried over from earlier lines
        self.in_string: str | None = None  # the triple quote a string opened with
        self.pending: tuple[int, str] | None = None  # (indent, text) of a statement in brackets

    def _structure(self, line: str) -> str:
        """The statement part of `line` (strings and comments blanked)."""
        parts = _STRINGS.split(line)
        quotes = _STRINGS.findall(line)
        code: list[str] = []
        for i, part in enumerate(parts):
            if self.in_string is None:
                code.append(part.split("#")[0] if "#" in part else part)
                if "#" in part:
                    break
            if i < len(quotes):
                q = quotes[i]
                if q in ("'''", '"""'):
                    if self.in_string is None:
                        self.in_string = q
                    elif self.in_string == q:
                        self.in_string = None
                elif self.in_string is None:
                    code.append('""')
        return "".join(code)

    def feed(self, number: int, line: str) -> None:
        starts_in_string = self.in_string is not None
        code = self._structure(line) or ""
        stripped = code.strip()
        if self.depth > 0 and _BLOCK_START.match(stripped):
            self.depth, self.pending = 0, None  # brackets left open above: a new definition
        continued = self.depth > 0
        self.depth = max(0, self.depth + sum(map(code.count, "([{")) - sum(map(code.count, ")]}")))
        if continued and self.pending is not None:
            self.pending = (self.pending[0], f"{self.pending[1]} {stripped}")
            if self.depth == 0:  # the statement is whole: `def f(\n self,\n ...):`
                self._statement(self.pending[1], self.pending[0])
                self.pending = None
        if number == self.cursor_line:
            self.depth, self.pending = 0, None  # the line being typed is rarely closed
        if starts_in_string or continued or not stripped:
            if number == self.cursor_line:
                self._enter_cursor(line)
            return
        indent = len(code) - len(code.lstrip())
        while self.stack and self.stack[-1].indent >= indent:
            self.stack.pop()
        if number == self.cursor_line:
            self.out.at_cursor = list(self.stack)
        if self.depth > 0:  # opens brackets it does not close: wait for the whole statement
            self.pending = (indent, stripped)
            return
        self._statement(stripped, indent)

    def _enter_cursor(self, line: str) -> None:
        indent = len(line) - len(line.lstrip())
        while self.stack and self.stack[-1].indent >= indent and line.strip():
            self.stack.pop()
        self.out.at_cursor = list(self.stack)

    def _owner_class(self) -> ClassInfo | None:
        """The class whose body this statement is directly in."""
        if self.stack and self.stack[-1].kind == "class":
            return self.out.classes.get(self.stack[-1].name)
        return None

    def _method_class(self) -> tuple[ClassInfo, _Block] | None:
        """The class of the method (or function nested in one) this statement is in."""
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].kind == "def" and self.stack[i - 1].kind == "class":
                info = self.out.classes.get(self.stack[i - 1].name)
                return (info, self.stack[i]) if info is not None else None
        return None

    def _statement(self, text: str, indent: int) -> None:
        owner = self._owner_class()
        if m := _CLASS.match(text):
            if owner is not None:
                owner.members.add(m.group(1))
            known = self.out.classes.get(m.group(1))
            if known is None:
                self.out.classes[m.group(1)] = ClassInfo(m.group(1), _bases(m.group(2)))
            else:  # defined twice (`if ...: class X` / `else: class X`): one class with both
                known.bases = tuple(dict.fromkeys((*known.bases, *_bases(m.group(2)))))
            self.stack.append(_Block(indent, "class", m.group(1)))
        elif m := _DEF.match(text):
            if owner is not None:
                owner.members.add(m.group(1))
            first, params = _params(m.group(2))
            self.stack.append(_Block(indent, "def", m.group(1), params, first))
        elif text.startswith(("import ", "from ")):
            if not self.stack:
                self._import(text)
        else:
            self._assignment(text, owner)

    def _import(self, text: str) -> None:
        if m := _FROM.match(text):
            for part in m.group(2).split(","):
                name, _, alias = part.strip().partition(" as ")
                if name.strip().isidentifier():
                    self.out.from_names[(alias or name).strip()] = f"{m.group(1)}.{name.strip()}"
        elif m := _IMPORT.match(text):
            for part in m.group(1).split(","):
                name, _, alias = part.strip().partition(" as ")
                name = name.strip()
                if alias.strip():
                    self.out.modules[alias.strip()] = name
                elif name:
                    self.out.modules[name.split(".")[0]] = name.split(".")[0]

    def _assignment(self, text: str, owner: ClassInfo | None) -> None:
        method = self._method_class()
        if method is not None:
            info, block = method
            # Every `self.x` a method writes or reads: a mixin reads what its users define.
            info.members.update(_SELF_NAME.findall(text))
            if m := _SELF_ATTR.search(text):
                made = m.group(3) or _constructed(m.group(4), block.params)
                if made and m.group(2) not in info.attr_types:
                    info.attr_types[m.group(2)] = made
                return
        if owner is not None:
            _class_level(text, owner)
            return
        m = _NAME_ASSIGN.match(text)
        if m is None:
            return
        func = self.stack[-1] if self.stack and self.stack[-1].kind == "def" else None
        made = m.group(2) or _constructed(m.group(3) or "", func.params if func else {})
        if made and func is not None:
            func.local_vars[m.group(1)] = made
        elif made and not self.stack:
            self.out.variables[m.group(1)] = made


def _class_level(text: str, owner: ClassInfo) -> None:
    """Names a class-body statement binds: `a = 1`, `a, b = 1, 2`, `size: int`."""
    target, eq, value = text.partition("=")
    if eq and not value.startswith("=") and not target.endswith(("!", "<", ">")):
        names = target.split(":")[0]
    elif ":" in text and "(" not in text.split(":")[0]:
        names = text.split(":")[0]  # an annotation without a value
    else:
        return
    for part in names.split(","):
        part = part.strip().strip("()[]").strip()
        if part.isidentifier() and not keyword.iskeyword(part):
            owner.members.add(part)
    m = _NAME_ASSIGN.match(text)
    if m is not None and m.group(2):
        owner.attr_types.setdefault(m.group(1), m.group(2))


def scan(text: str, cursor_line: int) -> Scan:
    """Scan `text`; `cursor_line` (0-based) names the line whose enclosing blocks and whose
    function's variables are kept (-1: none, e.g. another file's outline)."""
    scanner = Scanner(cursor_line)
    for number, line in enumerate(text.splitlines()):
        scanner.feed(number, line)
    return scanner.out


__all__ = ["ClassInfo", "Scan", "Scanner", "scan"]
