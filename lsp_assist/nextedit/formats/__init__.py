"""Prompt formats for next-edit models: what each model family was trained to read.

Each format module has `render(window) -> Rendered` and `parse(answer, window) -> str |
None` (the editable region as the model rewrote it, None when the answer is unusable).
`FORMATS` maps the `next_edit.format` setting to its module's pair. The window
(`window.py`) is already redacted; formats only lay it out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lsp_assist.nextedit.formats import instruct, sweep, zeta
from lsp_assist.nextedit.formats.window import Rendered, Window


@dataclass(frozen=True)
class Format:
    name: str
    render: Callable[[Window], Rendered]
    parse: Callable[[str, Window], str | None]


FORMATS = {
    "zeta": Format("zeta", zeta.render, zeta.parse),
    "sweep": Format("sweep", sweep.render, sweep.parse),
    "instruct": Format("instruct", instruct.render, instruct.parse),
}

__all__ = ["FORMATS", "Format", "Rendered", "Window"]
