"""The per-language rules the context engine reads: definitions, outlines, imports.

`LangSpec` (symbols: `structure/symbols.py`) and `OutlineRules` (outlines: `structure/outline.py`)
are plain data, one of each per language on its `LanguageProfile`; the walkers that read
them know nothing about any one language. All node types are tree-sitter's names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from lsp_assist.languages.imports import ImportStyle


@dataclass(frozen=True)
class LangSpec:
    """Where definitions and imports live in one grammar."""

    defs: dict[str, str]  # node type -> kind
    containers: frozenset[str]  # definitions whose body holds more definitions
    transparent: frozenset[str]  # wrappers to look through (decorators, export, bodies)
    imports: frozenset[str]
    variables: frozenset[str]  # top-level declarations whose names are variables
    #: a statement that defines a variable by assignment (`x = 1`: its left identifier)
    assignments: str | None = None
    #: where a declaration's names are: under "variable_declarator" children (Java) or in
    #: its "declarator" field (C, C++); None: neither kind of declaration
    declaration_names: str | None = None
    #: declarations inside a container are variables too (not Python's class-level lines)
    member_variables: bool = True
    #: top-level blocks whose bodies hold definitions (`if TYPE_CHECKING:`, `try: import`)
    top_level_blocks: frozenset[str] = frozenset()
    #: a variable declaration with a function declarator is a prototype: a function
    prototypes: bool = False


@dataclass(frozen=True)
class OutlineRules:
    """How one grammar spells definitions. All node types are tree-sitter's names."""

    #: definition node type -> kind (function, class, type, enum, constant, field, member...)
    defs: Mapping[str, str]
    #: definitions whose body holds member definitions (classes, structs, enums, impls...)
    containers: frozenset[str]
    #: node types that hold the members of a container (looked for under the `body`
    #: field, then under the `type` field: `typedef struct {...}`, Go's `type T struct`)
    bodies: frozenset[str]
    #: wrappers looked through at any level (decorators, export, preprocessor blocks)
    transparent: frozenset[str] = frozenset()
    #: assignments to instance attributes inside methods (group 1 is the name)
    self_attr: str | None = None
    #: node types whose whole first line is the entry (fields, enum members, constants)
    one_line: frozenset[str] = frozenset()
    #: text put before a definition whose keyword lives in the parent node
    prefix: Mapping[str, str] = field(default_factory=dict)
    #: python-style: a top-level assignment is a constant only when its name is upper case
    constants_upper_only: bool = False
    #: an entry whose text matches is invisible from other files (Java's `private`);
    #: so are its members
    hidden: str | None = None
    #: containers looked through when they have no name (C++ `namespace { ... }`, C's
    #: `enum { A, B };`): their members are entries where the container stands
    unnamed_transparent: frozenset[str] = frozenset()
    #: containers that without a body only declare a name defined elsewhere (C/C++
    #: `class Env;`): no entry, so the definition (here or in another file) is the one
    forward: frozenset[str] = frozenset()
    #: modifiers that make a constructor's parameter a field of its class (TypeScript's
    #: parameter properties: `constructor(private http: Http)`), listed as its members
    param_members: frozenset[str] = frozenset()
    #: definitions that may introduce several names (Go's `X, Y int` field, `a, b = 1, 2`
    #: constants): one entry per name, each with the definition's line
    multi_name: frozenset[str] = frozenset()
    #: a top-level method's receiver type in its entry (group 1; Go's `func (c *Conn) Close()`):
    #: ranked as a member of that type
    receiver: str | None = None
    #: wrappers whose definitions form one group (Go's `const ( ... )` block: the values of
    #: one enumeration): a line that needs one often needs another (see `rank_entries`)
    groups: frozenset[str] = frozenset()
    #: the types an entry's text gives its name (a field's, a variable's, a function's
    #: results: `config *Config`, `func newT() (*T, error)`) say which types the code at
    #: the cursor holds when it uses that name: their members rank as used ones
    typed: bool = False
    #: `self.__x` is `_Owner__x` outside its class (Python): no other file spells a member
    #: named with two leading underscores
    name_mangling: bool = False


@dataclass(frozen=True)
class ImportRule:
    """One way a language spells an import: `pattern`'s groups `module` and optional `names`."""

    pattern: re.Pattern[str]
    style: ImportStyle  # what a match names and which files it reaches (`imports.py`)
    #: matched against the head's joined text, not per line (a statement spanning lines:
    #: Rust's `use crate::{a, b::{c, d}};`)
    statement: bool = False
