"""Compact outlines of files: the names a line may need, one short line each.

An outline lists a file's top-level definitions with their signatures (no bodies), each
class's members with theirs, enum members, module constants and the `self.x` / `this.x`
attributes its methods assign. It is extracted once per document version (an open tab)
or per file content (the workspace index), never per request: a request only ranks the
ready entries and renders the best ones that fit (`context/outline_rank.py`), in file
order, cut at whole entries.

What counts as a definition, a container and a member is data, per grammar
(`RULES`); the walker below knows nothing about any one language.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from tree_sitter import Node, Parser, Tree

from lsp_assist.languages import IDENTIFIER_NODE_TYPES, PROFILES, canonical, get_language
from lsp_assist.languages.rules import OutlineRules
from lsp_assist.memory import ByteLRU, set_bytes

log = logging.getLogger(__name__)

MAX_ENTRY_CHARS = 150  # one entry is one line; longer signatures are cut at a token
MAX_ENTRIES = 400  # per file: a generated file does not flood memory
MAX_WALK_NODES = 20_000
MAX_ATTR_SCAN_BYTES = 20_000  # per method: `self.x =` lines are near the top of bodies
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


# Declarations whose type may be a macro's (`Array(T)`): `_macro_typed_name`.
_MACRO_TYPED = frozenset({"type_definition", "field_declaration", "declaration"})


#: Outline rules per canonical language name (from the language profiles).
RULES: dict[str, OutlineRules] = {p.name: p.outline for p in PROFILES if p.outline is not None}

# Outlines also name JS private fields (#x) and C++ namespaces.
_NAME_TYPES = IDENTIFIER_NODE_TYPES | {"private_property_identifier", "namespace_identifier"}
_SPACES = re.compile(r"\s+")


class OutlineEntry(NamedTuple):
    """One line of an outline. `owner` is the index of the container entry, -1 at top level."""

    name: str
    kind: str
    depth: int
    text: str  # without indentation; `render` indents by depth
    owner: int
    group: int = -1  # entries of one declaration group (`OutlineRules.groups`) share it; -1 none


@dataclass(frozen=True)
class FileOutline:
    """The outline of one file at one version (`version` is opaque: (uri, n) or a hash)."""

    path: str
    language: str
    entries: tuple[OutlineEntry, ...]
    version: object = None

    def names(self) -> frozenset[str]:
        got: frozenset[str] | None = self.__dict__.get("_names")
        if got is None:
            got = frozenset(e.name for e in self.entries)
            object.__setattr__(self, "_names", got)  # cached: a frozen dataclass
        return got

    def hidden(self) -> frozenset[int]:
        """Entries other files cannot see (private members and everything inside them)."""
        got: frozenset[int] | None = self.__dict__.get("_hidden")
        if got is None:
            rules = rules_for(self.language)
            pattern = re.compile(rules.hidden) if rules is not None and rules.hidden else None
            out: set[int] = set()
            if pattern is not None:
                for i, e in enumerate(self.entries):  # owners come before their members
                    if (e.owner >= 0 and e.owner in out) or pattern.search(e.text):
                        out.add(i)
            got = frozenset(out)
            object.__setattr__(self, "_hidden", got)
        return got

    def families(self) -> tuple[str, ...]:
        """Per entry, its family stem ("" for none): see `family_of`."""
        got: tuple[str, ...] | None = self.__dict__.get("_families")
        if got is None:
            got = tuple(family_of(e.name) for e in self.entries)
            object.__setattr__(self, "_families", got)
        return got

    def parents(self) -> tuple[str | None, ...]:
        """Per entry, the name of the type it belongs to: its container's, or a top-level
        method's receiver type (`rules.receiver`); None at top level."""
        got: tuple[str | None, ...] | None = self.__dict__.get("_parents")
        if got is None:
            rules = rules_for(self.language)
            pattern = re.compile(rules.receiver) if rules is not None and rules.receiver else None
            out: list[str | None] = []
            for e in self.entries:
                if e.owner >= 0:
                    out.append(self.entries[e.owner].name)
                    continue
                m = pattern.match(e.text) if pattern is not None and e.kind == "method" else None
                out.append(m.group(1) if m else None)
            got = tuple(out)
            object.__setattr__(self, "_parents", got)
        return got

    def group_names(self) -> dict[int, frozenset[str]]:
        """The names of each declaration group (`OutlineEntry.group`)."""
        got: dict[int, frozenset[str]] | None = self.__dict__.get("_groups")
        if got is None:
            members: dict[int, set[str]] = {}
            for e in self.entries:
                if e.group >= 0:
                    members.setdefault(e.group, set()).add(e.name)
            got = {g: frozenset(names) for g, names in members.items()}
            object.__setattr__(self, "_groups", got)
        return got

    def group_types(self) -> dict[int, frozenset[str]]:
        """The types the entries of each declaration group give their names (a typed
        enumeration's: `NoClientCert ClientAuthType = iota`)."""
        got: dict[int, frozenset[str]] | None = self.__dict__.get("_group_types")
        if got is None:
            types = self.types_by_name()
            members = self.group_names()
            got = {
                g: frozenset().union(*(types.get(n, frozenset()) for n in names))
                for g, names in members.items()
            }
            object.__setattr__(self, "_group_types", got)
        return got

    def types_by_name(self) -> dict[str, frozenset[str]]:
        """Per name, the types its entries' texts give it (`OutlineRules.typed`; {} when the
        language has no such rule)."""
        got: dict[str, frozenset[str]] | None = self.__dict__.get("_types")
        if got is None:
            rules = rules_for(self.language)
            out: dict[str, set[str]] = {}
            if rules is not None and rules.typed:
                for e in self.entries:
                    types = _entry_types(e)
                    if types:
                        out.setdefault(e.name, set()).update(types)
            got = {n: frozenset(t) for n, t in out.items()}
            object.__setattr__(self, "_types", got)
        return got

    def visible_top_names(self) -> tuple[str, ...]:
        """The top-level names other files can see, in file order (the package prior reads
        every file of the package per computation: kept, not walked again)."""
        got: tuple[str, ...] | None = self.__dict__.get("_visible_top")
        if got is None:
            hidden = self.hidden()
            got = tuple(e.name for i, e in enumerate(self.entries) if e.owner < 0 and i not in hidden)
            object.__setattr__(self, "_visible_top", got)
        return got

    def top_names(self) -> frozenset[str]:
        """The top-level names: how another file reaches this one (`module.name`, a class)."""
        got: frozenset[str] | None = self.__dict__.get("_top")
        if got is None:
            got = frozenset(e.name for e in self.entries if e.owner < 0)
            object.__setattr__(self, "_top", got)
        return got


