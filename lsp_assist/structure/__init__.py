"""The code-structure model the context engine and the workspace index share.

`symbols.py` reads a file's definitions (names, kinds, signatures, rows) and keeps them
in a `SymbolIndex`; `outline.py` turns a parsed file into its outline (one short line per
definition and member); `imports.py` finds the import lines of a file's head. All three
read their per-language rules from the `languages/` profiles and know nothing of prompts:
what a request makes of them lives in `context/`.
"""
