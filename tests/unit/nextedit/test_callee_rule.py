"""A rule set on the tuning half's misses and borne out by both held-out halves: inside a
call's arguments, only a name switched there is bound to calls of the same callee; an
expression rewritten there means the same in any call."""

from __future__ import annotations

from tests.unit.nextedit.helpers import line_of, predict, retype, session

URI = "file:///ws/m.py"

CALLS = "def test_hooks(pm):\n    pm.register(dict(), name=1)\n    pm.check(dict(), name=2)\n"


def test_an_expression_rewritten_in_one_call_proposes_another_callees() -> None:
    # `dict()` -> `{}` does not depend on which function receives it.
    store, history = session(CALLS, URI)
    doc = retype(store, URI, "dict()", "{}")
    p = predict(doc, history)[0]
    assert line_of(doc, p) == "pm.check(dict(), name=2)" and p.text == "{}"


def test_a_name_switched_in_one_call_stays_in_calls_of_that_callee() -> None:
    # Which name an argument wants is the callee's business: `mode` -> `flags` passed to
    # `open_a` says nothing about `open_b`.
    text = (
        "def run(mode, flags):\n"
        "    open_a(path, mode, 1)\n"
        "    open_b(path, mode, 1)\n"
        "    open_a(path, mode, 2)\n"
    )
    store, history = session(text, URI)
    doc = retype(store, URI, "mode", "flags", nth=1)
    # The next place after the cursor is `open_b`'s: skipped for the next `open_a` call.
    assert [line_of(doc, p) for p in predict(doc, history)] == ["open_a(path, mode, 2)"]
