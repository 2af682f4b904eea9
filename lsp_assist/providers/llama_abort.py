"""Stopping a llama.cpp decode midway, without Python on llama.cpp's threads.

A background read (the rewrite model's warm-up, the rewrite at a rest) decodes batches of
up to 64 tokens, ~0.6 s each on two cores, and a key must not wait for one
(`LlamaEngine.prefill(abortable=True)`). llama.cpp asks its abort callback between every
two nodes of the graph, ~1,300 times a batch for the code model, and all its threads wait
at a barrier meanwhile. A Python callback takes the GIL each time: while the event loop
runs Python (a key's didChange and prompt, the client's messages) each call waits for it,
and the read went at half speed (`CancelFlag` below; figures in docs/model-roles.md).

So the cancel is also a byte in C memory (`CancelFlag.cell`, "0" or "1"), and the callback
is a C function that reads it: the C library's `atoi`, whose signature (a pointer in, an
integer out that is 0 or 1 here) is the callback's. Where it cannot be had, the Python
callback remains.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


class CancelFlag(threading.Event):
    """A `threading.Event` that llama.cpp can read without Python: `cell` holds b"1" once
    it is set. The Event is set before the byte, so a decode the byte stopped finds it
    set (`AbortWatch.aborting`)."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = ctypes.create_string_buffer(b"0", 2)

    def set(self) -> None:
        super().set()
        self.cell[0] = b"1"

    def clear(self) -> None:
        self.cell[0] = b"0"
        super().clear()


def _c_reader(lib: Any) -> Any:
    """The C library's `atoi` as a `ggml_abort_callback`, or None where it is not found."""
    try:
        libc = ctypes.cdll.msvcrt if os.name == "nt" else ctypes.CDLL(None)
        address = ctypes.cast(libc.atoi, ctypes.c_void_p).value
        return lib.ggml_abort_callback(address) if address else None
    except (OSError, AttributeError, TypeError, ValueError) as exc:
        log.debug("no C abort callback (%s): a cancel is checked from Python", exc)
        return None


class AbortWatch:
    """Lets a cancel Event stop a decode midway: while `watching(cancel)`, llama.cpp asks
    between two nodes of its graph whether to stop: in C for a `CancelFlag`, else through
    a Python call under the GIL per node. Only background reads are watched, never a
    request's decodes."""

    def __init__(self, lib: Any, ctx: Any) -> None:
        self._lib, self._ctx = lib, ctx
        self._cancel: threading.Event | None = None
        self._callback: Any = None  # kept alive as long as llama.cpp may call it
        self._c_callback: Any = None
        self._c_tried = False
        self.in_c = 0  # decodes watched in C, and from Python (the tests read them)
        self.in_python = 0

    def aborting(self) -> bool:
        cancel = self._cancel
        return cancel is not None and cancel.is_set()

    def _c(self) -> Any:
        if not self._c_tried:
            self._c_tried = True
            self._c_callback = _c_reader(self._lib)
        return self._c_callback

    @contextlib.contextmanager
    def watching(self, cancel: threading.Event | None) -> Iterator[None]:
        if cancel is None:
            yield
            return
        self._cancel = cancel
        native = self._c() if isinstance(cancel, CancelFlag) else None
        if native is not None and isinstance(cancel, CancelFlag):
            cell = cancel.cell
            self.in_c += 1
            self._lib.llama_set_abort_callback(self._ctx, native, ctypes.cast(cell, ctypes.c_void_p))
        else:
            self.in_python += 1
            if self._callback is None:
                self._callback = self._lib.ggml_abort_callback(lambda _data: self.aborting())
            self._lib.llama_set_abort_callback(self._ctx, self._callback, None)
        try:
            yield
        finally:
            self._cancel = None
            self._lib.llama_set_abort_callback(self._ctx, self._lib.ggml_abort_callback(), None)


__all__ = ["AbortWatch", "CancelFlag"]
