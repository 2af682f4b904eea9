"""The listeners the LSP layer sets once, which every rebuilt part is given.

A rebuild (a configuration change, a workspace folder added) makes a new engine and new
governance, but what the editor is told must not depend on which build answers: the
listeners live in one object the runtime keeps for its whole life, and each build hands
it to what it makes (`attach` for the engine, the bound dispatchers for governance and
the embedded models) instead of copying callbacks from the parts it replaces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lsp_assist.domain import Cursor
from lsp_assist.governance.breaker import BreakerState
from lsp_assist.pipeline.answers import AnsweredListener, ReadyListener
from lsp_assist.pipeline.engine import CompletionEngine
from lsp_assist.providers.base import LoadEvent

#: (uri, version, cursor, items): an Invoked answer's choices are ready at `cursor`.
ChoicesListener = Callable[[str, int, Cursor, int], None]
#: (tier, error): a model call failed.
FailureListener = Callable[[str, BaseException], None]


@dataclass
class Listeners:
    """Who is told what; None where nobody listens."""

    # The engine's (`attach`): an answer to announce, choices ready, a finished request,
    # a status change, a failed model call.
    suggestion_ready: ReadyListener | None = None
    choices_ready: ChoicesListener | None = None
    answered: AnsweredListener | None = None
    status: Callable[[dict[str, Any]], None] | None = None
    model_failure: FailureListener | None = None
    # A circuit breaker changed state (name, old, new).
    breaker_change: Callable[[str, str, str], None] | None = None
    # The team store went down or came back (message, up).
    team_store_change: Callable[[str, bool], None] | None = None
    # Loading the embedded model (`$/progress`), and the last event, for a listener that
    # arrives after loading began.
    load_progress: Callable[[LoadEvent], None] | None = None
    load_state: LoadEvent | None = None

    def attach(self, engine: CompletionEngine) -> None:
        """Give `engine` the engine's listeners (every engine a build makes, and again
        when the LSP layer sets them)."""
        engine.on_suggestion_ready = self.suggestion_ready
        engine.on_choices_ready = self.choices_ready
        engine.answers.on_answered = self.answered
        engine.on_status = self.status
        engine.tiers.on_failure = self.model_failure

    def breaker_changed(self, name: str, old: BreakerState, new: BreakerState) -> None:
        listener = self.breaker_change
        if listener is not None:
            listener(name, old.value, new.value)

    def team_store_changed(self, message: str, up: bool) -> None:
        listener = self.team_store_change
        if listener is not None:
            listener(message, up)

    def load_event(self, event: LoadEvent) -> None:
        self.load_state = event
        listener = self.load_progress
        if listener is not None:
            listener(event)
