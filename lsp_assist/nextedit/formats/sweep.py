"""Sweep's next-edit format (sweepai/sweep-next-edit 0.5B / 1.5B, a Qwen2.5-Coder base).

File-separator sections: the recently viewed files, each recent edit as an
`original:`/`updated:` pair, then the window (Sweep's is 21 lines: `region_lines` 10) as it
was before the last edit (`original/`), as it is (`current/`), and an open `updated/`
section the model completes with the window as it will be.
"""

from __future__ import annotations

from lsp_assist.nextedit.formats.window import Rendered, Window

SEP = "<|file_sep|>"


def _pair(diff: str) -> str:
    old = [x[1:] for x in diff.split("\n") if x.startswith("-") and not x.startswith("---")]
    new = [x[1:] for x in diff.split("\n") if x.startswith("+") and not x.startswith("+++")]
    return "original:\n" + "\n".join(old) + "\nupdated:\n" + "\n".join(new) + "\n"


def render(w: Window) -> Rendered:
    files = "".join(f"{SEP}{path}\n{text.rstrip()}\n" for path, text in w.files)
    edits = "".join(f"{SEP}{w.path}.diff\n{_pair(d)}" for d in w.diffs)
    prompt = (
        f"{files}{edits}{SEP}original/{w.path}\n{w.original_region}\n"
        f"{SEP}current/{w.path}\n{w.region}\n{SEP}updated/{w.path}\n"
    )
    return Rendered(prompt, stop=(SEP, "<|endoftext|>"))


def parse(answer: str, w: Window) -> str | None:
    body = answer.split(SEP, 1)[0].split("<|endoftext|>", 1)[0]
    if not body.strip() and w.region.strip():
        return None  # an empty answer is a cut-off stream, not "delete the window"
    return body.removesuffix("\n")
