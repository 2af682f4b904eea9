"""A generic instruction for chat models (the quality tier by default).

The system message says the job; the user message holds the recent edits as diffs and the
file excerpt with the editable region between markers and the cursor marked. The answer is
the region rewritten, in one fenced block; the markers are stripped if the model repeats
them.
"""

from __future__ import annotations

import re

from lsp_assist.nextedit.formats.window import Rendered, Window

START = "<|editable_region_start|>"
END = "<|editable_region_end|>"
CURSOR = "<|cursor|>"
SYSTEM = (
    "You predict the next edit a programmer will make. You see their recent edits as unified "
    "diffs and the file around their cursor. Rewrite ONLY the text between "
    f"{START} and {END} with the edit they will most likely make next (usually the same "
    "change they just made, applied where it is still missing); if no edit is needed, return "
    "it unchanged. Reply with the rewritten region in one fenced code block, without the "
    "markers and without explanations."
)
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:\n```|\Z)", re.DOTALL)


def render(w: Window) -> Rendered:
    diffs = "\n".join(w.diffs) or "(none)\n"
    region = w.region[: w.cursor] + CURSOR + w.region[w.cursor :]
    files = "".join(f"Recently viewed {path}:\n```\n{text.rstrip()}\n```\n\n" for path, text in w.files)
    prompt = (
        f"{files}Recent edits:\n```diff\n{diffs}```\n\n"
        f"File {w.path} ({w.language}):\n```\n{w.above}{START}\n{region}\n{END}{w.below}\n```\n\n"
        f"Rewrite the region between {START} and {END}."
    )
    return Rendered(prompt, system=SYSTEM)


def parse(answer: str, w: Window) -> str | None:
    m = _FENCE.search(answer)
    # Without a fence (the provider strips one around a chat answer) the text is the region
    # as it is: leading blank lines are part of it.
    body = m.group(1) if m else answer.removesuffix("\n")
    if START in body:
        body = body.split(START, 1)[1].removeprefix("\n")
    if END in body:
        body = body.split(END, 1)[0].removesuffix("\n")
    return body.replace(CURSOR, "")
