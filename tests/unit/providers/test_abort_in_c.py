"""A background read's cancel is read by llama.cpp in C (`llama_abort.py`): no Python call
per graph node, so a busy event loop does not slow the read down. Marked `model` where the
real embedded model decodes; no timing."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

import pytest

from lsp_assist.errors import Unavailable
from lsp_assist.providers.llama_abort import AbortWatch, CancelFlag
from lsp_assist.providers.llama_engine import Job, LlamaEngine
from lsp_assist.providers.models import resolve_model


def test_a_cancel_flag_is_a_byte_llama_cpp_can_read() -> None:
    flag = CancelFlag()
    assert flag.cell.value == b"0" and not flag.is_set()
    flag.set()
    assert flag.cell.value == b"1" and flag.is_set()
    flag.clear()
    assert flag.cell.value == b"0" and not flag.is_set()


def test_jobs_cancel_with_a_flag() -> None:
    assert isinstance(Job(tokens=[], max_tokens=1, temperature=0.0, emit=lambda _t: True).cancel, CancelFlag)


class _Lib:
    """llama.cpp's two calls `AbortWatch` makes, recording the callback it sets."""

    def __init__(self) -> None:
        self.set_to: list[Any] = []

    def ggml_abort_callback(self, *args: Any) -> Any:
        return ("callback", args[0] if args else None)

    def llama_set_abort_callback(self, _ctx: Any, callback: Any, data: Any) -> None:
        self.set_to.append((callback, data))


def test_a_plain_event_falls_back_to_the_python_callback() -> None:
    lib = _Lib()
    watch = AbortWatch(lib, None)
    with watch.watching(threading.Event()):
        callback, data = lib.set_to[-1]
        assert callable(callback[1]) and data is None
    with watch.watching(CancelFlag()):
        callback, data = lib.set_to[-1]
        assert isinstance(callback[1], int) and data is not None  # the C function's address
    assert (watch.in_python, watch.in_c) == (1, 1)
    assert lib.set_to[-1] == (("callback", None), None)  # unset after


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("the 'local' extra is not installed")
    try:
        path = resolve_model("gemma3-270m", tmp_path_factory.mktemp("models"))
    except Unavailable as exc:
        pytest.skip(str(exc))
    eng = LlamaEngine(path, n_ctx=1024, threads=1, batch_threads=2)
    yield eng
    eng.close()


def _tokens(engine: LlamaEngine) -> list[int]:
    text = Path(__file__).read_text(encoding="utf-8")
    return engine.tokenize(text)[:300]


@pytest.mark.model
@pytest.mark.timeout(300)
def test_a_set_flag_stops_the_decode_in_c_without_calling_python(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flag already set stops the first batch at its first node: nothing read, nothing kept
    in the cache; Python was asked once, after the decode, never per node."""
    engine.reset()
    asked: list[bool] = []
    real = AbortWatch.aborting

    def aborting(self: AbortWatch) -> bool:
        asked.append(True)
        return real(self)

    monkeypatch.setattr(AbortWatch, "aborting", aborting)
    flag = CancelFlag()
    flag.set()
    tokens = _tokens(engine)
    with engine._abort.watching(flag):
        assert engine._decode(tokens[:256], logits_from=256) is False
    assert engine.cached_tokens == []
    assert len(asked) == 1  # `_decode` checking why llama.cpp stopped
    # Unset, the same read goes through, with no Python call per node either.
    asked.clear()
    assert engine.prefill(tokens, CancelFlag(), batch=256, abortable=True) == len(tokens) - 1
    assert asked == []
    assert engine.cached_tokens == tokens[:-1]


@pytest.mark.model
@pytest.mark.timeout(300)
def test_settle_keeps_the_batch_under_way_where_cancel_throws_it_away(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite taking the thread from its model's warm-up (`ModelWorker.stop_background`
    with the warm-up's tokens within what the rewrite reads): the batch being decoded when
    `settle` is set is read to its end and kept, and no further batch starts; a `cancel` set
    at the same moment stops it midway."""
    tokens = _tokens(engine)
    real = LlamaEngine._decode

    def read(stop: threading.Event, settle: threading.Event | None) -> int:
        engine.reset()
        calls: list[int] = []

        def decode(self: LlamaEngine, chunk: list[int], logits_from: int) -> bool:
            calls.append(len(chunk))
            if len(calls) == 1:
                stop.set()  # the rewrite comes while the first batch is read
            return real(self, chunk, logits_from=logits_from)

        monkeypatch.setattr(LlamaEngine, "_decode", decode)
        cancel = stop if settle is None else CancelFlag()
        try:
            return engine.prefill(tokens, cancel, batch=64, abortable=True, settle=settle)
        finally:
            monkeypatch.setattr(LlamaEngine, "_decode", real)

    settle = threading.Event()
    assert read(settle, settle) == 64
    assert engine.cached_tokens == tokens[:64]
    assert read(CancelFlag(), None) == 0
    assert engine.cached_tokens == []
