"""Which files an import reaches, among the paths the index and the open tabs know.

`PathResolver` is the `PathFinder` the import styles of `languages/` resolve through (what
an import means is the style's to say: `languages/imports.py`); here also what the
candidate search needs of that per request, kept while the index and the import lines
stay the same: each import's files and the names it takes from modules that only
re-export them, and what the imported files import in turn (C and C++ headers).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from lsp_assist.languages import profile
from lsp_assist.languages.imports import ImportRef
from lsp_assist.structure.imports import cached_imports
from lsp_assist.structure.symbols import SymbolIndex, path_stem

MAX_REEXPORT_DEFINERS = 2  # files defining an imported name that a module re-exports
MAX_IMPORT_DEPTH = 3  # levels of includes followed past the file's own
MAX_TRANSITIVE = 48  # files reached that way, at most


class PathResolver:
    """Finds the files an import names, among the paths the index and the open tabs know."""

    def __init__(self, index: SymbolIndex, open_paths: Iterable[str]) -> None:
        self.index = index
        self.open = set(open_paths)

    def exists(self, path: str) -> bool:
        return path in self.open or self.index.has_path(path)

    def by_stem(self, stem: str) -> list[str]:
        got = set(self.index.paths_with_stem(stem))
        got.update(p for p in self.open if path_stem(p) == stem)
        return sorted(got)

    def suffix(self, tail: str) -> list[str]:
        """Known paths that end with `/tail` (tail uses '/')."""
        stem = path_stem(tail)
        want = "/" + tail.lstrip("/")
        return [p for p in self.by_stem(stem) if p.replace(os.sep, "/").endswith(want)]

    def with_exts(self, base: str, exts: Sequence[str]) -> list[str]:
        out = []
        for ext in exts:
            p = os.path.normpath(base + ext)
            if self.exists(p):
                out.append(p)
                break
        return out

    def in_dir_named(self, tail: str) -> list[str]:
        return self.index.paths_in_dir_named(tail)

    def reexported(self, ref: ImportRef, targets: Sequence[str], current: str) -> dict[str, list[str]]:
        """The names an import takes from `targets` that none of them defines, mapped to the
        files that do, under the targets' directories: the name's module re-exports it
        (Rust's `pub use kind::ErrorKind` in error/mod.rs, a TypeScript index.ts,
        `from .kind import ErrorKind` in an __init__.py). A name more than
        `MAX_REEXPORT_DEFINERS` files define is left where it was imported from."""
        if not ref.names or not targets:
            return {}
        scopes = tuple({os.path.dirname(t) + os.sep for t in targets})
        out: dict[str, list[str]] = {}
        for name in ref.names:
            syms = self.index.lookup(name)
            if not syms or any(s.path in targets for s in syms):
                continue
            top = [s for s in syms if s.container is None and s.path != current and s.path.startswith(scopes)]
            # A definition over an `impl X for Name` block of another file.
            defs = sorted({s.path for s in top if not s.signature.startswith("impl")}) or sorted(
                {s.path for s in top}
            )
            if 0 < len(defs) <= MAX_REEXPORT_DEFINERS:
                out[name] = defs
        return out

    def resolve(self, ref: ImportRef, current: str, language: str) -> list[str]:
        """The files `ref` reaches from `current`: its import style's to say (`languages/`)."""
        spelled = profile(language)
        exts = (spelled.import_extensions if spelled is not None else ()) or ("",)
        return ref.style.resolve(ref, current, self, exts)


_Resolved = tuple[tuple[ImportRef, list[str], dict[str, list[str]]], ...]
_RESOLVED_CACHE: dict[tuple[object, ...], _Resolved] = {}


def resolved_imports(
    resolver: PathResolver, refs: tuple[ImportRef, ...], path: str, language: str
) -> _Resolved:
    """Each import's files and the names it takes from modules that only re-export them,
    kept per index state, open files and import lines: the same for every request in a file
    until one of those changes (resolving them took ~0.5 ms of each request that gathered)."""
    index = resolver.index
    key = (index.instance, index.generation, frozenset(resolver.open), refs, path, language)
    got = _RESOLVED_CACHE.get(key)
    if got is None:
        out = []
        for ref in refs:
            targets = resolver.resolve(ref, path, language)
            out.append((ref, targets, resolver.reexported(ref, targets, path)))
        got = tuple(out)
        if len(_RESOLVED_CACHE) >= 64:
            _RESOLVED_CACHE.clear()
        _RESOLVED_CACHE[key] = got
    return got


_TRANSITIVE_CACHE: dict[tuple[int, int, tuple[str, ...], str], list[tuple[str, int, str]]] = {}


def transitive_imports(
    resolver: PathResolver, direct: tuple[str, ...], language: str
) -> list[tuple[str, int, str]]:
    """(file, depth, the file that imports it) for what `direct`'s files import, breadth
    first, from the import statements recorded in the index (never a file read). Kept per
    index state and set of direct imports: typing in a file changes neither."""
    index = resolver.index
    key = (index.instance, index.generation, direct, language)
    got = _TRANSITIVE_CACHE.get(key)
    if got is not None:
        return got
    seen = set(direct)
    out: list[tuple[str, int, str]] = []
    level = list(dict.fromkeys(direct))
    for depth in range(1, MAX_IMPORT_DEPTH + 1):
        nxt: list[str] = []
        for src in level:
            for ref in cached_imports(index.imports(src), language):
                for p in resolver.resolve(ref, src, language):
                    if p not in seen and len(out) < MAX_TRANSITIVE:
                        seen.add(p)
                        out.append((p, depth, src))
                        nxt.append(p)
        level = nxt
    if len(_TRANSITIVE_CACHE) >= 32:
        _TRANSITIVE_CACHE.clear()
    _TRANSITIVE_CACHE[key] = out
    return out
