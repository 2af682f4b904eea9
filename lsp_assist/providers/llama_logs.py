"""llama.cpp's own log lines go to Python logging (`lsp_assist.llama_cpp`), at debug level.

llama-cpp-python prints them to stderr through its own table of llama.cpp's log levels, one
off for the llama.cpp it ships: with `verbose=False` its warnings still print (as errors).
Every key that stops a background read of the embedded model (an abort the server asks
for) printed `decode: removing memory module entries for seq_id = 0, pos = [...]` into the
editor's log and the demo, and each load `llama_kv_cache_iswa: using full-size SWA cache`.
Real failures reach the engine as return codes (`llama_decode returned ...`), which it
reports itself; the lines stay readable with `--log-level debug`.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from typing import Any

log = logging.getLogger("lsp_assist.llama_cpp")

_lock = threading.RLock()  # re-entrant: llama_log_set under it may log
_callback: Any = None  # the C callback: kept alive for as long as llama.cpp may call it
_line: list[str] = []  # a line's pieces until its end (llama.cpp logs a line in parts)


def _log(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
    # Called by llama.cpp from any thread (the typing and the rewrite model decode in
    # their own), never raising into C; the lock keeps two threads' pieces apart.
    message = ""
    with _lock:
        try:
            _line.append(text.decode("utf-8", "replace"))
            if _line[-1].endswith("\n"):
                message = "".join(_line).rstrip()
                _line.clear()
        except Exception:  # pragma: no cover - a log line must never fail a decode
            _line.clear()
    if message:
        log.debug("llama.cpp: %s", message)


def llama_class() -> Any:
    """`llama_cpp.Llama`, with llama.cpp's log lines routed here (once per process)."""
    global _callback
    import llama_cpp

    with _lock:
        if _callback is None:
            _callback = llama_cpp.llama_log_callback(_log)
            llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))
    return llama_cpp.Llama
