"""Parsing `FILE:LINE:COL` (1-based, as compilers print positions) for the CLI."""

from __future__ import annotations

import argparse
from pathlib import Path

from lsp_assist.languages import language_id_for_path


def parse_location(spec: str) -> tuple[Path, int, int]:
    """`path:line:col` -> (path, 0-based line, 0-based code-point column)."""
    try:
        path_s, line_s, col_s = spec.rsplit(":", 2)
        line, col = int(line_s), int(col_s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected FILE:LINE:COL (1-based), got {spec!r}") from None
    if line < 1 or col < 1:
        raise argparse.ArgumentTypeError("LINE and COL are 1-based")
    return Path(path_s), line - 1, col - 1


def language_of(path: Path) -> str:
    return language_id_for_path(str(path)) or "plaintext"
