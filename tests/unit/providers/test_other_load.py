"""The cores other work keeps busy (`local_threads.OtherLoad`): this server's own threads
never count against the threads its reads get."""

from __future__ import annotations

import os
import threading
import time

import pytest

from lsp_assist.providers.local_threads import prompt_threads
from lsp_assist.providers.other_load import (
    MIN_WINDOW_S,
    OtherLoad,
    _read_snapshot,
    _Snapshot,
)


class _Clock:
    """/proc/stat and /proc/self/stat as the test sets them, at the time it sets."""

    def __init__(self) -> None:
        self.snap = _Snapshot(at=100.0, busy=0, own=0)

    def advance(self, seconds: float, busy_cores: float, own_cores: float, hz: int = 100) -> None:
        ticks = seconds * hz
        s = self.snap
        self.snap = _Snapshot(
            s.at + seconds, s.busy + int(busy_cores * ticks), s.own + int(own_cores * ticks)
        )

    def read(self) -> _Snapshot:
        return self.snap


def _load(clock: _Clock) -> OtherLoad:
    load = OtherLoad(read=clock.read)
    load._hz = 100
    return load


def test_the_servers_own_work_is_not_other_work() -> None:
    """Both cores busy, all of it this process (the model reading, the loop answering): no
    core is busy with other work, so a read gets both."""
    clock = _Clock()
    load = _load(clock)
    assert load.cores() == 0.0  # the first call starts the window
    clock.advance(0.5, busy_cores=2.0, own_cores=2.0)
    assert load.cores() == 0.0
    assert prompt_threads(2, cpus=2, busy=load.cores()) == 2


def test_another_process_on_a_core_leaves_one_thread() -> None:
    clock = _Clock()
    load = _load(clock)
    load.cores()
    clock.advance(0.5, busy_cores=2.0, own_cores=1.0)
    assert load.cores() == pytest.approx(1.0)
    assert prompt_threads(2, cpus=2, busy=load.cores()) == 1


def test_a_window_shorter_than_the_minimum_keeps_the_last_figure() -> None:
    clock = _Clock()
    load = _load(clock)
    load.cores()
    clock.advance(1.0, busy_cores=1.0, own_cores=0.0)
    assert load.cores() == pytest.approx(1.0)
    clock.advance(MIN_WINDOW_S / 3, busy_cores=0.0, own_cores=0.0)
    assert load.cores() == pytest.approx(1.0)  # too short a window to say
    clock.advance(MIN_WINDOW_S, busy_cores=0.0, own_cores=0.0)
    assert load.cores() == pytest.approx(0.0)


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="Linux /proc only")
def test_this_process_spinning_on_this_machine_counts_as_its_own() -> None:
    """Real /proc: a thread of this process keeping a core busy is not another's work."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    load = OtherLoad()
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        before = _read_snapshot()
        load.cores()
        time.sleep(0.5)
        others = load.cores()
        after = _read_snapshot()
    finally:
        stop.set()
        spinner.join()
    assert before is not None and after is not None and others is not None
    ticks = (after.at - before.at) * load._hz
    everyone, mine = (after.busy - before.busy) / ticks, (after.own - before.own) / ticks
    assert mine > 0.5  # the spinner ran
    assert others <= everyone - mine + 0.2  # and its core is not counted as another's
