"""The rule predictor: the same replacement at the next occurrence of the old form, and
argument changes at call sites after a parameter list changed."""

from __future__ import annotations

from lsp_assist.documents.store import Document
from lsp_assist.nextedit.proposal import Proposal
from tests.unit.nextedit.helpers import change, predict, retype, session

URI = "file:///ws/shop.py"
SHOP = '''RATE_NAME = "rate"


class Basket:
    rate = 0.1

    def total(self, prices, rate):
        """Sum prices; rate is the tax rate."""
        subtotal = sum(prices)
        # the rate applies once
        tax = subtotal * rate
        self.rate = rate
        return subtotal + tax


def discount(prices, rate):
    return sum(prices) * rate


def price(amount, rate):
    return amount * (1 + rate)


print(price(10, 0.2))
print(price(amount=3, rate=0.1))
value = price(5, 0.3)
'''


def _at(doc: Document, p: Proposal) -> str:
    return doc.text[doc.offset(p.start) : doc.offset(p.end)]


def test_renamed_parameter_proposes_its_next_use_in_the_function_only() -> None:
    store, history = session(SHOP, URI)
    doc = retype(store, URI, "rate", "tax_rate", nth=2)  # the parameter of total()
    assert "def total(self, prices, tax_rate):" in doc.text
    found = predict(doc, history)
    assert len(found) == 1
    p = found[0]
    assert p.text == "tax_rate" and _at(doc, p) == "rate" and p.rule == "replace"
    # Not the docstring's word, not the comment's: the use in `subtotal * rate`.
    assert doc.line(p.start.line).strip() == "tax = subtotal * rate"
    # Accepting it and asking again walks to `self.rate = rate`'s right side, never
    # `self.rate`, and never leaves the function.
    doc = change(store, URI, doc.offset(p.start), doc.offset(p.end), p.text)
    p = predict(doc, history)[0]
    assert doc.line(p.start.line).strip() == "self.rate = rate" and p.start.character == 20
    doc = change(store, URI, doc.offset(p.start), doc.offset(p.end), p.text)
    assert predict(doc, history) == []


def test_appending_to_a_name_is_a_rename_of_the_whole_name() -> None:
    store, history = session(SHOP, URI)
    doc = store.get(URI)
    assert doc is not None
    at = doc.text.index("subtotal = ") + len("subtotal")
    doc = change(store, URI, at, at, "_")
    doc = change(store, URI, at + 1, at + 1, "x")
    p = predict(doc, history)[0]
    assert p.text == "subtotal_x" and _at(doc, p) == "subtotal"
    assert doc.line(p.start.line).strip() == "tax = subtotal * rate"


def test_edit_inside_a_string_proposes_only_strings() -> None:
    text = 'A = "warn the user"\nwarn = 1\nB = "warn the user"\n'
    store, history = session(text, URI)
    doc = retype(store, URI, "warn", "tell")
    p = predict(doc, history)[0]
    assert doc.line(p.start.line) == 'B = "warn the user"'


def test_added_parameter_proposes_the_argument_at_the_next_call_site() -> None:
    store, history = session(SHOP, URI)
    doc = store.get(URI)
    assert doc is not None
    at = doc.text.index("def price(amount, rate") + len("def price(amount, rate")
    for i, ch in enumerate(", currency"):
        doc = change(store, URI, at + i, at + i, ch)
    found = predict(doc, history)
    assert [(p.text, p.rule) for p in found] == [(", currency", "call-site")]
    p = found[0]
    assert p.start == p.end and doc.line(p.start.line) == "print(price(10, 0.2))"
    assert doc.line(p.start.line)[: p.start.character] == "print(price(10, 0.2"


def test_removed_parameter_deletes_its_argument_in_other_open_documents() -> None:
    store, history = session(SHOP, URI)
    store.open("file:///ws/use.py", "python", 1, "from shop import discount\n\nx = discount([1, 2], 0.5)\n")
    doc = store.get(URI)
    assert doc is not None
    at = doc.text.index("def discount(prices, rate)") + len("def discount(prices")
    doc = change(store, URI, at, at + len(", rate"), "")
    other = store.get("file:///ws/use.py")
    assert other is not None
    found = predict(doc, history, [other])
    assert len(found) == 1 and found[0].uri == "file:///ws/use.py"
    p = found[0]
    assert p.text == "" and _at(other, p) == ", 0.5"


def test_default_parameter_needs_no_call_site_change() -> None:
    store, history = session(SHOP, URI)
    doc = store.get(URI)
    assert doc is not None
    at = doc.text.index("def price(amount, rate") + len("def price(amount, rate")
    doc = change(store, URI, at, at, ", currency=None")
    assert all(p.rule != "call-site" for p in predict(doc, history))


def test_without_a_grammar_the_text_evidence_still_applies() -> None:
    text = "alpha beta\nalphabet alpha\ngamma alpha\n"
    store, history = session(text, "file:///ws/notes.txt", "plaintext")
    doc = retype(store, "file:///ws/notes.txt", "alpha", "omega")
    assert predict(doc, history) == []  # one edit of a word in prose: weak evidence
    doc = retype(store, "file:///ws/notes.txt", "alpha", "omega", nth=1)  # skips `alphabet`
    p = predict(doc, history)[0]
    assert (p.start.line, p.start.character, p.text) == (2, 6, "omega")


def test_javascript_rename_stays_out_of_member_names() -> None:
    text = "function f(size) {\n  const o = {};\n  o.size = size;\n  return size * 2;\n}\n"
    store, history = session(text, "file:///ws/a.js", "javascript")
    doc = retype(store, "file:///ws/a.js", "size", "len")
    found = predict(doc, history)
    p = found[0]
    assert doc.line(p.start.line) == "  o.size = size;" and p.start.character == 11


def test_a_token_change_that_changes_the_node_kind_is_repeated_after_a_second_edit() -> None:
    text = "a = dict()\nb = [dict(), 1]\nc = (dict(), 2)\n"
    store, history = session(text, URI)
    doc = retype(store, URI, "dict()", "{}")
    assert predict(doc, history) == []  # one edit, unlike contexts: it waits
    doc = retype(store, URI, "dict()", "{}")  # the user makes the second one
    p = predict(doc, history)[0]
    assert (p.start.line, p.start.character, p.text) == (2, 5, "{}")


def test_a_whole_string_value_changed_once_waits_for_the_second_edit() -> None:
    # A whole string is a value (a key, a name, a path): an equal value elsewhere, even
    # on a like line, is other data until the user shows that the change repeats.
    text = "".join(f'def {name}(encoding="ascii"):\n    pass\n\n\n' for name in "fgh")
    store, history = session(text, URI)
    doc = retype(store, URI, '"ascii"', '"utf-8"')
    assert predict(doc, history) == []
    doc = retype(store, URI, '"ascii"', '"utf-8"')
    p = predict(doc, history)[0]
    assert (p.start.line, p.text) == (8, '"utf-8"')


def test_offsets_hold_in_text_with_multibyte_characters() -> None:
    text = "# café ☕ 😀 naïve\n" * 300 + "def f(count):\n    s = 'é😀'\n    return count + len(s)\n"
    store, history = session(text, URI)
    doc = retype(store, URI, "count", "n")
    p = predict(doc, history)[0]
    assert _at(doc, p) == "count" and doc.line(p.start.line) == "    return count + len(s)"
