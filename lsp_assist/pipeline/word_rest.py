"""The rest of the word being typed, from the document's names, when the model gives nothing.

The embedded model reads only the text before the cursor (Gemma 3 270M has no fill-in-the-
middle tokens), so inside a name that the file defines further down, or imports under a
longer name, it often ends the line at its first token: `from _json import scans` gets
nothing although `scanstring` is used ten lines below. Measured on the typing benchmark
(`benchmarks/local_latency.py`), 13 of 15 empty typing answers were keys inside one such
import line. When exactly one name of the document extends the typed word (and the word
is not a name itself), its rest is the answer; otherwise nothing.
"""

from __future__ import annotations

import re

MIN_WORD = 3  # a shorter word is a prefix of too many names to mean one
MAX_SCAN_CHARS = 400_000  # of the document around the cursor: bounded work per request
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_END = re.compile(r"[A-Za-z0-9_]+$")


def word_rest(text: str, offset: int) -> str:
    """What completes the word ending at `offset` in `text` to the one document name it
    begins, or "" (no word, the cursor inside a word, no such name, or more than one)."""
    if offset < len(text) and (text[offset].isalnum() or text[offset] == "_"):
        return ""  # the cursor is inside a word: its rest is already there
    line_start = text.rfind("\n", 0, offset) + 1
    m = _WORD_END.search(text, line_start, offset)
    if m is None or len(m.group()) < MIN_WORD or m.group()[0].isdigit():
        return ""
    word = m.group()
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    # The document without the line being typed (its own half-typed word is no name yet).
    lo = max(0, offset - MAX_SCAN_CHARS // 2)
    hi = min(len(text), offset + MAX_SCAN_CHARS // 2)
    found: set[str] = set()
    for part in (text[lo:line_start], text[line_end:hi]):
        for name in _IDENT.findall(part):
            if name == word:
                return ""  # the word is already a name: it may well be complete
            if name.startswith(word):
                found.add(name)
    if len(found) != 1:
        return ""
    return found.pop()[len(word) :]
