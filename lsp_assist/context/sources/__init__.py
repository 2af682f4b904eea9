"""The context sources: one module per kind of context a prompt can carry.

- `local.py`: the cursor line, the rows around it, the enclosing definitions, the far
  prefix and suffix (and the answer's mode from the syntax at the cursor);
- `imports.py`: the file's imports;
- `signatures.py`: the in-file outline (signatures of what the code near the cursor uses,
  the nearest definitions' first lines);
- `related.py`: lines elsewhere in the file that share the cursor's names;
- `names.py`: the file's names line, and the reading of the names each file spells;
- `other_files.py`: other files' outlines, with `package.py` (the package prior's names
  line) and `editor.py` (definitions from the editor's language server).

A source offers parts (rows of the current file through a `Placer`, or snippets of other
files); only the assembler (`context/assembler.py`) places them, after the gateway.
Nothing is imported here: the modules import each other's neighbours, not the package.
"""
