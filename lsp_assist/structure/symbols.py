"""Definitions per file from tree-sitter: names, kinds, signatures and locations.

`extract_symbols` walks only the places definitions live (top level, class/impl/module
bodies, export and decorator wrappers) instead of every node, so it stays cheap on large
files. `SymbolIndex` keeps the symbols of many files for lookups by name: the context
engine uses it for "definitions of the identifiers near the cursor", and the workspace
indexer feeds it with `update_file` / `remove_file`.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from tree_sitter import Node, Parser, Tree

from lsp_assist.documents.syntax import Edit, SyntaxState
from lsp_assist.languages import IDENTIFIER_NODE_TYPES, PROFILES, canonical, get_language
from lsp_assist.languages.rules import LangSpec
from lsp_assist.structure.imports import index_imports

if TYPE_CHECKING:
    from lsp_assist.structure.outline import FileOutline

MAX_SIGNATURE_CHARS = 240
MAX_SIGNATURE_LINES = 4
MAX_REFS_PER_FILE = 4000  # distinct names kept per file for the package reference counts
_REF = re.compile(r"[A-Za-z_$][\w$]*")
_BLANKS = re.compile(rb"[ \t]*")


def reference_names(text: str) -> frozenset[str]:
    """The distinct names a file's text spells (at index time: the package reference counts).

    Crude on purpose (words in comments count too): it runs once per file content, and a
    name's count is "how many files of the package spell it", a prior, not a resolution.
    Names of one or two characters say nothing and are left out; at most
    `MAX_REFS_PER_FILE` are kept (the first ones: a generated file does not flood memory).
    """
    out: set[str] = set()
    for m in _REF.finditer(text):
        name = m.group()
        if len(name) > 2 and name not in out:
            out.add(sys.intern(name))
            if len(out) >= MAX_REFS_PER_FILE:
                break
    return frozenset(out)


@dataclass(frozen=True)
class Symbol:
    """One definition. Rows are 0-based; `sig_*` rows span the signature (no body)."""

    name: str
    kind: str  # function | method | class | type | variable | module
    path: str
    start_row: int
    end_row: int
    sig_start_row: int
    sig_end_row: int
    signature: str
    container: str | None = None  # enclosing class / impl / module name


#: Where definitions and imports live, per canonical language (from the language profiles).
SPECS: dict[str, LangSpec] = {p.name: p.symbols for p in PROFILES if p.symbols is not None}

_NAME_TYPES = IDENTIFIER_NODE_TYPES


def spec_for(language_id: str) -> LangSpec | None:
    name = canonical(language_id)
    return SPECS.get(name) if name else None


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _declarator_name(node: Node) -> Node | None:
    """Follow C/C++ declarator chains (pointer, function, array) down to the name."""
    cur: Node | None = node
    for _ in range(8):
        if cur is None:
            return None
        if cur.type in _NAME_TYPES:
            return cur
        nxt = cur.child_by_field_name("declarator")
        cur = nxt if nxt is not None else cur.child_by_field_name("name")
    return None


def definition_names(node: Node, lang: str) -> list[Node]:
    """The name nodes a definition introduces (several for `a, b = ...`-style declarations)."""
    t = node.type
    spec = SPECS.get(lang) or spec_for(lang)
    if spec is not None and t == spec.assignments:
        first = node.named_children[0] if node.named_child_count else None
        if first is not None and first.type == "assignment":
            left = first.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                return [left]
        return []
    if t in ("lexical_declaration", "variable_declaration"):
        out = []
        for child in node.named_children:
            if child.type == "variable_declarator":
                n = child.child_by_field_name("name")
                if n is not None and n.type == "identifier":
                    out.append(n)
        return out
    if t == "impl_item":
        n = node.child_by_field_name("type")
        return [n] if n is not None else []
    style = spec.declaration_names if spec is not None else None
    if t in ("declaration", "field_declaration", "type_definition") and style is not None:
        if style == "variable_declarator":
            return [
                n
                for c in node.named_children
                if c.type == "variable_declarator"
                for n in [c.child_by_field_name("name")]
                if n is not None
            ]
        d = node.child_by_field_name("declarator")
        n = _declarator_name(d) if d is not None else None
        return [n] if n is not None else []
    n = node.child_by_field_name("name")
    if n is None:
        d = node.child_by_field_name("declarator")
        n = _declarator_name(d) if d is not None else None
    return [n] if n is not None else []


def _body(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is None and node.type == "type_spec":
        body = node.child_by_field_name("type")
    return body


def signature_of(node: Node, source: bytes, kind: str) -> tuple[str, int, int]:
    """Signature text and its row span: the definition up to its body, a few lines at most.

    Small types (structs, interfaces) keep their whole text: their fields are what
    completions need.
    """
    start_row = node.start_point.row
    body = _body(node)
    small = node.end_point.row - start_row < MAX_SIGNATURE_LINES
    if kind in ("class", "type") and small and node.type != "impl_item":
        body = None
    if body is not None and body.start_byte > node.start_byte:
        end_byte = body.start_byte
        end_row = body.start_point.row
        if body.start_point.row > start_row and body.start_point.column == _indent_bytes(source, body):
            end_row -= 1  # the body starts on its own line (Python): the signature ends above
    else:
        end_byte = node.end_byte
        end_row = node.end_point.row
    end_row = min(end_row, start_row + MAX_SIGNATURE_LINES - 1)
    text = source[node.start_byte : end_byte].decode("utf-8", "replace").rstrip()
    if node.type in ("type_spec", "type_alias") and not text.startswith("type"):
        text = "type " + text  # Go: the `type` keyword belongs to the parent declaration
    lines = text.split("\n")[:MAX_SIGNATURE_LINES]
    text = "\n".join(lines)[:MAX_SIGNATURE_CHARS]
    return text, start_row, max(start_row, end_row)


def _indent_bytes(source: bytes, node: Node) -> int:
    """Byte column of the first non-blank character on the node's first line."""
    line_start = source.rfind(b"\n", 0, node.start_byte) + 1
    blank = _BLANKS.match(source, line_start)
    return blank.end() - line_start if blank is not None else 0


