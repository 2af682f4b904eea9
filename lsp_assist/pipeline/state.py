"""`RequestState`: what one inline-completion request has learned so far.

The stages (`pipeline.stages`) read and fill it in order: the gate sets the target, the
prompt stage the prompt, the generate stage the winning stream and its first answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.pipeline.inflight import InflightStream
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import CompletionRequest, Target
from lsp_assist.telemetry.latency import StageClock


class StageOrderError(RuntimeError):
    """A stage read something an earlier stage should have set (a programming error)."""


@dataclass
class RequestState:
    req: CompletionRequest
    clock: StageClock
    ticket: int = 0
    too_big: bool = False  # over completion.max_document_bytes: the offline floor answers
    _target: Target | None = None
    _prompt: Prompt | None = None
    flight: InflightStream | None = None  # the stream whose first answer is returned
    text: str = ""  # that first answer

    @property
    def target(self) -> Target:
        if self._target is None:
            raise StageOrderError("the gate stage has not run")
        return self._target

    @target.setter
    def target(self, value: Target) -> None:
        self._target = value

    @property
    def has_target(self) -> bool:
        return self._target is not None

    @property
    def has_prompt(self) -> bool:
        return self._prompt is not None

    @property
    def prompt(self) -> Prompt:
        if self._prompt is None:
            raise StageOrderError("the prompt stage has not run")
        return self._prompt

    @prompt.setter
    def prompt(self, value: Prompt) -> None:
        self._prompt = value
