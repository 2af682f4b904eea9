"""What may follow `x.` at the cursor: a receiver expression resolved to the names it has.

`MemberScope(text, cursor_line)` answers `members_of("self.center")` with the members known
for sure, or None when the receiver is unknown, or when its members cannot all be known (a
class with a base defined elsewhere, a module whose names are made at run time): a partial
list would forbid names that exist, so "unknown" is always the answer then. Python only.

Resolved, from the document (`context/python_scan.py`) and other files' outlines:
- `self` / `cls` in a method (or in a function nested in one): the enclosing class's methods,
  class attributes and `self.x = ...` attributes of all its methods, with its bases';
- a class name: its members; an instance variable `p = Point(...)` or a parameter
  `p: Point`: Point's members; `self.center` when `self.center = Point(...)` (or
  `center: Point`) says what it holds;
- an imported standard-library module: its names (`context/module_names.py`).

The scan runs lazily, on the first `members_of` (on the model's worker thread: only a
generation that writes `x.` pays it), once per document text.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Sequence
from functools import lru_cache

from lsp_assist.context.module_names import module_names
from lsp_assist.context.python_scan import ClassInfo, Scan, scan

# Every instance has these (`x.__class__`); listed so that they stay writable.
OBJECT_NAMES = frozenset(dir(object))
# Bases that add nothing a member access would name, or what they add.
KNOWN_BASES: dict[str, frozenset[str]] = {
    "object": frozenset(),
    "ABC": frozenset(),
    "abc.ABC": frozenset(),
    "Protocol": frozenset(),
    "typing.Protocol": frozenset(),
    "Generic": frozenset(),
    "typing.Generic": frozenset(),
    "NamedTuple": frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults", "count", "index"}),
    "typing.NamedTuple": frozenset(
        {"_asdict", "_replace", "_fields", "_make", "_field_defaults", "count", "index"}
    ),
    "Enum": frozenset({"name", "value", "_name_", "_value_", "_member_map_", "_member_names_"}),
    "enum.Enum": frozenset({"name", "value", "_name_", "_value_", "_member_map_", "_member_names_"}),
    "Exception": frozenset(dir(Exception)),
    "ValueError": frozenset(dir(ValueError)),
    "RuntimeError": frozenset(dir(RuntimeError)),
}
MAX_DEPTH = 8  # bases and attribute chains followed at most this deep
_BUILTIN_TYPES = {
    name: frozenset(dir(getattr(builtins, name)))
    for name in ("str", "int", "float", "bytes", "list", "dict", "set")
}


@lru_cache(maxsize=2)  # the document now and just before: a cache that holds two texts at most
def _scan(text: str, cursor_line: int) -> Scan:
    return scan(text, cursor_line)


class MemberScope:
    """Receivers at one cursor of one Python text; see the module docstring."""

    def __init__(self, text: str, cursor_line: int, others: Sequence[str] = ()) -> None:
        self._text = text
        self._cursor_line = cursor_line
        self._others = tuple(others)
        self._lock = threading.Lock()
        self._scan: Scan | None = None
        self._classes: dict[str, ClassInfo] = {}

    def _ready(self) -> Scan:
        with self._lock:
            if self._scan is None:
                found = _scan(self._text, self._cursor_line)
                classes: dict[str, ClassInfo] = {}
                for other in self._others:  # outlines of other files: their classes only
                    classes.update(_scan(other, -1).classes)
                classes.update(found.classes)  # the file's own win
                self._classes = classes
                self._scan = found
            return self._scan

    def members_of(self, receiver: str) -> frozenset[str] | None:
        """The names that may follow `receiver.`, or None when not known for sure."""
        parts = receiver.split(".")
        if not all(p.isidentifier() for p in parts):
            return None
        found = self._ready()
        kind, value = self._head(found, parts[0])
        for i, attr in enumerate(parts[1:], start=1):
            if kind == "module":
                sub = f"{value}.{attr}"
                names = module_names(value)
                if names is None or attr not in names:
                    return None
                if module_names(sub) is not None:
                    value = sub
                    continue
                return None  # an attribute of a module whose type is not known
            if kind != "instance" or i > MAX_DEPTH:
                return None
            cls = self._classes.get(value)
            value = self._attr_type(cls, attr) if cls is not None else ""
            if not value:
                return None
        if kind == "module":
            return module_names(value)
        if kind in ("instance", "class"):
            return self._class_members(value, 0)
        return None

    def _head(self, found: Scan, name: str) -> tuple[str, str]:
        """("instance" | "class" | "module" | "", class or module name) for the first name."""
        blocks = found.at_cursor
        for i in range(len(blocks) - 1, 0, -1):
            block, outer = blocks[i], blocks[i - 1]
            if block.kind == "def" and outer.kind == "class" and name == block.first_param:
                return "instance", outer.name
        for block in reversed(blocks):
            if block.kind == "def":
                held = block.local_vars.get(name) or block.params.get(name)
                if held:
                    return "instance", held
        if name in found.variables:
            return "instance", found.variables[name]
        if name in self._classes:
            return "class", name
        if name in found.modules:
            return "module", found.modules[name]
        if name in found.from_names:
            target = found.from_names[name]
            if not target.startswith(".") and module_names(target) is not None:
                return "module", target
        return "", ""

    def _attr_type(self, cls: ClassInfo, attr: str) -> str:
        if attr in cls.attr_types:
            return cls.attr_types[attr]
        for base in cls.bases:
            info = self._classes.get(base)
            if info is not None and info is not cls:
                got = self._attr_type(info, attr)
                if got:
                    return got
        return ""

    def _class_members(self, name: str, depth: int) -> frozenset[str] | None:
        name = name.strip("'\"")
        if name in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[name]
        info = self._classes.get(name) or self._classes.get(name.rsplit(".", 1)[-1])
        if info is None or depth > MAX_DEPTH:
            return None
        names = set(info.members) | OBJECT_NAMES
        for base in info.bases:
            if base in KNOWN_BASES:
                names |= KNOWN_BASES[base]
                continue
            inherited = self._class_members(base, depth + 1)
            if inherited is None:
                return None  # a base defined elsewhere: its members are not all known
            names |= inherited
        return frozenset(names)


__all__ = ["KNOWN_BASES", "OBJECT_NAMES", "MemberScope"]
