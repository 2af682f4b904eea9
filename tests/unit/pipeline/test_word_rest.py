"""The rest of a half-typed name, from the document, when the model proposes nothing."""

from __future__ import annotations

from lsp_assist.pipeline.word_rest import word_rest

DOC = (
    "try:\n    from _json import scans\nexcept ImportError:\n"
    "    c_scanstring = None\nscanstring = c_scanstring\n"
)
AT = DOC.index("scans\n") + len("scans")


def test_the_one_name_the_word_begins_is_completed() -> None:
    assert word_rest(DOC, AT) == "tring"


def test_a_word_that_is_already_a_name_gets_nothing() -> None:
    doc = DOC.replace("scans\n", "scanstring\n") + "x = scanstring_x\n"
    assert word_rest(doc, doc.index("scanstring\n") + len("scanstring")) == ""


def test_two_names_the_word_begins_get_nothing() -> None:
    doc = DOC + "scansion = 1\n"
    assert word_rest(doc, AT) == ""


def test_short_words_and_no_word_get_nothing() -> None:
    doc = "    x = sc\nscanstring = 1\n"
    assert word_rest(doc, doc.index("sc\n") + 2) == ""  # two characters mean many names
    doc = "    x = \nscanstring = 1\n"
    assert word_rest(doc, doc.index("= \n") + 2) == ""


def test_the_cursor_inside_a_word_gets_nothing() -> None:
    doc = "    from _json import scansX\nscanstring = 1\n"
    assert word_rest(doc, doc.index("scansX") + len("scans")) == ""


def test_the_line_being_typed_is_not_a_source_of_names() -> None:
    doc = "    a = scanstring_old + scans\n"
    assert word_rest(doc, len(doc) - 1) == ""
