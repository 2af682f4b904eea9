"""A rewrite lets its model's warm-up end the batch under way where the warm-up reads what
the rewrite would (`ModelWorker.stop_background(rewrite_reads=...)`); a key, or any other
read, still stops a background read midway."""

from __future__ import annotations

import pytest

from lsp_assist.providers.llama_engine import Job
from lsp_assist.providers.local_worker import ModelWorker


def _stop(keeps_batch: bool, todo: int, rewrite_reads: int = -1) -> tuple[ModelWorker, Job]:
    """A worker whose background read (the rewrite model's warm-up where `keeps_batch`,
    `todo` tokens left) a stream reading up to `rewrite_reads` new tokens stops."""
    job = Job(tokens=[], max_tokens=0, temperature=0.0, emit=lambda _t: False, keeps_batch=keeps_batch)
    job.todo = todo
    worker = ModelWorker()
    worker.background = job
    worker.stop_background(rewrite_reads=rewrite_reads)
    return worker, job


def test_a_rewrite_lets_the_warm_up_end_its_batch_and_a_key_still_stops_it() -> None:
    worker, warm = _stop(keeps_batch=True, todo=22, rewrite_reads=64)  # the rewrite's own tokens
    assert warm.settle.is_set() and not warm.cancel.is_set()
    assert worker.background is warm  # still the read a key must stop
    worker.stop_background()  # a key comes while the batch is read
    assert warm.cancel.is_set() and worker.background is None


@pytest.mark.parametrize(
    ("keeps_batch", "todo", "rewrite_reads"),
    [
        (False, 0, 64),  # the typing model's prefill: nothing the rewrite reads
        (True, 190, 64),  # more left than the rest reads: its batch reads head the cut leaves out
        (True, 5, -1),  # a key (the typing model's stream) never waits for a batch
    ],
)
def test_other_reads_are_stopped_midway(keeps_batch: bool, todo: int, rewrite_reads: int) -> None:
    worker, read = _stop(keeps_batch, todo, rewrite_reads)
    assert read.cancel.is_set() and not read.settle.is_set() and worker.background is None
