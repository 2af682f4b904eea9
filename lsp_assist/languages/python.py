"""Python."""

import os
import re
from collections.abc import Sequence

from lsp_assist.languages.imports import ImportRef, ImportStyle, PathFinder
from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.rules import ImportRule, LangSpec, OutlineRules

_PY_SYMBOLS = LangSpec(
    defs={"function_definition": "function", "class_definition": "class"},
    containers=frozenset({"class_definition"}),
    transparent=frozenset({"decorated_definition", "block"}),
    imports=frozenset({"import_statement", "import_from_statement", "future_import_statement"}),
    variables=frozenset({"expression_statement"}),
    assignments="expression_statement",
    member_variables=False,
    top_level_blocks=frozenset({"if_statement", "try_statement"}),
)


_PY_OUTLINE = OutlineRules(
    defs={
        "function_definition": "function",
        "class_definition": "class",
        "expression_statement": "constant",
    },
    containers=frozenset({"class_definition"}),
    bodies=frozenset({"block"}),
    transparent=frozenset({"decorated_definition"}),
    self_attr=r"\bself\.([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)",
    one_line=frozenset({"expression_statement"}),
    name_mangling=True,
)


class PythonImports(ImportStyle):
    """`from a.b import c` and `import a, b as c`: modules by dotted path, relative ones
    (`from ..x import y`) from this file's package."""

    def line_refs(self, module: str, names: tuple[str, ...], line: str) -> list[ImportRef]:
        if line.startswith("from"):
            return [ImportRef(module, names, line, self)]
        out = []
        for part in module.split(","):  # `import a, b as c`: one per module
            mod = part.strip().split()[0] if part.strip() else ""
            if mod:
                out.append(ImportRef(mod, (), line, self))
        return out

    def resolve(self, ref: ImportRef, current: str, finder: PathFinder, exts: Sequence[str]) -> list[str]:
        here = os.path.dirname(current)
        mod = ref.module
        dots = len(mod) - len(mod.lstrip("."))
        parts = [p for p in mod.lstrip(".").split(".") if p]
        found: list[str] = []
        if dots:
            base = here
            for _ in range(dots - 1):
                base = os.path.dirname(base)
            target = os.path.join(base, *parts) if parts else base
            found = finder.with_exts(target, exts) if parts else []
            for name in ref.names:  # `from . import events`: a submodule
                found += finder.with_exts(os.path.join(target, name), exts)
            return found
        if parts:
            tail = "/".join(parts)
            found = finder.suffix(tail + ".py") or finder.suffix(tail + "/__init__.py")
            for name in ref.names:
                found += finder.suffix(f"{tail}/{name}.py")
            if finder.exists(os.path.join(here, "__init__.py")):
                # Inside a package an absolute import never means a sibling module
                # (`import subprocess` in asyncio/ is the top-level one).
                found = [p for p in found if os.path.dirname(p) != here or len(parts) > 1]
        return found


_PYTHON = PythonImports("python")

#: How a file of this family spells an import (matched per line of its head).
_PY_IMPORTS: tuple[ImportRule, ...] = (
    ImportRule(re.compile(r"^\s*from\s+(?P<module>\.*[\w.]*)\s+import\s+\(?(?P<names>[^#)]*)"), _PYTHON),
    ImportRule(
        re.compile(r"^\s*import\s+(?P<module>[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)"),
        _PYTHON,
    ),
)


PROFILES = (
    LanguageProfile(
        name="python",
        grammar=("tree_sitter_python", "language"),
        aliases=("python", "py"),
        extensions={".py": "python", ".pyi": "python", ".pyw": "python"},
        comment=("#", ""),
        symbols=_PY_SYMBOLS,
        outline=_PY_OUTLINE,
        imports=_PY_IMPORTS,
        top_level_stops=("\ndef ", "\nclass ", "\nasync def ", "\n@", "\nif __name__"),
        import_extensions=(".py", "/__init__.py", ".pyi"),
        member_scope=True,
    ),
)
