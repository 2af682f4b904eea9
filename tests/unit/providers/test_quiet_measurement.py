"""A speed measurement is kept only when the machine stayed quiet while it ran: one taken
while a neighbour woke up (Gemma 29 tokens/s on two threads where it writes 45) was kept
for good, and typing stayed on one thread."""

from __future__ import annotations

import threading
import time

from lsp_assist.providers.model_rates import QUIET_CORES, measure


class _Engine:
    """A `LlamaEngine`'s measurement surface: one pass 10 ms on one thread, 5 on two."""

    def __init__(self) -> None:
        self.threads, self.batch_threads = 1, 2

    def tokenize(self, text: str) -> list[int]:
        return list(range(len(text.split())))

    def reset(self) -> None:
        return None

    def set_threads(self, gen: int, most: int) -> None:
        self.threads, self.batch_threads = gen, most

    def decode_timed(self, tokens: list[int]) -> None:
        time.sleep(0.001 if len(tokens) > 1 else 0.010 / self.threads)


class _Others:
    """Other processes' cores at each `cores()` call (the window's start, then its end)."""

    def __init__(self, *figures: float) -> None:
        self.figures = list(figures)

    def cores(self) -> float | None:
        return self.figures.pop(0)


def test_a_quiet_measurement_is_kept() -> None:
    rates = measure(_Engine(), threading.Event(), _Others(0.0, 0.1))  # type: ignore[arg-type]
    assert rates is not None and rates.measured
    assert rates.rest_gen_tps > 1.5 * rates.gen_tps


def test_one_taken_while_other_work_woke_is_dropped() -> None:
    woke = _Others(0.0, QUIET_CORES + 0.5)
    assert measure(_Engine(), threading.Event(), woke) is None  # type: ignore[arg-type]


def test_where_the_load_cannot_be_read_the_measurement_stands() -> None:
    assert measure(_Engine(), threading.Event(), _Others(None, None)) is not None  # type: ignore[arg-type]