def _extract_top(
    top: Node, source: bytes, spec: LangSpec, lang: str, path: str, max_nodes: int
) -> list[Symbol]:
    """Definitions inside one top-level node (itself, class members, wrapped definitions)."""
    out: list[Symbol] = []
    # (node, container name, depth); a bounded explicit stack, no recursion.
    stack: list[tuple[Node, str | None, int]] = [(top, None, 0)]
    visited = 0
    while stack and visited < max_nodes:
        node, container, depth = stack.pop()
        visited += 1
        t = node.type
        if t in spec.transparent:
            stack.extend((c, container, depth + 1) for c in reversed(node.named_children))
            continue
        kind = spec.defs.get(t)
        if kind is None and t in spec.variables and (container is None or spec.member_variables):
            kind = "variable"
        if kind is None:
            if depth == 0 and t in spec.top_level_blocks:
                # module-level `if TYPE_CHECKING:` / `try: import` blocks hold definitions too
                stack.extend(
                    (g, container, depth + 1)
                    for c in reversed(node.named_children)
                    if c.type in ("block", "else_clause", "except_clause", "elif_clause")
                    for g in reversed(c.named_children)
                )
            continue
        if kind == "variable" and t in ("declaration", "field_declaration") and spec.prototypes:
            d = node.child_by_field_name("declarator")
            if d is not None and d.type == "function_declarator":
                kind = "function"  # a prototype
        names = definition_names(node, lang)
        if not names:
            continue
        sig, s_row, e_row = signature_of(node, source, kind)
        if kind == "function" and container is not None:
            kind = "method"
        for n in names:
            out.append(
                Symbol(
                    name=_text(n),
                    kind=kind,
                    path=path,
                    start_row=node.start_point.row,
                    end_row=node.end_point.row,
                    sig_start_row=s_row,
                    sig_end_row=e_row,
                    signature=sig,
                    container=container,
                )
            )
        if t in spec.containers and depth < 6:
            body = _body(node)
            if body is not None:
                own = _text(names[0])
                stack.extend((c, own, depth + 1) for c in reversed(body.named_children))
    return out


