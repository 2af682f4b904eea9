"""The names a row of code spells, memoised by the row's text.

Every source reads names from rows (the rows around the cursor, the enclosing function's,
a whole file's for its names line), and consecutive keystrokes read the same rows again:
one memo, bounded in bytes, shared by them all.
"""

from __future__ import annotations

import re
from collections import Counter

from lsp_assist.context.crossfile import IDENT, STOPWORDS
from lsp_assist.context.long_lines import LONG_LINE_CHARS
from lsp_assist.memory import ByteLRU, text_names_bytes

IDENTS_BYTES = 6 << 20  # the names of ~9,000 line texts: the rows around a few cursors, and more
# What the names line never carries: words inside string literals (a token or key split
# into words would pass the redaction that the whole literal would not).
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`")


def near_identifiers(text: str) -> Counter[str]:
    """The names of `text` with how often each is spelled (one-letter names and stopwords out)."""
    return Counter(t for t in IDENT.findall(text) if len(t) > 1 and t not in STOPWORDS)


class Lexicon:
    """Names per row text (`line`), and per row without its string literals (`code`)."""

    def __init__(self) -> None:
        # Every edit adds a row's new text, so the memo is bounded in bytes.
        self.memo: ByteLRU[str, frozenset[str]] = ByteLRU(IDENTS_BYTES, text_names_bytes)

    def line(self, text: str) -> frozenset[str]:
        if len(text) > LONG_LINE_CHARS:  # a minified row: its start stands for it
            text = text[:LONG_LINE_CHARS]
        got = self.memo.get(text)
        if got is None:
            got = frozenset(t for t in IDENT.findall(text) if len(t) > 1 and t not in STOPWORDS)
            self.memo.put(text, got)
        return got

    def code(self, text: str) -> frozenset[str]:
        """`line` of a row without its string literals (read once per file read)."""
        return self.line(_QUOTED.sub(" ", text[:LONG_LINE_CHARS]))
