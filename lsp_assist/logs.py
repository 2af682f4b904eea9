"""Logging setup: stderr or a log file, never stdout (stdout carries the LSP stream).

The pygls logger stays at WARNING: at INFO it logs every message body, which would copy
code into the log.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(level: str = "info", log_file: str | None = None) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    new_handler: logging.Handler
    if log_file:
        path = Path(log_file).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        new_handler = logging.FileHandler(path, encoding="utf-8")
    else:
        new_handler = logging.StreamHandler(sys.stderr)
    new_handler.setFormatter(logging.Formatter(_FORMAT))
    root.addHandler(new_handler)
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    for noisy in ("pygls", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