# Pure functions of a name, asked again per file read: memoized, in bytes (a name can be
# as long as a minified line's longest run of word characters).
NAME_MEMO_BYTES = 2 << 20  # per function: ~10,000 names


def _family_bytes(name: str, stem: str) -> int:
    return sys.getsizeof(name) + sys.getsizeof(stem)


def _tail_bytes(name: str, words: frozenset[str]) -> int:
    return sys.getsizeof(name) + set_bytes(words)


_FAMILIES: ByteLRU[str, str] = ByteLRU(NAME_MEMO_BYTES, _family_bytes)
_TAILS: ByteLRU[str, frozenset[str]] = ByteLRU(NAME_MEMO_BYTES, _tail_bytes)


def family_of(name: str) -> str:
    """The stem that ties a name to its siblings: all its words but the last, lower case
    (`directoryHeaderLen` -> "directory|header", `TYPE_BLOCK` and `TypeBlock` -> "type");
    "" for a one-word name or a stem too short to say anything (`getX`, `is_ok`)."""
    got = _FAMILIES.get(name)
    if got is None:
        words = _WORD.findall(name)
        stem = "|".join(w.lower() for w in words[:-1]) if len(words) >= 2 else ""
        got = stem if len(stem) >= 4 else ""
        _FAMILIES.put(name, got)
    return got


def tail_words(name: str) -> frozenset[str]:
    """The words that tell a name from its family's other names, lower case: those past its
    first two (`ts_subtree_total_bytes` -> total, bytes), or all of a name of one or two
    (a struct's `field_names` -> field, names)."""
    got = _TAILS.get(name)
    if got is None:
        words = _WORD.findall(name)
        got = frozenset(w.lower() for w in (words[2:] if len(words) > 2 else words))
        _TAILS.put(name, got)
    return got


