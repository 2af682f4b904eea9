"""`StreamAssembler`: read streamed model output and say as early as possible when to stop.

The pipeline feeds each delta; `feed` returns True once reading more cannot change the
suggestion (end of line in single-line mode, end of the block, an unbalanced closer, a
stop sequence, a repeated line or one that duplicates the code after the cursor), so the
stream can be closed and its tokens saved. `first_line` gives the first complete line as
soon as it exists for a quick answer; `text` gives the final cleaned suggestion.
"""

from __future__ import annotations

from lsp_assist.domain import Mode, PromptContext
from lsp_assist.pipeline.postprocess.clean import Cleaned, process

#: A runaway stream is cut here whatever it says.
MAX_RAW_CHARS = 16_000


class StreamAssembler:
    """Accumulates deltas of one completion and decides when to stop reading."""

    def __init__(self, ctx: PromptContext, mode: Mode | None = None) -> None:
        self.ctx = ctx
        self.mode: Mode = mode or ctx.mode
        self._raw = ""
        self._done = False
        self._checked_lines = 0
        self._stops = tuple(s for s in ctx.stop if s and s != "\n")
        # The last text cleaned and its result: on the token that ends the first line,
        # `feed` (the line just completed) and `first_line` clean the same text.
        self._cleaned: tuple[str, Cleaned] | None = None

    def _process(self, raw: str) -> Cleaned:
        last = self._cleaned
        if last is not None and last[0] == raw:
            return last[1]
        got = process(self.ctx, raw, self.mode)
        self._cleaned = (raw, got)
        return got

    @property
    def raw(self) -> str:
        return self._raw

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, delta: str) -> bool:
        """Add a delta; True means stop reading now (the result is final)."""
        if self._done:
            return True
        if not delta:
            return False
        self._raw += delta
        raw = self._raw
        if len(raw) >= MAX_RAW_CHARS:
            self._done = True
            return True
        window = raw[-(len(delta) + 32) :]
        if any(s in window for s in self._stops):
            self._done = True
            return True
        if any(ch in ")]}" for ch in delta):
            # A closer may be one the editor already has: stop as soon as the line is final.
            got = self._process(raw)
            if got.stopped and got.why == "unbalanced closer":
                self._done = True
                return True
        if self.mode == "single":
            body = raw.lstrip("\n") if not self.ctx.line_prefix.strip() else raw
            if body.lstrip("\n").startswith("```"):  # a fenced answer: the code starts after it
                body = body.lstrip("\n")
                body = body[body.find("\n") + 1 :] if "\n" in body else ""
            if "\n" in body:
                self._done = True
            return self._done
        # Multi-line: check each newly completed line (the last one may still grow).
        complete = raw.count("\n")
        if complete > self._checked_lines:
            self._checked_lines = complete
            head = raw[: raw.rfind("\n")]
            if self._process(head).stopped:
                self._done = True
        return self._done

    def first_line(self) -> str | None:
        """The first complete line of the suggestion (cleaned), or None while it is not there."""
        raw = self._raw
        lead = len(raw) - len(raw.lstrip("\n"))
        end = raw.find("\n", lead)
        if end < 0:
            if not self._done:
                return None
            end = len(raw)
        got = self._process(raw[:end]).text
        if not got:
            return None
        first = got.split("\n")
        # Keep a leading newline (a block body after `:`/`{`) together with its first line.
        return "\n".join(first[: lead + 1]) if lead else first[0]

    def finish(self) -> str:
        """Mark the stream ended and return the final text."""
        self._done = True
        return self.text()

    def text(self) -> str:
        """The final cleaned suggestion ("" when there is nothing useful)."""
        return self._process(self._raw).text
