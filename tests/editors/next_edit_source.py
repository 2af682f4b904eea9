"""The real Python file the next-edit editor tests edit, and where a parameter is used next.

The standard library's `textwrap.py` (a few hundred lines), read from the interpreter running
the tests: its line numbers differ between Python versions, so the rows are computed here.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

#: No model in these tests (the quality tier's default would load the embedded one): the rules
#: predictor answers next edits without any.
OFFLINE = {"provider": "offline"}


def source_file() -> str:
    text = Path(textwrap.__file__).read_text()
    assert text.count("\n") > 300
    return text


def server() -> str:
    """The `lsp-assist` console script next to the interpreter (the venv's)."""
    local = Path(sys.executable).with_name("lsp-assist")
    assert local.exists(), "lsp-assist console script not found (pip install -e . into the venv)"
    return str(local)


def code_lines(lines: list[str], start: int) -> list[int]:
    """Rows after `start` that are code: outside the docstring that follows a def line."""
    rows, in_doc = [], False
    for row in range(start + 1, len(lines)):
        text = lines[row]
        quotes = text.count('"""')
        if in_doc:
            in_doc = quotes == 0
            continue
        if quotes == 1:
            in_doc = True
            continue
        if quotes >= 2 or text.lstrip().startswith("#"):
            continue
        if text.startswith(("def ", "class ")):
            break
        rows.append(row)
    return rows


def occurrence(lines: list[str], def_prefix: str, name: str) -> tuple[int, int, int, int]:
    """(def row, the parameter's column there, next use's row and column) in the function."""
    def_row = next(i for i, text in enumerate(lines) if text.startswith(def_prefix))
    col = re.search(rf"\b{name}\b", lines[def_row])
    assert col is not None
    for row in code_lines(lines, def_row):
        use = re.search(rf"\b{name}\b", lines[row])
        if use is not None:
            return def_row, col.start(), row, use.start()
    raise AssertionError(f"no use of {name} after {def_prefix}")
