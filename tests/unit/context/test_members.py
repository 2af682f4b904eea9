"""Receivers resolved to the members they have (context/members.py), and "unknown" wherever
a list could be incomplete (a partial list would forbid names that exist)."""

from __future__ import annotations

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.members import MemberScope
from lsp_assist.context.module_names import module_names
from lsp_assist.domain import Cursor

SHAPES = '''import json
import os.path as osp
from collections import OrderedDict
from xml.etree import ElementTree


class Point:
    """A point.

    class Decoy:
        def not_a_member(self): ...
    """

    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def distance_to(self, other: "Point") -> float:
        return ((self.x - other.x) ** 2 + (self.y - other.y) ** 2) ** 0.5


class Shape:
    sides = 0

    def area(self) -> float:
        raise NotImplementedError


class Circle(Shape):
    unit: str = "cm"

    def __init__(self, center: Point, radius: float) -> None:
        self.center = center
        self.radius = radius
        self._cache, self._hits = (
            {},
        0)

    def grow(self, by):
        self.label = Point(0, 0)

    def contains(self, point: Point) -> bool:
        p = Point(1, 2)
        return self.center.
'''

CURSOR = len(SHAPES.splitlines()) - 1


def _public(names: frozenset[str] | None) -> set[str] | None:
    return None if names is None else {n for n in names if not n.startswith("__")}


def test_self_is_the_enclosing_class_with_its_bases_and_assigned_attributes() -> None:
    scope = MemberScope(SHAPES, CURSOR)
    got = _public(scope.members_of("self"))
    assert got == {
        "unit",
        "center",
        "radius",
        "_cache",
        "_hits",
        "grow",
        "label",
        "contains",
        "area",
        "sides",
    }
    assert "__class__" in (scope.members_of("self") or ())  # every object has them


def test_attributes_parameters_and_variables_hold_the_class_they_were_given() -> None:
    scope = MemberScope(SHAPES, CURSOR)
    point = {"x", "y", "distance_to"}
    assert _public(scope.members_of("self.center")) == point  # `center: Point` parameter
    assert _public(scope.members_of("self.label")) == point  # `Point(0, 0)`
    assert _public(scope.members_of("point")) == point
    assert _public(scope.members_of("p")) == point
    assert _public(scope.members_of("Circle")) == _public(scope.members_of("self"))
    assert "is_integer" in (scope.members_of("self.radius") or ())  # a float
    assert "not_a_member" not in (scope.members_of("Point") or ())  # inside a docstring


def test_unknown_receivers_and_partly_known_classes_give_no_answer() -> None:
    text = "from somewhere import Base\n\nclass Mine(Base):\n    def go(self):\n        self.\n"
    scope = MemberScope(text, 4)
    assert scope.members_of("self") is None  # Base's members are not known
    assert scope.members_of("nothing") is None
    assert scope.members_of("self.missing") is None
    other = MemberScope(SHAPES, CURSOR)
    assert other.members_of("self.x") is None  # Circle has no `x`: no type to follow
    assert other.members_of("OrderedDict") is None  # a class from a module: not listed
    assert other.members_of("1x") is None


def test_imported_standard_modules_list_their_names_from_source() -> None:
    scope = MemberScope(SHAPES, CURSOR)
    js = scope.members_of("json")
    assert js is not None and {"dumps", "loads", "JSONDecoder", "decoder"} <= js
    assert "dump_all" not in js
    path = scope.members_of("osp")
    assert path is not None and {"join", "dirname", "exists"} <= path
    assert scope.members_of("json.decoder") == module_names("json.decoder")
    assert {"parse", "fromstring"} <= (scope.members_of("ElementTree") or set())
    assert module_names("numpy") is None  # not the standard library: never imported
    assert {"sqrt", "pi"} <= (module_names("math") or set())  # compiled, CPython's own
    # `from posix import *` (compiled) is followed; `from nt import *` (Windows) adds nothing.
    assert {"getcwd", "listdir", "path", "sep"} <= (module_names("os") or set())
    assert module_names("unittest") is None  # a module `__getattr__` makes names on demand


def test_a_class_from_another_files_outline_is_known_but_self_stays_this_files() -> None:
    outline = "class Vector:\n    def norm(self) -> float\n    def dot(self, other)\n"
    text = "from vec import Vector\n\n\ndef f(v: Vector):\n    return v.\n"
    scope = MemberScope(text, 4, [outline])
    assert _public(scope.members_of("v")) == {"norm", "dot"}


def test_the_context_engine_attaches_a_scope_to_python_prompts_only() -> None:
    engine = ContextEngine()
    ctx = engine.build_from_text(SHAPES, "python", "/tmp/shapes.py", Cursor(CURSOR, 30), 4000)
    assert ctx.members is not None
    assert "distance_to" in (ctx.members.members_of("self.center") or ())
    js = engine.build_from_text("const a = b.\n", "javascript", "/tmp/a.js", Cursor(0, 12), 4000)
    assert js.members is None


def test_a_mixin_has_the_names_its_methods_read() -> None:
    text = (
        "class LockMixin:\n"
        "    async def __aenter__(self):\n"
        "        await self.acquire()\n"
        "        return self._owner.name\n"
        "\n"
        "    def __exit__(self, *exc):\n"
        "        x = self.\n"
    )
    assert {"acquire", "_owner", "__aenter__", "__exit__"} <= (
        MemberScope(text, 6).members_of("self") or set()
    )


def test_class_bodies_bind_what_they_assign_or_annotate_and_nothing_else() -> None:
    text = (
        "class Config:\n"
        "    width, height = 80, 24\n"
        "    name: str\n"
        "    pass\n"
        "    if width == 80:\n"
        "        wide = True\n"
        "    print(width)\n"
        "\n"
        "    def show(self):\n"
        "        return self.\n"
    )
    got = _public(MemberScope(text, 9).members_of("self"))
    assert got == {"width", "height", "name", "wide", "show"}  # `wide`: when the `if` holds
    assert "upper" in (MemberScope(text, 9).members_of("self.name") or ())  # annotated `str`


def test_a_class_defined_twice_has_the_names_of_both_definitions() -> None:
    text = (
        "import sys\n"
        "if sys.platform == 'win32':\n"
        "    class Runner:\n"
        "        def spawn(self):\n"
        "            return self.\n"
        "else:\n"
        "    class Runner:\n"
        "        def fork(self):\n"
        "            pass\n"
    )
    assert {"spawn", "fork"} <= (MemberScope(text, 4).members_of("self") or set())


def test_statements_over_several_lines_and_an_open_cursor_line_are_read_whole() -> None:
    text = (
        "class Point:\n"
        "    def __init__(\n"
        "        self,\n"
        "        x: float,\n"
        "    ) -> None:\n"
        "        self.x = x\n"
        "\n"
        "\n"
        "class Circle(\n"
        "    Point,\n"
        "):\n"
        "    def __init__(\n"
        "        self,\n"
        "        center: Point,\n"
        "    ) -> None:\n"
        "        self.center = center\n"
        "\n"
        "    def contains(self, point):\n"
        "        return max(self.\n"  # the line being typed: its bracket stays open
        "\n"
        "    def later(self):\n"
        "        pass\n"
    )
    scope = MemberScope(text, 18)
    assert _public(scope.members_of("self")) == {"x", "center", "contains", "later"}
    assert _public(scope.members_of("self.center")) == {"x"}
