"""`lsp-assist warmup`'s progress bar: filled by counts, full at the end, silent when off."""

from __future__ import annotations

import io

from lsp_assist.cli.warmup_cmd import BAR_WIDTH, ProgressBar


def _frames(out: io.StringIO) -> list[str]:
    return [f.strip() for f in out.getvalue().split("\r") if f.strip()]


def test_the_bar_fills_with_the_counts_and_is_full_when_done() -> None:
    out = io.StringIO()
    bar = ProgressBar(out, enabled=True)
    bar("indexing the workspace")
    bar("indexed ws: 5/10 files")
    bar("opening connections")
    bar("done")
    frames = _frames(out)
    assert frames[0].startswith("[" + "." * BAR_WIDTH + "]")
    half = BAR_WIDTH // 2
    assert frames[1].startswith("[" + "#" * half + "." * (BAR_WIDTH - half) + "]")
    assert frames[2].startswith("[" + "#" * half + ".")  # a step without counts keeps the fill
    assert frames[3] == "[" + "#" * BAR_WIDTH + "] done"


def test_a_disabled_bar_writes_nothing() -> None:
    out = io.StringIO()
    bar = ProgressBar(out, enabled=False)
    bar("indexed ws: 5/10 files")
    bar.close()
    assert out.getvalue() == ""
