"""A head's imports read line by line (each row's matches memoized) are `parse_imports`'s."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_assist.structure import imports

JS = """import x from './x';
import { a, b as c } from "../lib/a";
import { a, b as c } from "../lib/a";
const y = require('./y');
export * from './z';
"""


def _heads() -> list[tuple[str, ...]]:
    lib = Path(json.__file__).resolve().parents[1]
    files = sorted(lib.glob("*.py"))[:40]
    heads = [tuple(p.read_text(encoding="utf-8").split("\n")[: imports.HEAD_ROWS]) for p in files]
    return [*heads, tuple(JS.split("\n"))]


def test_every_line_based_language_reads_the_same_imports_as_the_full_parse() -> None:
    for language in imports.IMPORT_RULES:
        rules = imports.line_rules(language)
        if rules is None:
            continue  # statements over several lines or an import block: the full parse
        for head in _heads():
            expected = imports.parse_imports(head, language)
            assert imports._parse_lines(head, language, rules) == expected
            assert imports._parse_lines(head, language, rules) == expected  # from the memo


def test_a_head_without_the_cursor_row_is_read_from_the_rows_memo() -> None:
    head = tuple(JS.split("\n"))
    imports.cached_imports(head, "javascript")
    before = len(imports._LINES._data)
    without = head[:1] + head[2:]
    expected = tuple(imports.parse_imports(without, "javascript"))
    assert imports.cached_imports(without, "javascript") == expected
    assert len(imports._LINES._data) == before  # no row read again


def test_a_versions_import_rows_give_the_head_without_any_row() -> None:
    from lsp_assist.context.head_imports import HeadImports
    from lsp_assist.documents.store import Document

    table = HeadImports()
    py = "import os\nfrom a.b import (c,\n    d)\nimport os\n\nx = 1\nfrom e import f as g\n"
    for language, text in (("javascript", JS), ("python", py), ("go", 'import (\n  "fmt"\n)\n')):
        doc = Document("file:///a", language, 1, text, "/a")
        rows = text.split("\n")
        for row in range(-1, len(rows) + 1):
            head = tuple(t for r, t in enumerate(rows) if r != row)
            got = table.without_row(doc, row, language)
            if language == "go":
                assert got is None  # an import block: the full parse
            else:
                assert got == imports.cached_imports(head, language)
