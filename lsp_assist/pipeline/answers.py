"""`AnswerStore`: where answers go once they exist, so the next request can reuse them.

One place caches a suggestion under its prompt key, remembers it for typing-through at the
position it was shown, announces a longer one with `suggestionReady`, and keeps the last
request's latency and tier (the status item reads them). Every feature stores answers
through it, so the rule "cache it and remember it for typing-through" lives once.

It also holds the policy epoch (`governance/epoch.py`): an answer whose target was read
under an older epoch is not current, is never found for typing-through, and is not
announced; the cache needs no epoch (its key is the prompt, built under the boundary).
"""

from __future__ import annotations

from collections.abc import Callable

from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.governance.epoch import PolicyEpoch
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.request import Target
from lsp_assist.pipeline.typing_index import TypingHit, TypingIndex

#: (uri, version, cursor): a fuller suggestion than the one shown is ready at `cursor`.
ReadyListener = Callable[[str, int, Cursor], None]
#: (latency ms, tier, outcome) of each finished inline-completion request.
AnsweredListener = Callable[[float, str, str], None]


class AnswerStore:
    def __init__(
        self,
        cache: SuggestionCache,
        typing: TypingIndex,
        store: DocumentStore,
        epoch: PolicyEpoch | None = None,
    ) -> None:
        self.cache = cache
        self.typing = typing
        self.store = store
        self.epoch = epoch if epoch is not None else PolicyEpoch()
        self.on_suggestion_ready: ReadyListener | None = None
        # A hook for the status item (and tracing): called after every answered request.
        self.on_answered: AnsweredListener | None = None
        self.last_latency_ms = 0.0
        self.last_tier = ""

    def version(self, uri: str) -> int:
        doc = self.store.get(uri)
        return -1 if doc is None else int(doc.version)

    def current(self, target: Target) -> bool:
        """The document is still at the version the answer was computed for, under the
        policy its input was read under."""
        return self.version(target.uri) == target.snap.version and self.epoch.admits(target.epoch)

    def admits(self, target: Target) -> bool:
        """An answer worked out for `target` may still be given: the policy its input was
        read under is the current one."""
        return self.epoch.admits(target.epoch)

    # -- reading -------------------------------------------------------------------------------

    def typing_through(self, target: Target) -> TypingHit | None:
        if not self.epoch.admits(target.epoch):
            return None
        return self.typing.lookup(target.uri, target.snap.text, target.offset, epoch=target.epoch)

    def cached(self, key: str) -> str | None:
        return self.cache.get(key)

    # -- writing -------------------------------------------------------------------------------

    def remember(self, target: Target, text: str, tier: str, *, replaces: bool = False) -> None:
        """Typing-through memory only (an answer shown at `target`; `replaces`: instead of
        every one found there, `TypingIndex.forget_found`)."""
        uri, snap, at, epoch = target.uri, target.snap, target.offset, target.epoch
        if replaces:
            self.typing.forget_found(uri, snap.text, at, epoch=epoch)
        self.typing.remember(uri, snap.text, at, text, tier, epoch=epoch)

    def keep(self, key: str, target: Target, text: str, tier: str, *, replaces: bool = False) -> None:
        """Cache `text` under `key` and remember it at `target`."""
        if not text:
            return
        self.cache.put(key, text)
        self.remember(target, text, tier, replaces=replaces)

    def stream_ended(
        self, key: str, target: Target, text: str, tier: str, *, shown: str, replaces: bool = False
    ) -> None:
        """A stream's full answer: keep it, and announce it when it is longer than `shown`.

        `replaces`: `text` is a refinement of `shown` (the whole prompt's answer where
        `shown` came from a prompt cut to the budget): announced whenever it differs, and
        remembered only where the user still is or typed on into it."""
        at = (target.snap.version, target.cursor) if self.current(target) else self._typed_into(target, text)
        if replaces:
            if at is None:  # the user typed something else: the shown text may still be there
                self.cache.put(key, text)
                return
            self.keep(key, target, text, tier, replaces=True)
            if text.rstrip() == shown.rstrip():
                return
        else:
            self.keep(key, target, text, tier)
            if len(text) <= len(shown):
                return
        listener = self.on_suggestion_ready
        if at is not None and listener is not None:  # also where the user typed on into it since
            listener(target.uri, at[0], at[1])

    def grew(self, target: Target, text: str, tier: str) -> None:
        """A live stream's text grew past what was shown: remember it at `target` (the next
        request there answers it from the typing-through index, at once) and announce it, so
        the editor asks again and extends the ghost text in place. When the user typed on
        into the suggestion since the stream started (the shown answer came from a later
        keystroke's request attached to it), the announcement is for where they are now;
        when they typed something else, the growth stops."""
        if not text:
            return
        at = (target.snap.version, target.cursor)
        if not self.current(target):
            moved = self._typed_into(target, text)
            if moved is None:
                return
            at = moved
        self.remember(target, text, tier)
        listener = self.on_suggestion_ready
        if listener is not None:
            listener(target.uri, at[0], at[1])

    def _typed_into(self, target: Target, text: str) -> tuple[int, Cursor] | None:
        """(version, cursor) now, when the document differs from `target` only by the
        start of `text` typed at its cursor; None otherwise."""
        doc = self.store.get(target.uri)
        if doc is None or not self.epoch.admits(target.epoch):
            return None
        now, old, offset = doc.text, target.snap.text, target.offset
        tail = len(old) - offset
        if len(now) < len(old) or not now.startswith(old[:offset]) or not now.endswith(old[offset:]):
            return None
        typed = now[offset : len(now) - tail]
        if not text.startswith(typed):
            return None
        end = offset + len(typed)
        line = now.count("\n", 0, end)
        return int(doc.version), Cursor(line, end - (now.rfind("\n", 0, end) + 1))

    def answered(self, latency_ms: float, tier: str, outcome: str) -> None:
        """Every finished request (the status item's figures)."""
        self.last_latency_ms = latency_ms
        self.last_tier = tier
        listener = self.on_answered
        if listener is not None:
            listener(latency_ms, tier, outcome)

    def forget(self, uri: str) -> None:
        self.typing.forget(uri)
