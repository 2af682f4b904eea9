"""Python."""

import re

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


#: How a file of this family spells an import (matched per line of its head).
_PY_IMPORTS: tuple[ImportRule, ...] = (
    ImportRule(re.compile(r"^\s*from\s+(?P<module>\.*[\w.]*)\s+import\s+\(?(?P<names>[^#)]*)"), "python"),
    ImportRule(
        re.compile(r"^\s*import\s+(?P<module>[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)"),
        "python",
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
    ),
)
