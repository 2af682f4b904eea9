"""Rust."""

import os
import re
from collections.abc import Sequence

from lsp_assist.languages.imports import ImportRef, ImportStyle, PathFinder
from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.rules import ImportRule, LangSpec, OutlineRules
from lsp_assist.languages.tuning import CrossFileTuning

_RUST_SYMBOLS = LangSpec(
    defs={
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "class",
        "enum_item": "type",
        "union_item": "type",
        "trait_item": "type",
        "impl_item": "class",
        "type_item": "type",
        "const_item": "variable",
        "static_item": "variable",
        "mod_item": "module",
        "macro_definition": "function",
    },
    containers=frozenset({"impl_item", "trait_item", "mod_item"}),
    transparent=frozenset({"declaration_list", "attribute_item"}),
    imports=frozenset({"use_declaration", "extern_crate_declaration"}),
    variables=frozenset(),
)


_RUST_OUTLINE = OutlineRules(
    defs={
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "class",
        "enum_item": "enum",
        "union_item": "type",
        "trait_item": "type",
        "impl_item": "impl",
        "type_item": "type",
        "const_item": "constant",
        "static_item": "constant",
        "mod_item": "module",
        "macro_definition": "function",
        "field_declaration": "field",
        "enum_variant": "member",
    },
    containers=frozenset({"struct_item", "enum_item", "union_item", "trait_item", "impl_item", "mod_item"}),
    bodies=frozenset({"field_declaration_list", "enum_variant_list", "declaration_list"}),
    transparent=frozenset({"attribute_item"}),
    # the unit-test module (`#[cfg(test)] mod tests`, by convention): only for the crate's tests
    hidden=r"^mod tests?$",
    one_line=frozenset(
        {
            "field_declaration",
            "enum_variant",
            "const_item",
            "static_item",
            "type_item",
            "function_signature_item",
        }
    ),
)


RUST_ROOT_FILES = ("lib.rs", "main.rs")  # a crate's root module (`crate::`)
RUST_ROOT_LEVELS = 8  # directories walked up from a file to find them
_USE_TOKEN = re.compile(r"::|[{},*]|[A-Za-z_]\w*")


def _rust_children(path: str) -> str:
    """The directory holding a Rust module file's child modules (`a/b.rs` -> a/b; mod.rs,
    lib.rs, main.rs -> their own directory)."""
    if os.path.basename(path) in ("mod.rs", *RUST_ROOT_FILES):
        return os.path.dirname(path)
    return os.path.splitext(path)[0]


def _use_leaves(tree: str) -> list[tuple[tuple[str, ...], str | None]]:
    """A Rust use tree flattened: (module path, imported name) per leaf; the name is None
    for a glob (`a::*`) or the module itself (`a::{self}`); `x as y` imports `x`.

    `crate::{a::B, c::{D, e::*}}` -> ((crate, a), B), ((crate, c), D), ((crate, c, e), None).
    """
    toks = [t for t in _USE_TOKEN.findall(tree) if t != "::"]
    out: list[tuple[tuple[str, ...], str | None]] = []
    pos = 0

    def walk(prefix: tuple[str, ...]) -> None:
        nonlocal pos
        path = prefix
        while pos < len(toks):
            t = toks[pos]
            if t == "{":
                pos += 1
                while pos < len(toks) and toks[pos] != "}":
                    walk(path)
                    if pos < len(toks) and toks[pos] == ",":
                        pos += 1
                pos += 1  # the closing brace
                return
            if t in (",", "}"):
                break
            pos += 1
            if t == "*":
                out.append((path, None))
                return
            if t == "as":
                pos += 1  # the alias
                break
            path = (*path, t)
        if path == prefix:
            return
        if path[-1] == "self":
            out.append((path[:-1], None))
        else:
            out.append((path[:-1], path[-1]))

    while pos < len(toks):
        before = pos
        walk(())
        if pos < len(toks) and toks[pos] in (",", "}"):
            pos += 1
        if pos == before:
            pos += 1
    return out


class RustModImports(ImportStyle):
    """`mod x;`: a child module of this file's module."""

    def resolve(self, ref: ImportRef, current: str, finder: PathFinder, exts: Sequence[str]) -> list[str]:
        return finder.with_exts(os.path.join(_rust_children(current), ref.module), exts)


