"""The scope rules of issue 38: a change is proposed where it means the same thing, and
weak evidence waits for a second matching edit."""

from __future__ import annotations

from lsp_assist.nextedit.evidence import is_common, similarity
from lsp_assist.nextedit.site import place_of
from lsp_assist.nextedit.tokens import Syntax
from tests.unit.nextedit.helpers import change, line_of, predict, retype, session

URI = "file:///ws/shapes.py"
SHAPES = """class Circle:
    def __init__(self, radius):
        self.radius = radius

    def area(self, other):
        return self.radius * self.radius + other.radius


class Ring:
    def __init__(self, radius):
        self.radius = radius

    def width(self):
        return self.radius


def scale(total, step):
    count = total // step
    return count + 1


def grow(total):
    count = total * 2
    return count
"""


def test_a_renamed_local_proposes_its_uses_in_its_own_function_only() -> None:
    store, history = session(SHAPES, URI)
    doc = retype(store, URI, "count", "n")  # `count = total // step` in scale()
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "return count + 1"
    doc = retype(store, URI, "count", "n")  # the user takes it
    assert predict(doc, history) == []  # grow()'s `count` is another variable


def test_a_renamed_attribute_proposes_the_same_receiver_in_the_same_class_only() -> None:
    store, history = session(SHAPES, URI)
    doc = retype(store, URI, "radius", "r", nth=1)  # `self.radius = radius` in Circle
    assert "self.r = radius" in doc.text
    doc = retype(store, URI, "radius", "r", nth=2)  # a second matching edit, `self.r * `
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "return self.r * self.radius + other.radius"
    assert doc.line(p.start.line)[p.start.character - 5 : p.start.character] == "self."
    doc = retype(store, URI, "radius", "r", nth=2)
    # Not `other.radius` (another receiver), not Ring's `self.radius` (another class).
    assert predict(doc, history) == []


def test_a_changed_call_argument_proposes_calls_of_the_same_callee_only() -> None:
    text = "fetch(url, 10)\nsend(url, 10)\nfetch(path, 10)\nfetch(base, 10)\n"
    store, history = session(text, URI)
    doc = retype(store, URI, "10", "30")
    doc = retype(store, URI, "10", "30", nth=1)  # now `fetch(path, 30)`: skipping send()
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "fetch(base, 10)"


def test_one_edit_of_a_common_token_in_an_unlike_line_waits() -> None:
    text = 'VERSION = "2.3.0"\nTIMEOUT = 0\nretries = [0, 1]\n'
    store, history = session(text, URI)
    doc = retype(store, URI, "0", "1")
    assert predict(doc, history) == []


def test_the_tree_facts_of_a_place() -> None:
    store, _ = session(SHAPES, URI)
    doc = store.get(URI)
    assert doc is not None
    tree = doc.tree()
    assert tree is not None
    syntax = Syntax(doc.text, tree)
    at = doc.text.index("other.radius") + len("other.")
    member = place_of(syntax, at, at + len("radius"))
    assert (member.role, member.receiver, member.owner) == ("member", "other", None)
    at = doc.text.index("self.radius * ") + len("self.")
    own = place_of(syntax, at, at + len("radius"))
    assert own.receiver == "self" and own.owner is not None
    assert doc.text[own.owner[0] :].startswith("class Circle")
    at = doc.text.index("step):")
    param = place_of(syntax, at, at + len("step"))
    assert param.binding and param.function is not None
    at = doc.text.index("def scale") + len("def ")
    name = place_of(syntax, at, at + len("scale"))
    assert name.binding and name.function is None  # a function's name is outside its body


def test_common_tokens_and_line_similarity() -> None:
    assert is_common("0") and is_common("3.10") and is_common(")") and is_common("x")
    assert not is_common("count") and not is_common('"utf-8"')
    assert similarity("a = f(x)", "a = f(x)") == 1.0
    assert similarity("a = f(x)", "b") == 0.0


def test_a_parameter_renamed_to_a_name_found_only_in_comments_is_still_a_rename() -> None:
    text = "# the source of truth\ndef f(text):\n    n = len(text)\n    return text[:n]\n"
    store, history = session(text, URI)
    doc = retype(store, URI, "text", "source")
    p = predict(doc, history)[0]  # a fresh name in code: every use of `text` wants it
    assert line_of(doc, p) == "n = len(text)"


def test_of_the_confident_places_the_next_after_the_cursor_is_proposed() -> None:
    text = (
        'def f():\n    """Send the body of the request."""\n\n\n'
        'def g():\n    """Send the body of the request."""\n\n\n'
        'def h():\n    """Return the body of the reply."""\n'
    )
    store, history = session(text, URI)
    doc = retype(store, URI, "body", "query", nth=1)  # in g()
    p = predict(doc, history)[0]
    # f()'s line is more like the edited one, but h()'s is next as the user reads on.
    assert line_of(doc, p) == '"""Return the body of the reply."""'


def test_a_name_quoted_or_unquoted_is_the_same_name() -> None:
    text = 'def f(app: "Flask") -> None:\n    pass\n\n\ndef g(app: "Flask") -> None:\n    pass\n'
    store, history = session(text, URI)
    doc = retype(store, URI, '"Flask"', "Flask")  # the string became code
    p = predict(doc, history)[0]
    assert (p.start.line, p.text) == (4, "Flask")


def test_a_use_of_a_parameter_renamed_to_a_fresh_name_proposes_its_next_use() -> None:
    text = "def f(total):\n    n = total // 2\n    return total + n\n\n\ndef g(total):\n    return total\n"
    store, history = session(text, URI)
    doc = retype(store, URI, "total", "amount", nth=1)  # `n = amount // 2`: nothing binds amount
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "return total + n" and p.text == "amount"
    doc = retype(store, URI, "total", "amount", nth=1)
    # Then the parameter itself (it is f's), never g()'s `total`.
    assert line_of(doc, predict(doc, history)[0]) == "def f(total):"


def test_a_use_of_a_class_renamed_to_a_fresh_name_proposes_its_other_uses() -> None:
    text = "class LazyFile:\n    pass\n\n\ndef f() -> LazyFile:\n    pass\n\n\nx = LazyFile()\n"
    store, history = session(text, URI)
    doc = retype(store, URI, "LazyFile", "_LazyFile", nth=1)
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "x = LazyFile()"


def test_a_builtin_name_changed_once_waits() -> None:
    text = (
        "def f(foo):\n    assert isinstance(foo, float)\n\n\n"
        "def g(item):\n    assert isinstance(item, float)\n"
    )
    store, history = session(text, URI)
    doc = retype(store, URI, "float", "expected_type")  # a value, not a name of this file
    assert predict(doc, history) == []


def test_an_exception_name_renamed_proposes_its_uses() -> None:
    text = "def f():\n    try:\n        g()\n    except KeyError as e:\n        raise ValueError() from e\n"
    store, history = session(text, URI)
    at = text.index("as e:") + len("as ")
    doc = change(store, URI, at, at + 1, "err")
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "raise ValueError() from e" and p.text == "err"


def test_a_renamed_attribute_definition_proposes_its_uses_through_the_same_receiver() -> None:
    store, history = session(SHAPES, URI)
    at = SHAPES.index("self.radius =") + len("self.")
    doc = change(store, URI, at, at, "_")  # Circle.__init__ defines `self._radius`
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "return self.radius * self.radius + other.radius"
    assert doc.line(p.start.line)[p.start.character - 5 : p.start.character] == "self."
