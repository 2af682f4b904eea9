"""How many threads a typing request writes with (`local_threads.typing_threads`): every
idle core where this machine measured more threads writing faster, one thread where it did
not or has not measured yet, and `local.threads` whenever it is set. The rewrite keeps
every idle core whatever the measurement says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from lsp_assist.config.schema import LocalConfig
from lsp_assist.context.builder import ContextEngine
from lsp_assist.domain import Cursor, ModelRequest
from lsp_assist.providers import local_stream
from lsp_assist.providers.local import LocalProvider
from lsp_assist.providers.local_threads import typing_threads, typing_threads_line
from lsp_assist.providers.model_rates import ModelRates
from tests.unit.providers.conftest import loaded_gemma

# The two machines the default was measured on (tokens written per second, Gemma 3 270M):
# one thread as fast as two (95 / 98), and one thread about half as fast (25 / 45).
AS_FAST = ModelRates(gen_tps=95.0, compute_tps=700.0, measured=True, rest_gen_tps=98.0)
TWICE = ModelRates(gen_tps=25.0, compute_tps=700.0, measured=True, rest_gen_tps=45.0)


def test_every_idle_core_writes_where_this_machine_measured_it_faster() -> None:
    assert typing_threads(0, 2, TWICE) == 2
    assert typing_threads(0, 1, TWICE) == 1  # another process keeps a core busy


def test_one_thread_where_more_are_not_faster_or_not_measured_yet() -> None:
    assert typing_threads(0, 2, AS_FAST) == 1
    estimate = ModelRates(gen_tps=25.0, compute_tps=700.0, measured=False, rest_gen_tps=45.0)
    assert typing_threads(0, 2, estimate) == 1
    assert typing_threads(0, 2, ModelRates(gen_tps=25.0, compute_tps=700.0, measured=True)) == 1


def test_configured_threads_win() -> None:
    assert typing_threads(3, 2, TWICE) == 3
    assert typing_threads(1, 2, TWICE) == 1


def test_doctor_says_what_typing_writes_on_and_why() -> None:
    assert (
        typing_threads_line(0, 2, TWICE)
        == "every idle core, up to 2 (45.0 tokens/s on 2 threads, 25.0 on one)"
    )
    assert typing_threads_line(0, 2, AS_FAST).startswith(
        "one thread (98.0 tokens/s on 2 threads, 95.0 on one"
    )
    estimate = ModelRates(gen_tps=25.0, compute_tps=700.0)
    assert typing_threads_line(0, 2, estimate) == "one thread until the model's rates are measured"
    assert typing_threads_line(3, 2, TWICE) == "3 thread(s): local.threads = 3"


@pytest.mark.model
@pytest.mark.timeout(300)
@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="the 'local' extra is not installed"
)
@pytest.mark.parametrize(("rates", "threads"), [(TWICE, 2), (AS_FAST, 1)])
async def test_the_typing_model_writes_with_the_threads_its_rates_call_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rates: ModelRates, threads: int
) -> None:
    monkeypatch.setattr(local_stream, "prompt_threads", lambda most: 2)  # two idle cores
    p: LocalProvider = await loaded_gemma(tmp_path, LocalConfig(refine_model=""))
    try:
        p._parts.rates.rates[p._parts.settings.model_name] = rates
        source = "def add(a, b):\n    return "
        ctx = ContextEngine().build_from_text(source, "python", "/tmp/add.py", Cursor(1, 11), 1500)
        text = "".join([c.text async for c in p.stream(ModelRequest(ctx, max_tokens=4, temperature=0.0))])
        assert text.strip(), "the model answered nothing"
        engine = p._parts.loader.engine
        assert (engine.threads, engine.batch_threads) == (threads, 2)
    finally:
        await p.aclose()


def test_the_keystrokes_prediction_uses_the_rate_typing_writes_at() -> None:
    from lsp_assist.providers.roles import TYPING_READ, TYPING_WRITE, Candidate

    def keystroke(rates: ModelRates) -> float:
        return Candidate("gemma3-270m", 253_114_752, 270.0, rates).typing_s()

    one = ModelRates(gen_tps=25.0, compute_tps=700.0, measured=True, rest_gen_tps=25.0)
    assert keystroke(TWICE) < keystroke(one)
    # Where more threads write no faster, typing writes on one, and so does the prediction.
    assert keystroke(AS_FAST) == AS_FAST.read_s(TYPING_READ) + AS_FAST.write_s(TYPING_WRITE)
    assert keystroke(TWICE) == TWICE.read_s(TYPING_READ) + TWICE.write_s(TYPING_WRITE, rest=True)
