"""A tiny language server on stdio that answers `textDocument/definition` from a table.

Stands in for the language's own server (pyright, gopls...) next to lsp-assist in editor
tests: `python -m tests.fakes.fake_definition_server TABLE.json LOG.jsonl`, where TABLE maps a
name to `{"uri": ..., "line": N}` (or to `"slow"`: that request is answered only after 5 s,
unless cancelled first). Every definition request is appended to LOG as one JSON line
(name, position, and whether it was answered), so a test can check what the client asked.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def main() -> None:
    table: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    log_path = Path(sys.argv[2])
    server = LanguageServer("fake-definitions", "0.1")

    def log(entry: dict[str, Any]) -> None:
        with log_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: LanguageServer, params: types.DefinitionParams) -> list[types.Location] | None:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        lines = doc.source.split("\n")
        row, col = params.position.line, params.position.character
        name = ""
        if row < len(lines):
            for m in WORD.finditer(lines[row]):
                if m.start() <= col < m.end():
                    name = m.group(0)
        hit = table.get(name)
        if hit == "slow":
            log({"name": name, "line": row, "character": col, "answered": False})
            await asyncio.sleep(5)
            return None
        log({"name": name, "line": row, "character": col, "answered": hit is not None})
        if not isinstance(hit, dict):
            return None
        pos = types.Position(line=int(hit["line"]), character=4)
        return [types.Location(uri=str(hit["uri"]), range=types.Range(start=pos, end=pos))]

    server.start_io()


if __name__ == "__main__":
    main()
