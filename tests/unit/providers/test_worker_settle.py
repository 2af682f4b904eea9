"""A rewrite lets its model's warm-up end the batch under way where the warm-up reads what
the rewrite would (`ModelWorker.stop_background(rewrite_reads=...)`); a key, or any other
read, still stops a background read midway."""

from __future__ import annotations

from lsp_assist.providers.llama_engine import Job
from lsp_assist.providers.local_worker import ModelWorker


def _read(keeps_batch: bool, todo: int = 0) -> Job:
    job = Job(tokens=[], max_tokens=0, temperature=0.0, emit=lambda _t: False, keeps_batch=keeps_batch)
    job.todo = todo
    return job


def test_a_rewrite_lets_the_warm_up_end_its_batch_and_a_key_still_stops_it() -> None:
    worker = ModelWorker()
    warm = _read(keeps_batch=True, todo=22)  # the rewrite's own new tokens, at the rest
    worker.background = warm
    worker.stop_background(rewrite_reads=64)
    assert warm.settle.is_set() and not warm.cancel.is_set()
    assert worker.background is warm  # still the read a key must stop
    worker.stop_background()  # a key comes while the batch is read
    assert warm.cancel.is_set() and worker.background is None


def test_a_rewrite_stops_the_typing_models_reads_midway() -> None:
    worker = ModelWorker()
    read = _read(keeps_batch=False)  # the typing model's prefill: nothing the rewrite reads
    worker.background = read
    worker.stop_background(rewrite_reads=64)
    assert read.cancel.is_set() and not read.settle.is_set() and worker.background is None


def test_a_warm_up_with_more_left_than_the_rewrite_reads_is_stopped_midway() -> None:
    """Its batch reads the head the rest's cut leaves out: waiting for it only delays."""
    worker = ModelWorker()
    warm = _read(keeps_batch=True, todo=190)
    worker.background = warm
    worker.stop_background(rewrite_reads=64)
    assert warm.cancel.is_set() and not warm.settle.is_set() and worker.background is None


def test_a_key_never_waits_for_a_warm_up_batch() -> None:
    worker = ModelWorker()
    warm = _read(keeps_batch=True, todo=5)
    worker.background = warm
    worker.stop_background()  # the typing model's stream
    assert warm.cancel.is_set() and not warm.settle.is_set()