def extract_symbols(
    tree: Tree, source: bytes, language_id: str, path: str, *, max_nodes: int = 20_000
) -> list[Symbol]:
    """Definitions of one file, in file order. Unknown languages give []."""
    lang = canonical(language_id)
    spec = SPECS.get(lang) if lang else None
    if spec is None or lang is None:
        return []
    out: list[Symbol] = []
    wanted = _TOP_TYPES.get(lang)
    if wanted is None:
        wanted = spec.transparent | spec.defs.keys() | spec.variables | spec.top_level_blocks
        _TOP_TYPES[lang] = wanted
    for top in tree.root_node.named_children:
        # Imports, calls and docstrings define nothing: most top-level nodes of a file are
        # skipped here, without a walk set up for each (the index parses every file).
        if top.type in wanted:
            out.extend(_extract_top(top, source, spec, lang, path, max_nodes))
    return out


#: Per language: the top-level node types `_extract_top` can find a definition in.
_TOP_TYPES: dict[str, frozenset[str]] = {}


def _shift(sym: Symbol, rows: int) -> Symbol:
    if rows == 0:
        return sym
    # The constructor directly: `dataclasses.replace` costs several times more, and this
    # runs for every symbol of a file on each lookup.
    return Symbol(
        sym.name,
        sym.kind,
        sym.path,
        sym.start_row + rows,
        sym.end_row + rows,
        sym.sig_start_row + rows,
        sym.sig_end_row + rows,
        sym.signature,
        sym.container,
    )


def _coalesce(edits: Iterable[Edit]) -> list[Edit]:
    """The same edits with each one that falls inside the text the previous one wrote
    merged into it: a row typed a character at a time is one edit, so moving the groups
    after it costs one pass over them, not one per keystroke (the typing path replays
    every keystroke since the last scan at once)."""
    out: list[Edit] = []
    for e in edits:
        last = out[-1] if out else None
        if last is not None and last.start <= e.start and e.old_end <= last.new_end:
            out[-1] = Edit(
                last.start,
                last.old_end,
                last.new_end + (e.new_end - e.old_end),
                last.old_end_row,
                last.new_end_row + (e.new_end_row - e.old_end_row),
                last.start_row,
                last.structural and e.structural,
            )
        else:
            out.append(e)
    return out


class _Group(NamedTuple):
    end: int
    row: int
    type: str
    symbols: list[Symbol]


