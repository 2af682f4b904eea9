"""The stages of one inline-completion request, in the order they run.

    gate -> typing_through -> debounce -> typed_meanwhile -> prompt -> cached -> attach -> generate
    -> answer

| stage | module | answers when |
|---|---|---|
| gate | `gate` | the document is not open or is excluded (no model ever sees it) |
| instant answers | `instant` | typing-through (before the debounce, and again after it); exact |
|  |  | cache, a live stream to attach to (after the prompt) |
| debounce | `debounce` | superseded by a newer keystroke, or the text changed meanwhile |
| prompt | `prompt` | nothing to complete (language disabled, no context) |
| generate | `generate` | the tier chain fell to the floor (cache or offline rules) |
| answer | `answer` | always: the first answer of the winning stream, version-checked |

Each stage is `async (RequestState, Services) -> Suggestion | None`: a suggestion ends the
request, None passes it on. `CompletionEngine.complete` runs them under the deadline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from lsp_assist.domain import Suggestion
from lsp_assist.pipeline.stages.answer import answer
from lsp_assist.pipeline.stages.debounce import debounce
from lsp_assist.pipeline.stages.gate import gate
from lsp_assist.pipeline.stages.generate import generate
from lsp_assist.pipeline.stages.instant import attach, cached, typed_meanwhile, typing_through
from lsp_assist.pipeline.stages.prompt import prompt
from lsp_assist.pipeline.stages.services import Services
from lsp_assist.pipeline.state import RequestState

Stage = Callable[[RequestState, Services], Awaitable["Suggestion | None"]]

STAGES: tuple[Stage, ...] = (
    gate,
    typing_through,
    debounce,
    typed_meanwhile,
    prompt,
    cached,
    attach,
    generate,
    answer,
)

__all__ = ["STAGES", "Services", "Stage"]
