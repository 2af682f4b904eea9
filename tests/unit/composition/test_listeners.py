"""What listens to the runtime is set once and reaches every part a rebuild makes."""

from __future__ import annotations

from typing import Any

from lsp_assist.composition.listeners import Listeners
from lsp_assist.domain import Cursor
from lsp_assist.governance.breaker import BreakerState
from lsp_assist.providers.base import LoadEvent
from lsp_assist.server import Runtime


def test_every_rebuilt_engine_has_the_listeners(runtime: Runtime) -> None:
    seen: list[Any] = []
    listeners = runtime.listeners
    listeners.suggestion_ready = lambda uri, version, cursor: seen.append(("ready", uri))
    listeners.choices_ready = lambda uri, version, cursor, items: seen.append(("choices", items))
    listeners.answered = lambda ms, tier, outcome: seen.append(("answered", tier))
    listeners.status = lambda payload: seen.append(("status", payload))
    listeners.model_failure = lambda tier, exc: seen.append(("failed", tier))
    first = runtime.engine
    assert first is not None
    listeners.attach(first)
    runtime.layers.client = {"completion": {"debounce_min_ms": 5}}
    runtime.build()
    engine = runtime.engine
    assert engine is not None and engine is not first
    assert engine.on_suggestion_ready is listeners.suggestion_ready
    assert engine.on_choices_ready is listeners.choices_ready
    assert engine.answers.on_answered is listeners.answered
    assert engine.on_status is listeners.status
    assert engine.tiers.on_failure is listeners.model_failure
    engine.answers.answered(12.0, "fast", "model")
    assert seen == [("answered", "fast")]


def test_an_engine_built_before_the_listeners_gets_them_when_attached(runtime: Runtime) -> None:
    engine = runtime.engine
    assert engine is not None and engine.on_suggestion_ready is None
    ready: list[Cursor] = []
    runtime.listeners.suggestion_ready = lambda uri, version, cursor: ready.append(cursor)
    runtime.listeners.attach(engine)
    assert engine.on_suggestion_ready is not None
    engine.on_suggestion_ready("file:///a.py", 1, Cursor(0, 1))
    assert ready == [Cursor(0, 1)]


def test_breaker_and_team_store_changes_reach_the_listener_as_plain_values() -> None:
    listeners = Listeners()
    listeners.breaker_changed("fast", BreakerState.CLOSED, BreakerState.OPEN)  # nobody listens: no error
    changes: list[tuple[str, ...]] = []
    listeners.breaker_change = lambda name, old, new: changes.append((name, old, new))
    listeners.team_store_change = lambda message, up: changes.append((message, str(up)))
    listeners.breaker_changed("fast", BreakerState.CLOSED, BreakerState.OPEN)
    listeners.team_store_changed("the team store is back", True)
    assert changes == [("fast", "closed", "open"), ("the team store is back", "True")]


def test_the_last_load_event_is_kept_for_a_listener_that_comes_later() -> None:
    listeners = Listeners()
    listeners.load_event(LoadEvent("loading the local model", 10))
    assert listeners.load_state == LoadEvent("loading the local model", 10)
    events: list[LoadEvent] = []
    listeners.load_progress = events.append
    listeners.load_event(LoadEvent("loaded", 100, done=True))
    assert events == [LoadEvent("loaded", 100, done=True)] and listeners.load_state is events[0]