class TreeSymbolCache:
    """The symbols of one open document, re-extracted only for top-level nodes that changed.

    Symbols are cached per top-level node with rows relative to the node's first row,
    keyed by the node's type and byte range. Between two scans the byte edits recorded by
    the document's `SyntaxState` (`track`) move the cached ranges; a range an edit touched
    is dropped, so a kept range holds exactly the bytes it held when it was walked. After a
    one-character edit only the edited top-level node is walked again and no text is
    copied or hashed. Without a tracked state every scan walks every node. The groups and
    a name index of the last tree seen are kept, so several lookups against the same tree
    cost one pass.

    A request made while typing on one row (`typing_row`) skips even that walk: when every
    edit since the last scan is on that row and adds or removes no line, every symbol's
    rows still hold, so the last scan's symbols are returned. Only definitions written on
    that very row can be missing or one keystroke old, and that row is in the prompt
    anyway; a half-typed line that turns the code below it into an error (an unclosed
    bracket) keeps the file's definitions instead of losing them. The first edit on
    another row, or a line added or removed, scans again (replaying every edit since).
    """

    def __init__(self, language_id: str, path: str) -> None:
        lang = canonical(language_id)
        self._lang = lang or ""
        self._spec = SPECS.get(lang) if lang else None
        self._path = path
        # start byte of a top-level node -> its end, row, type and symbols (rows relative to it)
        self._groups: dict[int, _Group] = {}
        self._last_tree: Tree | None = None
        self._last: list[tuple[int, list[Symbol]]] = []
        self._rows: list[int] = []
        # name -> (position in file order, row of its group, symbol), built on the first
        # lookup by name after a scan
        self._names: dict[str, list[tuple[int, int, Symbol]]] | None = None
        self._syntax: SyntaxState | None = None
        self._generation = -1

    def track(self, syntax: SyntaxState | None) -> None:
        """Follow the edits of this document's syntax state (call before each lookup)."""
        if syntax is not self._syntax:
            self._syntax = syntax
            self._generation = -1

    def _moved_groups(self) -> dict[int, _Group]:
        """The cached groups moved through the edits since the last scan, by start byte.

        A group an edit touched is dropped, and so is one starting on the row an edit ends
        on (its column moved); the others keep their bytes, so their symbols still hold.
        """
        syntax = self._syntax
        if syntax is None or self._generation < 0:
            return {}
        edits = syntax.edits_since(self._generation)
        if edits is None:
            return {}
        groups = self._groups
        for e in _coalesce(edits):
            delta, rows = e.new_end - e.old_end, e.new_end_row - e.old_end_row
            moved: dict[int, _Group] = {}
            for a, g in groups.items():
                if g.end <= e.start:
                    moved[a] = g
                elif a >= e.old_end and g.row != e.old_end_row:
                    moved[a + delta] = _Group(g.end + delta, g.row + rows, g.type, g.symbols)
            groups = moved
        return groups

    def _rows_hold(self, typing_row: int) -> bool:
        """Whether every edit since the last scan is on `typing_row` and adds no line and
        removes none (the re-parse's structural ranges follow from those edits)."""
        syntax = self._syntax
        if syntax is None or self._last_tree is None:
            return False
        return syntax.edited_only_on(self._generation, typing_row, structural_anywhere=True)

    def _scan(
        self, tree: Tree, source: bytes, typing_row: int | None = None
    ) -> list[tuple[int, list[Symbol]]]:
        if tree is self._last_tree:
            return self._last
        if typing_row is not None and self._rows_hold(typing_row):
            return self._last
        assert self._spec is not None
        old = self._moved_groups()
        seen: dict[int, _Group] = {}
        out: list[tuple[int, list[Symbol]]] = []
        for top in tree.root_node.named_children:
            start = top.start_byte
            g = old.get(start)
            if g is None or g.end != top.end_byte:
                row = top.start_point.row
                found = _extract_top(top, source, self._spec, self._lang, self._path, 20_000)
                g = _Group(top.end_byte, row, top.type, [_shift(s, -row) for s in found])
            seen[start] = g
            if g.symbols:
                out.append((g.row, g.symbols))
        self._groups = seen  # forget nodes that are gone
        self._generation = self._syntax.generation if self._syntax is not None else -1
        self._last_tree, self._last = tree, out
        self._rows = [row for row, _ in out]
        self._names = None
        return out

    def _name_index(self) -> dict[str, list[tuple[int, int, Symbol]]]:
        names = self._names
        if names is None:
            names = {}
            seq = 0
            for row, rel in self._last:
                for s in rel:
                    names.setdefault(s.name, []).append((seq, row, s))
                    seq += 1
            self._names = names
        return names

    def nearest(
        self,
        tree: Tree,
        source: bytes,
        row: int,
        owner: str | None,
        limit: int,
        *,
        typing_row: int | None = None,
    ) -> list[Symbol]:
        """Up to `limit` members of class `owner`, then top-level symbols, nearest `row` first.

        Only the groups nearest `row` are looked at (bounded work on large files).
        """
        if self._spec is None:
            return []
        groups = self._scan(tree, source, typing_row)
        mid = bisect.bisect_right(self._rows, row)
        reach = max(4, 2 * limit)
        ranked: list[tuple[bool, int, int, Symbol]] = []
        for top_row, rel in groups[max(0, mid - reach) : mid + reach]:
            for s in rel:
                start = s.start_row + top_row
                if start <= row <= s.end_row + top_row:
                    continue
                if s.container is None or (owner is not None and s.container == owner):
                    ranked.append((s.container != owner or owner is None, abs(start - row), top_row, s))
        ranked.sort(key=lambda t: (t[0], t[1]))
        return [_shift(s, top_row) for _, _, top_row, s in ranked[:limit]]

    def find(
        self,
        tree: Tree,
        source: bytes,
        names: Iterable[str] | None = None,
        *,
        typing_row: int | None = None,
    ) -> list[Symbol]:
        """Symbols (all, or those named in `names`) with rows valid for `tree`, in file order.

        With `typing_row` (a request's cursor row), the last scan's symbols when only that
        row was edited since (see the class)."""
        if self._spec is None:
            return []
        groups = self._scan(tree, source, typing_row)
        if names is None:
            return [_shift(s, row) for row, rel in groups for s in rel]
        index = self._name_index()
        hits = [hit for name in set(names) for hit in index.get(name, ())]
        hits.sort(key=lambda h: h[0])
        return [_shift(s, row) for _, row, s in hits]