def name_memo_bytes() -> int:
    """What the two memos above hold (for the server's memory report)."""
    return _FAMILIES.nbytes + _TAILS.nbytes


def words_of(names: Iterable[str]) -> frozenset[str]:
    return frozenset(w.lower() for n in names for w in _WORD.findall(n))


def families_of(names: Iterable[str]) -> frozenset[str]:
    return frozenset(f for f in map(family_of, names) if f)


# Words of a signature that are not type names (Go's keywords and its predeclared types).
_NOT_TYPES = frozenset(
    "func var const type struct interface map chan any error bool string byte rune int int8 int16"
    " int32 int64 uint uint8 uint16 uint32 uint64 uintptr float32 float64 complex64 complex128 iota"
    " nil true false".split()
)
_NAMED = re.compile(r"\b\w+\s+(?=[\w*\[(]|\.\.\.)")  # `(t *T, err error)`: t and err name results
_MORE_NAMES = re.compile(r"^(?:\s*,\s*\w+)+")
_TYPE_TOKEN = re.compile(r"[A-Za-z_][\w.]*")
_WORDS = re.compile(r"\w+")
_STRING_LITERAL = re.compile(r"\"(?:\\.|[^\"\\])*\"|`[^`]*`|'(?:\\.|[^'\\])*'")


def _entry_types(e: OutlineEntry) -> frozenset[str]:
    """The type names an entry's text gives its name: what follows the name, less a
    function's parameters (`func (c *Conn) f(x int) (*T, error)` -> {T}), string literals,
    qualified names (another package's `tls.Config`) and keywords."""
    if e.kind not in ("field", "constant", "function", "method"):
        return frozenset()
    text = e.text
    # The first whole word that is the name (`\bname\b`, without compiling a pattern per
    # name: an outline's first `types_by_name` ran hundreds of `re.compile`s, past the deadline).
    at = next((m for m in _WORDS.finditer(text) if m.group() == e.name), None)
    if at is None:
        return frozenset()
    rest = text[at.end() :]
    if e.kind in ("function", "method"):
        if rest.startswith("["):
            rest = _after_group(rest, "[")  # type parameters, then the parameters
        if rest.startswith("("):
            rest = _after_group(rest, "(")
    else:
        rest = _MORE_NAMES.sub("", rest)  # `X, Y int`: Y is a name, not a type
    rest = _NAMED.sub(" ", _STRING_LITERAL.sub(" ", rest))
    return frozenset(
        t for t in _TYPE_TOKEN.findall(rest) if "." not in t and t not in _NOT_TYPES and t != e.name
    )


def _after_group(text: str, opening: str) -> str:
    """`text` past the bracket group it starts with (all of it when unbalanced: cut)."""
    closing = ")" if opening == "(" else "]"
    depth = 0
    for k, ch in enumerate(text):
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return text[k + 1 :].lstrip()
    return ""


def used_types(outlines: Iterable[FileOutline | None], names: frozenset[str]) -> frozenset[str]:
    """The types that the entries named `names` give them, over `outlines`: what the code
    using those names holds (a receiver's `c.config` is a `*Config`, `tw := newTW()` a `*TW`)."""
    out: set[str] = set()
    for outline in outlines:
        if outline is None or not outline.types_by_name():
            continue
        types = outline.types_by_name()
        small, big = (names, types) if len(names) < len(types) else (types.keys(), names)
        for n in small:
            if n in big:
                out |= types[n]
    return frozenset(out - names)


