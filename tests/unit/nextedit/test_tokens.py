"""Offsets between code points (the text) and UTF-8 bytes (the tree), and token widening."""

from __future__ import annotations

import random

from lsp_assist.documents.store import Document
from lsp_assist.nextedit import tokens
from lsp_assist.nextedit.history import Edit
from lsp_assist.nextedit.tokens import Syntax, occurrences, token_change


def test_byte_and_char_offsets_round_trip_across_marks() -> None:
    text = "".join(random.Random(7).choice("aé☕😀\n_x") for _ in range(3 * tokens._STEP + 17))
    doc = Document("file:///m.py", "python", 1, text)
    tree = doc.tree()
    assert tree is not None
    syntax = Syntax(text, tree)
    data = text.encode("utf-8", "surrogatepass")
    for offset in [0, 1, tokens._STEP - 1, tokens._STEP, tokens._STEP + 1, len(text) - 1, len(text)]:
        b = syntax.byte(offset)
        assert b == len(text[:offset].encode("utf-8", "surrogatepass"))
        assert syntax.char(b) == offset
    assert syntax.char(len(data)) == len(text)


def test_token_change_widens_and_anchors() -> None:
    text = "x = counter + 1\ny = await fetch()\n"
    grown = Edit(offset=text.index("counter") + 5, old="", new="er", line=0)
    assert token_change(text, grown) == tokens.TokenChange(4, "count", "counter")
    awaited = Edit(offset=text.index("await "), old="", new="await ", line=1)
    assert token_change(text, awaited) == tokens.TokenChange(text.index("await "), "fetch", "await fetch")
    assert token_change("    \n", Edit(offset=0, old="", new="    ", line=0)) is None


def test_occurrences_respect_identifier_boundaries() -> None:
    assert list(occurrences("count counter recount count", "count")) == [0, 22]
    assert list(occurrences("a.b(a.b)", ".b")) == [1, 5]
