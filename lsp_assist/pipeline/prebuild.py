"""`PromptPrebuilder`: the fast tier's prompt, built right after each edit, where it ended.

A completion request's own work before its model call was mostly the prompt: the
incremental re-parse, the symbol scan and the context build (2-5 ms on a 1,000-line
file). Editors ask for the completion a little after the edit that prompts it (VS Code
waits 50 ms after a change before it asks, Neovim 0.12 200 ms), and the request's cursor
is nearly always where the edit's text ended. So the store's `on_change` hook queues a
build there, a few milliseconds later; the request then finds that prompt in the
`PromptBuilder`'s memo (keyed by the text, the cursor and everything else the prompt
depends on, so a prompt built for another cursor or text is simply not found). The short
delay lets a request that comes with the edit (a client that sends both at once) run
first: it may need no prompt at all (typing-through), and when it does, it builds it
itself and the queued build finds it in the memo.

A request at a fresh position of an unchanged document (the user clicked elsewhere and
asks with Alt+\\, or a client asks on cursor moves) has no edit to guess from; but the
cursor-rest notification editors already send (`lspAssist/cursorRest`) says where the
cursor rests: `note_rest` queues the same build there, so that request too finds its
prompt built and only looks it up (`built_at_rest` counts those builds).

A document opened or replaced whole gives no cursor to guess: then what every build of
that version reads first at any position (each row's names and length,
`ContextEngine.warm`) is read a little later, so a request anywhere in it finds them.
Then, and after each edit pause of `ROWS_AFTER_EDIT_S`, the cross-file step's memos are
filled at every row of the version (`ContextEngine.warm_rows`: the candidate files per
scope and their ranked outlines), a slice of `ROWS_SLICE_S` at a time, so a request at a
fresh position only looks them up; an edit stops it (its own pause starts it again).

Edits that come faster than that are coalesced: one build per document, at the last
edit. Nothing is built for a document that is excluded, too large, of a disabled
language, or replaced whole (no cursor to guess), nor where the user is typing what a
suggestion said (typing-through answers that key without a prompt). Nothing here sends
anything anywhere.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from lsp_assist.config.schema import Config
from lsp_assist.documents.store import Document, DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.pipeline.prompt import PromptBuilder
from lsp_assist.pipeline.typing_index import TypingIndex

log = logging.getLogger(__name__)

TIER = "fast"  # Automatic requests ask the fast tier
DELAY_S = 0.003  # after the edit: a request sent with it runs first (VS Code asks 50 ms later)
WARM_DELAY_S = 0.05  # after didOpen: the requests an editor sends with it run first
# Larger documents are built by their requests only: on a huge file (minified, generated)
# a build per keystroke could cost more than the requests that actually come.
MAX_CHARS = 512_000
ROWS_AFTER_EDIT_S = 0.5  # an edit pause this long: the rows' cross-file memos again
ROWS_SLICE_S = 0.002  # of that work at a time: a request waits at most this for the loop
ROWS_PAUSE_S = 0.001  # between two slices
# While an embedded model works (a request, a prefill, the rewrite's warm-up or its read at
# the rest), the fill waits this long and looks again: ~1 s of CPU for an 800-row file, on
# two cores beside a model reading with both, would slow the rewrite the user rests for.
ROWS_BUSY_RETRY_S = 0.25
# Nor while the user edits: the fill waits for this long without an edit to any document
# (in a long typing session over twelve files the fill's slices, run after every 0.5 s
# pause, halved the requests the server answered in a time).
ROWS_QUIET_S = 1.0


class PromptPrebuilder:
    def __init__(
        self,
        store: DocumentStore,
        prompts: Callable[[], PromptBuilder | None],
        typing: TypingIndex | None = None,
        *,
        delay_s: float = DELAY_S,
        models_busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store = store
        self._models_busy = models_busy  # an embedded model is working (`ROWS_BUSY_RETRY_S`)
        self._last_edit = 0.0  # `time.monotonic()` of the last change to any document
        self._prompts = prompts  # the current engine's builder (rebuilt on a config change)
        self.typing = typing
        self.delay_s = delay_s
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._rows: dict[str, asyncio.TimerHandle] = {}  # the rows' cross-file memos, per document
        self.built = 0
        self.built_at_rest = 0
        self.warmed = 0
        self.rows_warmed = 0  # documents whose every row was done

    def note_change(self, doc: Document) -> None:
        """A store `on_change` hook: queue a build at the end of the edit (runs per keystroke,
        so it only queues); after didOpen or a whole replacement (no cursor to guess), the
        version's warm-up a little later, once the editor's own burst of requests is over."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (the CLI, in-process tools): nothing to overlap
            return
        self._last_edit = time.monotonic()
        old = self._pending.pop(doc.uri, None)
        if old is not None:
            old.cancel()
        delay = self.delay_s if doc.edit_end is not None else WARM_DELAY_S
        self._pending[doc.uri] = loop.call_later(delay, self._build, doc.uri, None)
        rows = self._rows.pop(doc.uri, None)
        if rows is not None:
            rows.cancel()
        if doc.edit_end is not None:  # didOpen's: after the warm-up (`_warm`)
            self._rows[doc.uri] = loop.call_later(ROWS_AFTER_EDIT_S, self._warm_rows, doc.uri, doc.version, 0)

    def note_rest(self, uri: str, version: int | None, cursor: Cursor) -> None:
        """`lspAssist/cursorRest`: the cursor rests at `cursor` of `uri` at `version` (None:
        the current one); queue the build there, after what is already queued for it."""
        doc = self.store.get(uri)
        if doc is None or (version is not None and version != doc.version):
            return  # the user typed since: the edit's own build is queued
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        old = self._pending.pop(uri, None)
        if old is not None:
            old.cancel()
        self._pending[uri] = loop.call_later(self.delay_s, self._build, uri, (doc.version, cursor))

    def forget(self, uri: str) -> None:
        for pending in (self._pending, self._rows):
            handle = pending.pop(uri, None)
            if handle is not None:
                handle.cancel()

    def close(self) -> None:
        """Drop every queued build and row fill (at shutdown, before the workspace index
        closes: a fill still queued read an index whose files were gone)."""
        for uri in {*self._pending, *self._rows}:
            self.forget(uri)

    def _build(self, uri: str, rest: tuple[int, Cursor] | None) -> None:
        """Build at the end of the last edit, or at `rest` (the version it was for, the cursor)."""
        self._pending.pop(uri, None)
        prompts = self._prompts()
        doc = self.store.get(uri)
        if prompts is None or doc is None:
            return
        if rest is None:
            if doc.edit_end is None:
                self._warm(prompts, doc)
                return
            cursor = doc.edit_end
        elif rest[0] != doc.version:
            return
        else:
            cursor = doc.clamp(rest[1])
        if not _wanted(prompts.config, doc) or prompts.excluded(doc.snapshot()) is not None:
            return
        hit = None
        if self.typing is not None:
            hit = self.typing.lookup(uri, doc.text, doc.offset(cursor), epoch=prompts.epoch.value)
        if hit is not None:
            return  # typing-through answers there: no prompt needed
        try:
            prompts.for_open(uri, cursor, TIER)
        except Exception as exc:  # the request builds it again, or degrades; editing goes on
            log.debug("prebuilding the prompt failed: %s", exc)
            return
        self.built += 1
        if rest is not None:
            self.built_at_rest += 1

    def _warm(self, prompts: PromptBuilder, doc: Document) -> None:
        """No cursor: what a build at any position of this version reads first, read now."""
        if not _wanted(prompts.config, doc) or prompts.excluded(doc.snapshot()) is not None:
            return
        try:
            prompts.warm(doc)
        except Exception as exc:  # the first request reads them itself
            log.debug("warming the document failed: %s", exc)
            return
        self.warmed += 1
        self._warm_rows(doc.uri, doc.version, 0)

    def _warm_rows(self, uri: str, version: int, row: int) -> None:
        """One slice of the rows' cross-file memos from `row` on; the next one queued."""
        self._rows.pop(uri, None)
        prompts = self._prompts()
        doc = self.store.get(uri)
        if prompts is None or doc is None or doc.version != version:
            return  # closed, or edited since: that edit's pause starts it again
        if not _wanted(prompts.config, doc) or prompts.excluded(doc.snapshot()) is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._models_busy() or time.monotonic() - self._last_edit < ROWS_QUIET_S:
            self._rows[uri] = loop.call_later(ROWS_BUSY_RETRY_S, self._warm_rows, uri, version, row)
            return
        try:
            nxt = prompts.warm_rows(uri, row, TIER, time.perf_counter() + ROWS_SLICE_S)
        except Exception as exc:  # the requests gather for themselves
            log.debug("warming the rows failed: %s", exc)
            return
        if nxt is None:
            self.rows_warmed += 1
            return
        self._rows[uri] = loop.call_later(ROWS_PAUSE_S, self._warm_rows, uri, version, nxt)


def _wanted(config: Config, doc: Document) -> bool:
    completion = config.completion
    if doc.language_id in completion.languages_disabled:
        return False
    return len(doc.text) <= min(MAX_CHARS, completion.max_document_bytes)