def rules_for(language_id: str) -> OutlineRules | None:
    name = canonical(language_id)
    return RULES.get(name) if name else None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _name_of(node: Node) -> str:
    """The name a definition introduces: its `name` field, else along its declarators."""
    t = node.type
    if t == "property_identifier":
        return _decode(node.text or b"")
    if t == "impl_item":
        trait, typ = node.child_by_field_name("trait"), node.child_by_field_name("type")
        target = typ if typ is not None else trait
        return _decode(target.text or b"") if target is not None else ""
    if t == "expression_statement":  # python: NAME = value / NAME: type = value
        first = node.named_children[0] if node.named_child_count else None
        if first is not None and first.type == "assignment":
            left = first.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                return _decode(left.text or b"")
        if first is not None and first.type == "assignment_expression":  # JS: `obj.name = value`
            left = first.child_by_field_name("left")
            prop = left.child_by_field_name("property") if left is not None else None
            if left is not None and left.type == "member_expression" and prop is not None:
                name = _decode(prop.text or b"")
                return "" if name == "exports" else name  # `module.exports = x` names nothing
        return ""
    if t in ("lexical_declaration", "variable_declaration", "field_declaration", "constant_declaration"):
        for child in node.named_children:
            if child.type == "variable_declarator":
                n = child.child_by_field_name("name")
                if n is not None:
                    return _decode(n.text or b"")
    if t == "field_definition":
        n = node.child_by_field_name("property")
        if n is not None:
            return _decode(n.text or b"")
    cur: Node | None = node
    for _ in range(8):
        if cur is None:
            return ""
        if cur.type in _NAME_TYPES:
            return _decode(cur.text or b"")
        n = cur.child_by_field_name("name")
        if n is None:
            n = cur.child_by_field_name("declarator")
        if n is None and cur.type == "parenthesized_declarator":  # C: `void (*advance)(...)`
            n = cur.named_children[0] if cur.named_child_count else None
        if n is None and cur.type == "template_declaration":
            n = next((c for c in reversed(cur.named_children) if c.type != "template_parameter_list"), None)
        cur = n
    return ""


_BARE_NAME = re.compile(r"[A-Za-z_]\w*")


def _macro_typed_name(node: Node) -> str:
    """The name of a declaration whose type a macro makes (`typedef Array(T) Name;`, a
    field `Array(T) items;`), as C++'s grammar reads it: `Array (T)` a parenthesized
    declarator, then a missing `;` and `Name` a statement of its own, or an error node
    holding it (C's grammar knows the macro call). "" for any other declaration."""
    decl = node.child_by_field_name("declarator")
    if decl is None or decl.type != "parenthesized_declarator" or decl.named_child_count != 1:
        return ""
    if decl.named_children[0].type not in ("type_identifier", "field_identifier", "identifier"):
        return ""  # `void (*advance)(...)`: a real declarator
    stray = next((c for c in node.children if c.type == "ERROR"), None)
    if stray is None and any(c.is_missing for c in node.children):
        stray = node.next_named_sibling
        if stray is not None and stray.type not in ("expression_statement", "field_declaration"):
            stray = None
    if stray is None or stray.start_point.row != decl.end_point.row:
        return ""
    word = _decode(stray.text or b"").strip().rstrip(";").strip()
    return word if _BARE_NAME.fullmatch(word) else ""


def _include_guard(node: Node, name: str) -> bool:
    """A valueless `#define NAME` inside a top-level `#ifndef NAME` that wraps most of the
    file: a header's include guard. (`#ifndef SCOPED_LOCKABLE` / `#define SCOPED_LOCKABLE`
    inside the guard defaults an annotation macro other files spell: it stays.)"""
    block = node.parent
    if node.child_by_field_name("value") is not None or block is None or block.type != "preproc_ifdef":
        return False
    root = block.parent
    first = block.child(0)
    if root is None or root.parent is not None or first is None or first.type != "#ifndef":
        return False
    if 2 * (block.end_byte - block.start_byte) < root.end_byte - root.start_byte:
        return False  # a small `#ifndef X` / `#define X` of a source file: a default, not a guard
    tested = block.child_by_field_name("name")
    return tested is not None and _decode(tested.text or b"") == name


def _more_names(node: Node, first: str) -> list[str]:
    """The names a definition introduces after its first (`X, Y int` -> ["Y"])."""
    names = [_decode(n.text or b"") for n in node.children_by_field_name("name") if n.is_named]
    return [n for n in names if n and n != first]


def _body(node: Node, rules: OutlineRules) -> Node | None:
    body = node.child_by_field_name("body")
    if body is None:
        typ = node.child_by_field_name("type")
        if typ is not None:
            if typ.type in rules.bodies:
                return typ
            body = typ.child_by_field_name("body")
            if body is None:
                body = next((c for c in typ.named_children if c.type in rules.bodies), None)
    if body is None:
        body = next((c for c in node.named_children if c.type in rules.bodies), None)
    return body


