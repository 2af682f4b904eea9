"""Clean raw model output into the text to insert at the cursor.

`process` runs three ordered lists of small pure filters:
1. `text_filters.BEFORE_LINES`: CR/LF normalized, markdown fences out, cut at the stop
   sequences, the first line only in single-line mode;
2. `line_rules.LINE_RULES` on each line until one ends the suggestion: end of the block,
   a duplicate of the code after the cursor, a repeated line, a re-typed line above, an
   unbalanced closer;
3. `text_filters.AFTER_LINES`: trailing whitespace, the rest of the line the editor already
   shows, a doubled space, and blank output become nothing.
It also says whether a stop condition fired, which the streaming assembler uses to stop
reading early.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.domain import Mode, PromptContext
from lsp_assist.pipeline.postprocess.line_rules import LINE_RULES, Scene
from lsp_assist.pipeline.postprocess.text_filters import AFTER_LINES, BEFORE_LINES, Draft


@dataclass(frozen=True)
class Cleaned:
    text: str
    stopped: bool  # a stop condition fired: reading more output cannot change the result
    why: str = ""


def _lines(ctx: PromptContext, mode: Mode, d: Draft) -> Draft:
    scene = Scene.of(ctx, mode)
    out: list[str] = []
    for i, line in enumerate(d.text.split("\n")):
        cut = next((c for rule in LINE_RULES if (c := rule(scene, i, line)) is not None), None)
        if cut is not None:
            if cut.discard_all:
                return Draft("", True, cut.why)
            if cut.keep is not None:
                out.append(cut.keep)
            return Draft("\n".join(out), True, cut.why)
        out.append(line.rstrip())
        stripped = line.strip()
        if stripped:
            scene.seen.append(stripped)
    return Draft("\n".join(out), d.stopped, d.why)


def process(ctx: PromptContext, raw: str, mode: Mode | None = None) -> Cleaned:
    """The cleaned suggestion for `raw` and whether a stop condition fired."""
    mode = mode or ctx.mode
    draft = Draft(raw)
    for before in BEFORE_LINES:
        draft = before(ctx, mode, draft)
    draft = _lines(ctx, mode, draft)
    for after in AFTER_LINES:
        draft = after(ctx, mode, draft)
    return Cleaned(draft.text, draft.stopped, draft.why)


def clean(ctx: PromptContext, raw: str) -> str:
    """The text to insert at the cursor for raw model output ("" when nothing useful)."""
    return process(ctx, raw).text
