"""Zed's Zeta format (zed-industries/zeta, a Qwen2.5-Coder-7B fine-tune; v1 prompt).

The prompt: an instruction, the user's edits as diffs, and the excerpt with the editable
region between `<|editable_region_start|>` and `<|editable_region_end|>` and the cursor as
`<|user_cursor_is_here|>`; `<|start_of_file|>` when the excerpt starts the file. The
model answers with the excerpt's region rewritten between the same markers.
"""

from __future__ import annotations

from lsp_assist.nextedit.formats.window import Rendered, Window

START = "<|editable_region_start|>"
END = "<|editable_region_end|>"
CURSOR = "<|user_cursor_is_here|>"
START_OF_FILE = "<|start_of_file|>"
INSTRUCTION = (
    "You are a code completion assistant and your task is to analyze user edits and then rewrite an "
    "excerpt that the user provides, suggesting the appropriate edits within the excerpt, taking into "
    "account the cursor location."
)


def render(w: Window) -> Rendered:
    events = "\n\n".join(f'User edited "{w.path}":\n```diff\n{d}```' for d in w.diffs)
    region = w.region[: w.cursor] + CURSOR + w.region[w.cursor :]
    head = f"{START_OF_FILE}\n" if w.start_of_file else ""
    excerpt = f"```{w.path}\n{head}{w.above}{START}\n{region}\n{END}{w.below}\n```"
    prompt = (
        f"### Instruction:\n{INSTRUCTION}\n\n### User Edits:\n\n{events}\n\n"
        f"### User Excerpt:\n\n{excerpt}\n\n### Response:\n"
    )
    return Rendered(prompt, stop=(END,))


def parse(answer: str, w: Window) -> str | None:
    """The region between the markers (the end marker may be cut off by the stop)."""
    at = answer.find(START)
    if at < 0:
        return None
    body = answer[at + len(START) :]
    body = body.removeprefix("\n")
    end = body.find(END)
    if end >= 0:
        body = body[:end]
    elif "```" in body:
        body = body[: body.rfind("```")]
    return body.removesuffix("\n").replace(CURSOR, "")