def _one_line(text: str) -> str:
    """A signature as one line: whitespace runs collapsed, cut at a token when too long."""
    # = `_SPACES.sub(" ", text).strip()`: str.split and re's \s agree on whitespace (both
    # Py_UNICODE_ISSPACE), and this is ~5x faster on the index's ~25 entries per file.
    line = " ".join(text.split())
    if len(line) <= MAX_ENTRY_CHARS:
        return line
    cut = line.rfind(" ", 0, MAX_ENTRY_CHARS - 4)
    return (line[:cut] if cut > 20 else line[: MAX_ENTRY_CHARS - 4]) + " ..."


def _header(node: Node, body: Node | None, source: bytes, rules: OutlineRules, name: str) -> str:
    if body is not None and body.start_byte > node.start_byte:
        end = body.start_byte
        first = body.child(0) if body.child_count else None
        if first is not None and not first.is_named and first.type.isalpha():
            end = first.end_byte  # Go: `type T interface {` keeps its `interface`
        raw = source[node.start_byte : end]
    else:
        raw = source[node.start_byte : node.end_byte]
    text = _decode(raw).rstrip().rstrip("{").rstrip()
    pre = rules.prefix.get(node.type, "")
    if pre and not text.startswith(pre.strip()):
        text = pre + text
    if name and name not in text:
        text = f"{text} {name}"  # C: `typedef struct {...} box_t` names itself after the body
    return _one_line(text)


def _first_line(node: Node, source: bytes, rules: OutlineRules) -> str:
    raw = _decode(source[node.start_byte : node.end_byte])
    line = raw.split("\n", 1)[0].rstrip()
    if "\n" in raw and line.endswith(("(", "[", "{", "=")):
        line = line + " ..."
    pre = rules.prefix.get(node.type, "")
    if pre and not line.startswith(pre.strip()):
        line = pre + line
    return _one_line(line)


def extract_outline(
    tree: Tree, source: bytes, language_id: str, limit: int = MAX_ENTRIES
) -> list[OutlineEntry]:
    """The outline of one parsed file, in file order, at most `limit` entries. Unknown
    languages give []."""
    rules = rules_for(language_id)
    if rules is None:
        return []
    walk = _Walk(rules, source, limit)
    # (node, depth, owner index, group); an explicit stack, children pushed reversed: file order.
    walk.stack = [(c, 0, -1, -1) for c in reversed(tree.root_node.named_children)]
    visited = 0
    while walk.stack and visited < MAX_WALK_NODES and len(walk.out) < limit:
        visited += 1
        walk.visit(*walk.stack.pop())
    return _without_shadowed_attrs(walk.out)


@dataclass
class _Into:
    """Where a walk step appends entries: the outline so far, at a depth, under an owner."""

    out: list[OutlineEntry]
    depth: int
    owner: int
    limit: int


