"""Adaptive trailing-edge debounce and supersession."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from lsp_assist.pipeline.scheduler import Scheduler, Superseded


async def test_a_newer_ticket_supersedes_a_request_in_its_debounce() -> None:
    s = Scheduler(min_ms=10, max_ms=90)
    s.note_change("u")
    await asyncio.sleep(0.05)
    s.note_change("u")  # typing fast: the debounce grows past the minimum
    first = s.ticket("u")
    waiter = asyncio.ensure_future(s.debounce("u", first, invoked=False))
    await asyncio.sleep(0)
    second = s.ticket("u")
    with pytest.raises(Superseded):
        await asyncio.wait_for(waiter, 1)
    assert s.is_current("u", second)
    assert s.superseded == 1


async def test_invoked_requests_skip_the_debounce() -> None:
    s = Scheduler(min_ms=500, max_ms=900)
    t = s.ticket("u")
    assert await asyncio.wait_for(s.debounce("u", t, invoked=True), 0.1) == 0.0


def test_debounce_adapts_to_the_typing_rhythm() -> None:
    s = Scheduler(min_ms=10, max_ms=90)
    assert s.debounce_for("u") == 0.0  # no typing seen: at once
    st = s._state("u")
    # A fast burst (40 ms between keys) asks for a little more than the gap.
    st.last_change = time.monotonic()
    st.interval_ewma = 0.04
    assert s.debounce_for("u") == pytest.approx(0.06)
    st.interval_ewma = 0.2  # slower typing: capped at the maximum
    assert s.debounce_for("u") == pytest.approx(0.09)
    st.last_change = time.monotonic() - 1.0  # a pause: at once
    assert s.debounce_for("u") == 0.0


async def test_trailing_edge_the_last_keystroke_gets_its_request() -> None:
    s = Scheduler(min_ms=5, max_ms=30)
    tickets = []
    for _ in range(5):
        s.note_change("u")
        tickets.append(s.ticket("u"))
    last = tickets[-1]
    waited = await asyncio.wait_for(s.debounce("u", last, invoked=False), 1)
    assert waited > 0


async def test_the_debounce_runs_from_the_keystroke_not_from_the_request() -> None:
    sched = Scheduler(min_ms=10, max_ms=200)
    for _ in range(4):  # a fast burst: the debounce grows to the cap
        sched.note_change("u")
        await asyncio.sleep(0.03)
    sched.note_change("u")
    assert sched.debounce_for("u") > 0.04
    ticket = sched.ticket("u")
    await asyncio.sleep(0.15)  # the request waited elsewhere longer than the debounce (no pause)
    assert await sched.debounce("u", ticket, invoked=False) == 0.0


async def test_the_first_key_after_a_pause_fires_at_once() -> None:
    # A minimum far longer than the test's bound: a request that slept on it could not return.
    s = Scheduler(min_ms=5000, max_ms=9000)
    s.note_change("u")  # the first key seen (nothing before it): after a pause
    ticket = s.ticket("u")
    assert await asyncio.wait_for(s.debounce("u", ticket, invoked=False), 1.0) == 0.0
    assert s.debounce_for("u") == 0.0


async def test_a_key_after_a_pause_in_a_burst_document_fires_at_once() -> None:
    s = Scheduler(min_ms=5000, max_ms=9000)
    st = s._state("u")
    st.interval_ewma = 0.05  # the user was typing fast ...
    st.last_change = time.monotonic() - 2.0  # ... then paused two seconds
    s.note_change("u")  # and typed one key
    ticket = s.ticket("u")
    assert await asyncio.wait_for(s.debounce("u", ticket, invoked=False), 1.0) == 0.0


def test_word_triggers_fire_at_once_after_a_word_ends_and_wait_inside_one() -> None:
    s = Scheduler(min_ms=10, max_ms=90, word_triggers=True)
    st = s._state("u")
    st.last_change = time.monotonic()
    st.interval_ewma = 0.04  # in a fast burst
    for ch in (".", "(", " ", "\n", "\t"):
        assert s.debounce_for("u", "x" + ch) == 0.0, repr(ch)
    assert s.debounce_for("u", "a") == pytest.approx(0.06)  # inside a word: the burst's wait
    assert s.debounce_for("u", "") == pytest.approx(0.06)  # unknown: the burst's wait
    plain = Scheduler(min_ms=10, max_ms=90)  # without word triggers every key waits in a burst
    plain._state("u").last_change, plain._state("u").interval_ewma = st.last_change, 0.04
    assert plain.debounce_for("u", ".") == pytest.approx(0.06)


def test_the_debounce_defaults_follow_the_fast_tiers_provider_and_a_set_key_wins() -> None:
    from lsp_assist.config.loader import config_from_dict
    from lsp_assist.pipeline.scheduler import DEBOUNCE_DEFAULTS, debounce_policy

    unset, errors = config_from_dict({})
    assert errors == [] and unset.completion.debounce_min_ms is None
    assert debounce_policy(unset.completion, "local") == DEBOUNCE_DEFAULTS["local"]
    assert debounce_policy(unset.completion, "offline") == DEBOUNCE_DEFAULTS["local"]
    for remote in ("openai", "ollama", "llamacpp", "anthropic", "mistral"):
        assert debounce_policy(unset.completion, remote) == DEBOUNCE_DEFAULTS["remote"]
    # The keys as they always were: a value set by the user wins over the kind's default.
    set_, errors = config_from_dict({"completion": {"debounce_min_ms": 10, "debounce_max_ms": 300}})
    assert errors == []
    for kind in ("local", "openai"):
        policy = debounce_policy(set_.completion, kind)
        assert (policy.min_ms, policy.max_ms) == (10, 300)
    triggers, _ = config_from_dict({"completion": {"debounce_word_triggers": True}})
    assert debounce_policy(triggers.completion, "local").word_triggers is True


def test_the_runtime_configures_its_scheduler_from_the_policy(tmp_path: Path, isolated: Path) -> None:
    from lsp_assist.config.loader import ConfigLayers
    from lsp_assist.pipeline.scheduler import DEBOUNCE_DEFAULTS
    from lsp_assist.server import Runtime

    tier = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    rt = Runtime(ConfigLayers(init_options={"tiers": {"fast": tier}}), [tmp_path])
    rt.build()
    remote = DEBOUNCE_DEFAULTS["remote"]
    assert (rt.scheduler.min_s, rt.scheduler.word_triggers) == (remote.min_ms / 1000, remote.word_triggers)
    rt.layers.client = {
        "completion": {"debounce_min_ms": 20, "debounce_max_ms": 200, "debounce_word_triggers": True}
    }
    rt.build()
    assert (rt.scheduler.min_s, rt.scheduler.max_s, rt.scheduler.word_triggers) == (0.02, 0.2, True)