def parse_text(text: str, language_id: str) -> tuple[Tree, bytes] | None:
    """A one-off full parse (workspace files that are not open); None without a grammar."""
    lang = get_language(language_id)
    if lang is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    tree = Parser(lang).parse(data)
    return (tree, data) if tree is not None else None


def path_stem(path: str) -> str:
    """A file's name without directory and extension (`events` for `.../asyncio/events.py`)."""
    base = os.path.basename(path)
    return base.split(".", 1)[0] if not base.startswith(".") else base


_NO_COUNTS: Mapping[str, int] = Counter()
_INSTANCES = itertools.count(1)


def admit_all(_path: str) -> bool:
    """The default boundary of an index (tests, benchmarks): every path may be held."""
    return True


class SymbolIndex:
    """Definitions of many files, looked up by name. Deterministic: results sorted by (path, row).

    It also holds each file's outline (`structure/outline.py`), computed when the file was
    indexed, and its paths by stem, so import resolution never lists every path; and per
    directory, how many of its files spell each name (`package_uses`): which of a package's
    names its files need, known before any request (Java and Go files see their package's
    names without an import, so a file's imports say nothing about them).
    """

    def __init__(self) -> None:
        self._by_path: dict[str, list[Symbol]] = {}
        self._by_name: dict[str, list[Symbol]] = {}
        self._versions: dict[str, object] = {}
        self._outlines: dict[str, FileOutline] = {}
        self._by_stem: dict[str, set[str]] = {}
        self._by_dir: dict[str, set[str]] = {}
        self._dirs_by_base: dict[str, set[str]] = {}
        self.generation = 0  # bumped on every change: a key for caches of lookups
        self.instance = next(_INSTANCES)  # unlike id(), never reused: a key for caches
        # How much of `generation` each path caused: a cache of one file's prompt stays
        # valid while only that file's own entry changed (it never feeds its own context).
        self._changes: dict[str, int] = {}
        self._refs: dict[str, frozenset[str]] = {}  # path -> the names its text spells
        # path -> its import statements (`imports.index_imports`: C/C++ includes, whose
        # own includes a file sees too)
        self._imports: dict[str, tuple[str, ...]] = {}
        self._dir_refs: dict[str, Counter[str]] = {}  # directory -> name -> files spelling it
        self._dir_refs_changes: dict[str, int] = {}  # directory -> changes of its counts
        self._definers: dict[str, int] = {}  # name -> files defining it, at `_definers_generation`
        self._definers_generation = -1
        # The data boundary (the runtime sets it from governance): a path it refuses is never
        # held, whoever offers it (an open tab, the workspace index, the editor's files), so
        # no reader of the index can hand an excluded file's names to a prompt.
        self.admits: Callable[[str], bool] = admit_all

    def purge(self) -> int:
        """Drop every file `admits` refuses now (after the boundary changed); how many."""
        refused = [p for p in self._by_path if not self.admits(p)]
        for path in refused:
            self.remove_file(path)
        return len(refused)

    def update_file(self, path: str, text: str, language: str) -> None:
        """Re-index one file from its text (a full parse)."""
        from lsp_assist.structure.outline import outline_of

        parsed = parse_text(text, language)
        symbols = extract_symbols(parsed[0], parsed[1], language, path) if parsed else []
        outline = outline_of(
            parsed[0] if parsed else None, parsed[1] if parsed else b"", language, path, None
        )
        imports = index_imports(text.split("\n"), language)
        self.set_symbols(path, symbols, None, outline, reference_names(text), imports)

    def update_from_tree(
        self, path: str, tree: Tree, source: bytes, language: str, version: object = None
    ) -> None:
        """Re-index one file from a tree we already have (an open document)."""
        self.set_symbols(path, extract_symbols(tree, source, language, path), version)

    def set_symbols(
        self,
        path: str,
        symbols: Iterable[Symbol],
        version: object = None,
        outline: FileOutline | None = None,
        refs: Iterable[str] | None = None,
        imports: Iterable[str] | None = None,
    ) -> None:
        """Replace one file's symbols (and its outline, the names it spells and its import
        statements when given; else the old ones stay: an open buffer keeps its file's
        counts until it is saved). A path the boundary refuses is dropped instead."""
        if not self.admits(path):
            if path in self._by_path:
                self.remove_file(path)
            return
        kept = self._outlines.get(path) if outline is None else outline
        kept_refs = self._refs.get(path) if refs is None else frozenset(refs)
        kept_imports = self._imports.get(path) if imports is None else tuple(imports)
        self.remove_file(path)
        self._bump(path)
        syms = list(symbols)
        self._by_path[path] = syms
        self._versions[path] = version
        self._by_stem.setdefault(path_stem(path), set()).add(path)
        directory = os.path.dirname(path)
        if directory not in self._by_dir:
            self._dirs_by_base.setdefault(os.path.basename(directory), set()).add(directory)
        self._by_dir.setdefault(directory, set()).add(path)
        if kept is not None:
            self._outlines[path] = kept
        if kept_imports:
            self._imports[path] = kept_imports
        if kept_refs:
            self._refs[path] = kept_refs
            self._dir_refs.setdefault(directory, Counter()).update(kept_refs)
            self._dir_refs_changes[directory] = self._dir_refs_changes.get(directory, 0) + 1
        touched: set[str] = set()
        for s in syms:
            self._by_name.setdefault(s.name, []).append(s)
            touched.add(s.name)
        for name in touched:  # one sort per name, not one per symbol
            self._by_name[name].sort(key=lambda x: (x.path, x.start_row))

    def _bump(self, path: str) -> None:
        self.generation += 1
        self._changes[path] = self._changes.get(path, 0) + 1

    def changes_of(self, path: str) -> int:
        """How many of the `generation` bumps came from changes to `path`'s own entry."""
        return self._changes.get(path, 0)

    def version(self, path: str) -> object:
        return self._versions.get(path)

    def set_outline(self, path: str, outline: FileOutline) -> None:
        if not self.admits(path):
            return
        self._outlines[path] = outline
        self._bump(path)

    def outline(self, path: str) -> FileOutline | None:
        return self._outlines.get(path)

    def paths_with_stem(self, stem: str) -> list[str]:
        return sorted(self._by_stem.get(stem, ()))

    def paths_in_dir(self, directory: str) -> list[str]:
        return sorted(self._by_dir.get(directory, ()))

    def paths_in_dir_named(self, tail: str) -> list[str]:
        """Files of the directories whose path ends with `tail` ('a/b': Go import paths)."""
        tail = tail.strip("/")
        want = "/" + tail
        out: list[str] = []
        for d in sorted(self._dirs_by_base.get(tail.rsplit("/", 1)[-1], ())):
            if d.replace(os.sep, "/").endswith(want):
                out.extend(sorted(self._by_dir.get(d, ())))
        return out

    def file_count(self) -> int:
        return len(self._by_path)

    def has_path(self, path: str) -> bool:
        return path in self._by_path

    def imports(self, path: str) -> tuple[str, ...]:
        """`path`'s import statements as indexed (empty when unknown or not recorded)."""
        return self._imports.get(path, ())

    def refs(self, path: str) -> frozenset[str]:
        """The names `path`'s indexed text spells (empty when unknown)."""
        return self._refs.get(path, frozenset())

    def package_uses(self, directory: str) -> Mapping[str, int]:
        """Name -> how many indexed files of `directory` spell it (read-only)."""
        return self._dir_refs.get(directory, _NO_COUNTS)

    def package_changes(self, directory: str) -> int:
        """Bumped whenever the names spelled by `directory`'s files change (a cache key)."""
        return self._dir_refs_changes.get(directory, 0)

    def refs_in_dir(self, directory: str) -> list[tuple[str, frozenset[str]]]:
        """(path, the names it spells) of the indexed files of `directory`, by path."""
        return [(p, self._refs[p]) for p in sorted(self._by_dir.get(directory, ())) if p in self._refs]

    def remove_file(self, path: str) -> None:
        old = self._by_path.pop(path, None)
        self._versions.pop(path, None)
        self._outlines.pop(path, None)
        self._imports.pop(path, None)
        old_refs = self._refs.pop(path, None)
        if old_refs:
            d = os.path.dirname(path)
            self._dir_refs_changes[d] = self._dir_refs_changes.get(d, 0) + 1
            counts = self._dir_refs.get(d)
            if counts is not None:
                counts.subtract(old_refs)
                for name in old_refs:
                    if counts[name] <= 0:
                        del counts[name]
                if not counts:
                    del self._dir_refs[d]
        self._bump(path)
        if old is not None:
            for table, key in ((self._by_stem, path_stem(path)), (self._by_dir, os.path.dirname(path))):
                members = table.get(key)
                if members is not None:
                    members.discard(path)
                    if not members:
                        table.pop(key, None)
                        if table is self._by_dir:
                            bases = self._dirs_by_base.get(os.path.basename(key))
                            if bases is not None:
                                bases.discard(key)
        if not old:
            return
        for name in {s.name for s in old}:
            bucket = [s for s in self._by_name.get(name, ()) if s.path != path]
            if bucket:
                self._by_name[name] = bucket
            else:
                self._by_name.pop(name, None)

    def lookup(self, name: str) -> list[Symbol]:
        return list(self._by_name.get(name, ()))

    def definers(self, name: str) -> int:
        """How many files define `name` (a name defined in one file points at it). Kept per
        `generation`: a request weighs thousands of names, `__init__` defined in hundreds."""
        if self._definers_generation != self.generation:
            self._definers.clear()
            self._definers_generation = self.generation
        got = self._definers.get(name)
        if got is None:
            syms = self._by_name.get(name)
            got = (len({s.path for s in syms}) if len(syms) > 1 else 1) if syms else 0
            self._definers[name] = got
        return got

    def symbols(self, path: str) -> list[Symbol]:
        return list(self._by_path.get(path, ()))

    def paths(self) -> list[str]:
        return sorted(self._by_path)

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_path.values())