class RustUseImports(ImportStyle):
    """`use a::b::{C, d};`: a use tree, one import per module it names, resolved along the
    crate's module tree from its root (lib.rs, main.rs)."""

    def statement_refs(self, module: str, line: str) -> list[ImportRef]:
        by_module: dict[tuple[str, ...], list[str]] = {}
        for path, name in _use_leaves(module):
            if not path and name is not None:  # `use foo;`: a module (or crate) by itself
                path, name = (name,), None
            names = by_module.setdefault(path, [])
            if name is not None and name not in names:
                names.append(name)
        return [ImportRef("::".join(path), tuple(names), line, self) for path, names in by_module.items()]

    def resolve(self, ref: ImportRef, current: str, finder: PathFinder, exts: Sequence[str]) -> list[str]:
        """The files of `use a::b::{C, d}`: the deepest module file of the path (a module
        it names, `d`, is its own file), by Rust's module tree from the crate root."""
        segs = [s for s in ref.module.split("::") if s]
        root = _root(finder, current)
        if segs[:1] == ["crate"]:
            if root is None:  # no crate root known: the path's tail, wherever it is
                return _tail(finder, segs[1:], ref.names)
            bases, segs = [root], segs[1:]
        elif segs[:1] in (["self"], ["super"]):
            base = _rust_children(current)
            while segs[:1] in (["self"], ["super"]):
                if segs[0] == "super":
                    base = os.path.dirname(base)
                segs = segs[1:]
            bases = [base]
        else:  # a module in scope (`mod x;` here), else a path from the root (2015), else a crate
            bases = [_rust_children(current)] + ([root] if root is not None else [])
        explicit = ref.module.split("::")[0] in ("crate", "self", "super")
        for base in bases:
            # A name that is a module is its own file (`use crate::output::{fmt}`) ...
            found = [
                p
                for name in ref.names
                for p in finder.with_exts(os.path.join(base, *segs, name), (".rs", "/mod.rs"))
            ]
            # ... the others live in the deepest module of the path that has a file (an
            # inline `mod` has none); a bare path must start with a module of `base`.
            for n in range(len(segs), -1 if explicit else 0, -1):
                got = _module_file(finder, os.path.join(base, *segs[:n]), root)
                if got is not None:
                    return found if got in found else [*found, got]
            if found:
                return found
        return []


def _root(finder: PathFinder, current: str) -> str | None:
    """The crate's root directory: the nearest one above `current` holding lib.rs or main.rs."""
    d = os.path.dirname(current)
    for _ in range(RUST_ROOT_LEVELS):
        if any(os.path.join(d, f) == current or finder.exists(os.path.join(d, f)) for f in RUST_ROOT_FILES):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


def _module_file(finder: PathFinder, children: str, root: str | None) -> str | None:
    """The file of the module whose children live in `children` (`a/b` -> a/b.rs, a/b/mod.rs)."""
    if children == root:
        names = [os.path.join(children, f) for f in RUST_ROOT_FILES]
    else:
        names = [children + ".rs", os.path.join(children, "mod.rs")]
    return next((p for p in names if finder.exists(p)), None)


def _tail(finder: PathFinder, segs: list[str], names: Sequence[str]) -> list[str]:
    for tail in [[*segs, n] for n in names] + [segs[:n] for n in range(len(segs), 0, -1)]:
        got = finder.suffix("/".join(tail) + ".rs") or finder.suffix("/".join(tail) + "/mod.rs")
        if got:
            return got
    return []


#: How a file of this family spells an import (matched per line of its head).
_RUST_IMPORTS: tuple[ImportRule, ...] = (
    ImportRule(
        re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(?P<module>\w+)\s*;"), RustModImports("rust_path")
    ),
    # The whole use tree (nested groups, several lines); `_use_leaves` flattens it.
    ImportRule(
        re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?\s+)?use\s+(?P<module>[\w:{}\s,*]+?)\s*;", re.M),
        RustUseImports("rust_use"),
        statement=True,
    ),
)


PROFILES = (
    LanguageProfile(
        name="rust",
        grammar=("tree_sitter_rust", "language"),
        aliases=("rust", "rs"),
        extensions={".rs": "rust"},
        symbols=_RUST_SYMBOLS,
        outline=_RUST_OUTLINE,
        imports=_RUST_IMPORTS,
        top_level_stops=("\nfn ", "\npub fn ", "\nimpl ", "\n#[", "\nmod "),
        import_extensions=(".rs", "/mod.rs"),
        tuning=CrossFileTuning(member_evidence=0.25),
    ),
)