class _Walk:
    """One file's outline walk: the rules, the entries so far and the nodes still to visit."""

    def __init__(self, rules: OutlineRules, source: bytes, limit: int) -> None:
        self.rules = rules
        self.source = source
        self.limit = limit
        self.attr_re = re.compile(_literal_first(rules.self_attr)) if rules.self_attr else None
        self.out: list[OutlineEntry] = []
        # owner -> the names of its entries so far, kept up to date from `out[scanned:]`
        # (`_self_attrs` asks it per method: a scan of `out` each time was quadratic)
        self._members: dict[int, set[str]] = {}
        self._scanned = 0
        self.stack: list[tuple[Node, int, int, int]] = []
        self.groups = 0
        self.seen: set[tuple[str, int, str]] = set()

    def _push(self, nodes: Sequence[Node], depth: int, owner: int, group: int) -> None:
        self.stack.extend((c, depth, owner, group) for c in reversed(nodes))

    def visit(self, node: Node, depth: int, owner: int, group: int) -> None:
        rules, t = self.rules, node.type
        if t in rules.transparent:
            if t in rules.groups and node.named_child_count > 1:
                group, self.groups = self.groups, self.groups + 1
            self._push(node.named_children, depth, owner, group)
            return
        kind = rules.defs.get(t)
        if kind == "template":  # C++: the templated definition, with its template line
            inner = next((c for c in reversed(node.named_children) if c.type in rules.defs), None)
            kind = rules.defs.get(inner.type, "function") if inner is not None else None
        if kind is None:
            return
        macro_typed = _macro_typed_name(node) if t in _MACRO_TYPED else ""
        name = macro_typed or _name_of(node)
        if t in rules.forward and _body(node, rules) is None:
            return  # `class Env;`: the definition is the entry
        if t == "preproc_def" and _include_guard(node, name):
            return  # `#define FOO_H_` under `#ifndef FOO_H_`: no file spells it
        if not name:
            body = _body(node, rules) if t in rules.unnamed_transparent else None
            if body is not None:
                self._push(body.named_children, depth, owner, group)
            return
        self._entry(node, _kind(node, kind, depth, macro_typed), name, macro_typed, (depth, owner, group))

    def _entry(self, node: Node, kind: str, name: str, macro_typed: str, at: tuple[int, int, int]) -> None:
        """Append `node`'s entry (`at`: depth, owner, group), then what it holds."""
        depth, owner, group = at
        rules, t, out = self.rules, node.type, self.out
        body = _body(node, rules) if t in rules.containers or kind in ("function", "method") else None
        text = self._text(node, body, name, macro_typed)
        if (name, owner, kind) in self.seen:
            return  # C: a prototype and its definition; the first one is enough
        self.seen.add((name, owner, kind))
        index = len(out)
        out.append(OutlineEntry(name, kind, depth, text, owner, group))
        if t in rules.multi_name:
            for more in _more_names(node, name):
                if len(out) < self.limit and (more, owner, kind) not in self.seen:
                    self.seen.add((more, owner, kind))
                    out.append(OutlineEntry(more, kind, depth, text, owner, group))
        into = _Into(out, depth, owner, self.limit)
        if rules.param_members and name == "constructor" and owner >= 0:
            _param_members(node, rules.param_members, into)
        if t in rules.containers and body is not None and depth < 4:
            self.stack.extend((c, depth + 1, index, -1) for c in reversed(body.named_children))
        elif self.attr_re is not None and kind == "method" and body is not None and owner >= 0:
            _self_attrs(body, self.source, self.attr_re, into, self.members_of(owner))

    def members_of(self, owner: int) -> set[str]:
        """The names of `owner`'s entries in `out` (the set is kept: callers add to it
        only the names they append to `out` under `owner`)."""
        out, members = self.out, self._members
        for k in range(self._scanned, len(out)):
            e = out[k]
            got = members.get(e.owner)
            if got is None:
                got = members[e.owner] = set()
            got.add(e.name)
        self._scanned = len(out)
        return members.setdefault(owner, set())

    def _text(self, node: Node, body: Node | None, name: str, macro_typed: str) -> str:
        source = self.source
        if macro_typed:  # the name is past the node, on its row: up to its `;` is the entry
            end = source.find(b"\n", node.start_byte)
            row = _decode(source[node.start_byte : end if end >= 0 else len(source)])
            semi = row.find(";", row.find(macro_typed, row.find(")")))
            return _one_line(row[: semi + 1] if semi >= 0 else row)
        if node.type in self.rules.one_line:
            return _first_line(node, source, self.rules)
        return _header(node, body, source, self.rules, name)


def _kind(node: Node, kind: str, depth: int, macro_typed: str) -> str:
    """The entry's kind where the grammar's node type alone does not say it."""
    t = node.type
    if kind == "constant" and depth > 0 and t in ("expression_statement",):
        kind = "field"  # python: a class-level assignment (enum members, defaults)
    if kind == "function" and depth > 0:
        kind = "method"
    if (
        t in ("declaration", "field_declaration")
        and not macro_typed
        and "(" in _decode((node.child_by_field_name("declarator") or node).text or b"")[:200]
    ):
        kind = "function" if depth == 0 else "method"  # a prototype
    return kind


def _without_shadowed_attrs(entries: list[OutlineEntry]) -> list[OutlineEntry]:
    """Drop a `self.x` attribute its class also defines as a member (`self.default =
    default` in `__init__`, then `def default`): one name, listed once, as the member."""
    members = {(e.owner, e.name) for e in entries if e.kind != "attribute"}
    if not any(e.kind == "attribute" and (e.owner, e.name) in members for e in entries):
        return entries
    keep = [i for i, e in enumerate(entries) if e.kind != "attribute" or (e.owner, e.name) not in members]
    moved = {old: new for new, old in enumerate(keep)}  # attributes own nothing: owners stay valid
    return [
        OutlineEntry(e.name, e.kind, e.depth, e.text, moved.get(e.owner, e.owner), e.group)
        for e in (entries[i] for i in keep)
    ]


