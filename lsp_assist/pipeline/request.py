"""What one completion request asks for (the pipeline's input), and where its answer goes."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.domain import Cursor, DocumentSnapshot


@dataclass(frozen=True)
class CompletionRequest:
    uri: str
    cursor: Cursor
    invoked: bool = False
    feature: str = "completion"
    tier: str = "fast"


@dataclass(frozen=True)
class Target:
    """The document version, cursor and offset a suggestion is computed for.

    Taken before any await: every answer is checked against `snap.version` before it is
    returned, cached for typing-through against `snap.text`, and announced at `cursor`.
    `epoch` is the policy epoch the input was read under (`governance/epoch.py`): an answer
    worked out from it is returned, remembered or launched only while that epoch is current.
    """

    snap: DocumentSnapshot
    offset: int
    cursor: Cursor
    epoch: int = 0

    @property
    def uri(self) -> str:
        return self.snap.uri
