"""`lspAssist/definitions` from the editor (`context/editor_definitions.py`): the
definitions it resolved for an open document are kept, and the files they point into that
lsp-assist has not indexed (a library, a stub) are outlined too, read and parsed in a
worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import logging

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.editor_definitions import (
    VERSION_TOLERANCE,
    LoadedFile,
    load_definition_files,
    parse_notification,
)
from lsp_assist.documents.store import DocumentStore

log = logging.getLogger(__name__)

_EDITOR_LOADS: set[asyncio.Task[None]] = set()  # file loads for editor definitions in flight


class EditorDefinitions:
    """The editor's definitions into the context engine."""

    def __init__(self, store: DocumentStore, context: ContextEngine) -> None:
        self.store = store
        self.context = context

    def note(self, params: object) -> str:
        """Keep what `params` carries; returns a log line with counts only (never names or
        text). Raises ValueError on a bad envelope."""
        uri, version, defs, bad = parse_notification(params)
        doc = self.store.get(uri)
        if doc is None:
            return "editor definitions for a document that is not open; ignored"
        if doc.version - version > VERSION_TOLERANCE:
            return f"editor definitions for version {version}, {doc.version - version} edits old; ignored"
        kept, excluded = self.context.editor_definitions.update(uri, version, defs)
        paths = self.context.editor_files.wanted(
            self.context.symbols, self.context.editor_definitions.current(uri, doc.version)
        )
        if paths:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a direct call): read them now
                self._add_files(load_definition_files(paths))
            else:
                task = loop.create_task(self._load_files(paths))
                _EDITOR_LOADS.add(task)
                task.add_done_callback(_EDITOR_LOADS.discard)
        return (
            f"editor definitions: {kept} kept, {excluded} from excluded files dropped, {bad} malformed;"
            f" {len(paths)} files to outline"
        )

    async def _load_files(self, paths: list[str]) -> None:
        try:
            loaded = await asyncio.to_thread(load_definition_files, paths)
        except Exception:
            log.exception("editor definitions: reading their files failed")
            return
        self._add_files(loaded)

    def _add_files(self, loaded: list[LoadedFile]) -> None:
        excluded = self.context.editor_definitions.excluded
        n = self.context.editor_files.add(self.context.symbols, loaded, excluded)
        log.debug("editor definitions: %d files outlined", n)