def _param_members(node: Node, modifiers: frozenset[str], into: _Into) -> None:
    """The parameters of a constructor that declare fields (`protected scheduler: S`),
    as members of its class: the parameter without its default value."""
    out = into.out
    params = node.child_by_field_name("parameters")
    for param in params.named_children if params is not None else ():
        pattern = param.child_by_field_name("pattern")
        if pattern is None or len(out) >= into.limit or not any(c.type in modifiers for c in param.children):
            continue
        value = param.child_by_field_name("value")
        end = value.start_byte if value is not None else param.end_byte
        text = _decode((param.text or b"")[: end - param.start_byte]).rstrip().rstrip("=").rstrip()
        out.append(
            OutlineEntry(_decode(pattern.text or b""), "field", into.depth, _one_line(text), into.owner)
        )


def _self_attrs(body: Node, source: bytes, attr_re: re.Pattern[str], into: _Into, known: set[str]) -> None:
    """`self.x = ...` assignments of one method, as members of its class (first one wins;
    `known`: the names its class has so far)."""
    out, owner = into.out, into.owner
    text = _decode(source[body.start_byte : min(body.end_byte, body.start_byte + MAX_ATTR_SCAN_BYTES)])
    for m in attr_re.finditer(text):
        name = m.group(1)
        if name in known or len(out) >= into.limit:
            continue
        known.add(name)
        end = text.find("\n", m.end())
        line = text[m.start() : end if end >= 0 else len(text)].split(";", 1)[0].strip()
        out.append(OutlineEntry(name, "attribute", into.depth, _one_line(line), owner))


_WORD_FIRST = re.compile(r"\\b(\w+)\\\.")  # a pattern that starts `\bself\.`


def _literal_first(pattern: str) -> str:
    r"""`pattern` with a leading `\bword\.` spelled `word\.(?<=(?<!\w)word\.)`: the same
    matches (before a word character, `\b` is "no word character before"), but a pattern
    that starts with a literal is searched for by that literal, where a leading `\b` makes
    the engine try every position (7x slower on the stdlib's method bodies)."""
    m = _WORD_FIRST.match(pattern)
    if m is None:
        return pattern
    lit = m.group(1) + r"\."
    return f"{lit}(?<=(?<!\\w){lit}){pattern[m.end() :]}"


def outline_of(
    tree: Tree | None,
    source: bytes,
    language_id: str,
    path: str,
    version: object,
    limit: int = MAX_ENTRIES,
) -> FileOutline:
    """The outline of a parsed file; a grammar surprise gives an empty outline and one log line."""
    entries: tuple[OutlineEntry, ...] = ()
    if tree is not None:
        try:
            entries = tuple(extract_outline(tree, source, language_id, limit))
        except Exception as exc:  # an outline is optional context: never fail a request or an index
            log.warning("outline: skipped a %s file (%s)", language_id, type(exc).__name__)
    return FileOutline(path, canonical(language_id) or language_id, entries, version)


def outline_from_text(
    text: str, language_id: str, path: str, version: object = None, limit: int = MAX_ENTRIES
) -> FileOutline:
    """A one-off parse (files that are not open: the workspace index, the CLI)."""
    lang = get_language(language_id)
    data = text.encode("utf-8", "surrogatepass")
    tree = Parser(lang).parse(data) if lang is not None else None
    return outline_of(tree, data, language_id, path, version, limit)


def entries_to_rows(entries: Iterable[OutlineEntry]) -> list[list[object]]:
    """A JSON-friendly form (the persisted workspace index)."""
    return [[e.name, e.kind, e.depth, e.text, e.owner, e.group] for e in entries]


def entries_from_rows(rows: Iterable[Sequence[object]]) -> tuple[OutlineEntry, ...]:
    out: list[OutlineEntry] = []
    for r in rows:
        name, kind, depth, text, owner = r[:5]
        group = int(str(r[5])) if len(r) > 5 else -1
        out.append(OutlineEntry(str(name), str(kind), int(str(depth)), str(text), int(str(owner)), group))
    return tuple(out)
