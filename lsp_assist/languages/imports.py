"""What an import means: the part of each import style that differs by language.

An `ImportRule` (`rules.py`) pairs a pattern with an `ImportStyle`. The style says what a
match names (`line_refs` for a pattern matched per line, `statement_refs` for one matched
on the joined head) and which files an import of it reaches (`resolve`). Each language's
styles live in its profile module (`python.py`: `import a, b` and packages; `rust.py`: use
trees and the crate's module tree; ...); the code that parses a head and resolves its
imports (`structure/imports.py`, `context/import_paths.py`) asks the style and never the
language's name. What a style needs of the workspace is a `PathFinder`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class PathFinder(Protocol):
    """The paths the workspace index and the open tabs know, as an import resolves them."""

    def exists(self, path: str) -> bool: ...

    def suffix(self, tail: str) -> list[str]:
        """Known paths that end with `/tail` (`tail` uses '/')."""
        ...

    def with_exts(self, base: str, exts: Sequence[str]) -> list[str]:
        """`base` with the first of `exts` that makes a known path (empty: none does)."""
        ...

    def in_dir_named(self, tail: str) -> list[str]:
        """Files of the directories whose path ends with `tail`."""
        ...


@dataclass(frozen=True)
class ImportRef:
    """One module an import line (or statement) names, and the names it takes from it."""

    module: str
    names: tuple[str, ...]
    line: str
    style: ImportStyle


class ImportStyle:
    """One way of importing: what a match names and which files it reaches.

    The defaults fit a style whose match names one module (`line_refs`,
    `statement_refs`); a style overrides what its language does otherwise."""

    def __init__(self, kind: str) -> None:
        self.kind = kind  # a label for reading and tests (`python`, `rust_use`, ...)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind!r})"

    def line_refs(self, module: str, names: tuple[str, ...], line: str) -> list[ImportRef]:
        """The imports one line's match spells (`line`: the stripped line)."""
        return [ImportRef(module, names, line, self)]

    def statement_refs(self, module: str, line: str) -> list[ImportRef]:
        """The imports a statement spells that may span lines (`line`: its words on one line)."""
        return [ImportRef(module.strip(), (), line, self)]

    def resolve(self, ref: ImportRef, current: str, finder: PathFinder, exts: Sequence[str]) -> list[str]:
        """The files `ref` reaches from the file `current` (`exts`: what the language tries
        after a path written without an extension)."""
        return []
