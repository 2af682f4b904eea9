"""Python."""

from lsp_assist.languages.profile import LanguageProfile
from lsp_assist.languages.rules import LangSpec, OutlineRules

_PY_SYMBOLS = LangSpec(
    defs={"function_definition": "function", "class_definition": "class"},
    containers=frozenset({"class_definition"}),
    transparent=frozenset({"decorated_definition", "block"}),
    imports=frozenset({"import_statement", "import_from_statement", "future_import_statement"}),
    variables=frozenset({"expression_statement"}),
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
    ),
)
