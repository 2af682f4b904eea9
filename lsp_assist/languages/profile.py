"""`LanguageProfile`: what lsp-assist knows about one language, in one record.

A profile names the tree-sitter grammar (the wheel's module and entry point), the LSP
language ids editors send for it, the file extensions that mean it, its comment syntax,
how the workspace index reads its files, where its definitions live (symbols) and how
its outlines name them. One module per language family holds its
profiles (`python.py`, `javascript.py`, `go.py`, `rust.py`, `java.py`, `c.py`) and
`registry.py` lists them: adding a language is one module and one registry line
(docs/adding-a-language.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lsp_assist.languages.rules import ImportRule, LangSpec, OutlineRules
from lsp_assist.languages.tuning import DEFAULT, CrossFileTuning


@dataclass(frozen=True)
class LanguageProfile:
    name: str  # the canonical id (the grammar's name)
    grammar: tuple[str, str]  # (module of the grammar wheel, its entry point)
    aliases: tuple[str, ...]  # LSP language ids editors send, lower case (the name is one)
    # File extension -> the LSP language id an editor would open it with.
    extensions: Mapping[str, str] = field(default_factory=dict)
    comment: tuple[str, str] = ("//", "")  # (start, end) of a line comment
    # Extensions the workspace index reads with another grammar (a C header as C++), and
    # which: an open file of these is outlined as its indexed copy is.
    index_as: tuple[frozenset[str], str] | None = None
    symbols: LangSpec | None = None  # where definitions and imports live (`structure/symbols.py`)
    outline: OutlineRules | None = None  # how outlines name definitions (`structure/outline.py`)
    # How a file spells an import and what each reaches (`imports.py`, `structure/imports.py`).
    imports: tuple[ImportRule, ...] = ()
    # A file sees what its imports import (a C header's own includes): the index keeps its
    # files' import lines, and those files are cross-file candidates too.
    transitive_imports: bool = False
    # Lines that start a new top-level definition: they end a suggestion made inside a block.
    top_level_stops: tuple[str, ...] = ()
    # Imports one per line inside this block only (Go's `import (`, ended by `)`), else on
    # a line that starts with its first word.
    import_block: str | None = None
    # Extensions tried for an import written without one ("": the import names the file).
    import_extensions: tuple[str, ...] = ()
    # A file sees its directory's other files without an import (Go, Java packages); those
    # files also get the package prior (`context/package_prior.py`).
    package_by_directory: bool = False
    # File name endings of such a directory that are not its package (Go's `_test.go`).
    package_skips: tuple[str, ...] = ()
    # A file's companion header or source: same stem, another of these extensions.
    companions: tuple[str, ...] = ()
    # What may follow `x.` at the cursor is read from the file's own text (`context/members.py`
    # scans Python: classes, `self.x =` assignments, imported modules).
    member_scope: bool = False
    tuning: CrossFileTuning = DEFAULT  # the cross-file step's numbers (`languages/tuning.py`)

    def complete(self) -> list[str]:
        """What this profile lacks (empty when it is usable): a test checks every one."""
        missing = []
        if not self.grammar[0] or not self.grammar[1]:
            missing.append("grammar")
        if self.name not in self.aliases:
            missing.append("aliases (its own name)")
        if not self.comment[0]:
            missing.append("comment")
        if self.symbols is None:
            missing.append("symbols")
        if self.outline is None:
            missing.append("outline")
        if not self.imports:
            missing.append("imports")
        if not self.top_level_stops:
            missing.append("top_level_stops")
        return missing
