"""What one completion request asks for (the pipeline's input)."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.domain import Cursor


@dataclass(frozen=True)
class CompletionRequest:
    uri: str
    cursor: Cursor
    invoked: bool = False
    feature: str = "completion"
    tier: str = "fast"
