"""The file's own names line: the names the file spells on the most code rows that nothing
else in the prompt shows, most used first, out of the far prefix and suffix's share."""

from __future__ import annotations

import pytest

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.crossfile import IDENT
from lsp_assist.context.sources.names import NAMES_HEAD, NAMES_SHARE
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor

HEAD = f"# {NAMES_HEAD}"


def _big_module() -> tuple[str, Cursor]:
    """The cursor in `target`; `far_registry` is used on 40 code rows at the end of the
    file (beyond any window of 2,000 characters), `prose_word` only in comments."""
    early = "".join(f"def early_{i}(a):\n    return a + {i}\n\n" for i in range(120))
    target = "def target(x):\n    y = x + 1\n    \n    return y\n\n"
    late = "".join(
        f"def late_{i}(a):\n    # prose_word prose_word\n    return far_registry.lookup(a, {i})\n\n"
        for i in range(40)
    )
    text = (
        "import os\n\n" + early + target + "".join(f"def mid_{i}(b):\n    return b\n\n" for i in range(120))
    )
    text += late
    row = text.split("\n").index("    y = x + 1") + 1
    return text, Cursor(row, 4)


def _names(prefix: str) -> list[str]:
    first = prefix.split("\n", 1)[0]
    assert first.startswith(HEAD), first
    return first[len(HEAD) :].split(",")


def test_the_most_used_names_the_window_does_not_show_come_first() -> None:
    text, cursor = _big_module()
    ctx = ContextEngine().build_from_text(
        text, "python", "/p/m.py", cursor, 2000, crossfile=False, deadline_ms=10_000
    )
    names = _names(ctx.prefix)
    # 40 code rows each; ties by name. Comments are not code rows: `prose_word` never counts.
    assert names[:2] == ["far_registry", "lookup"]
    assert "prose_word" not in names
    rest = "\n".join([ctx.prefix.split("\n", 1)[1], ctx.suffix])
    shown = set(IDENT.findall(rest))
    assert not shown & set(names)  # a name the prompt already shows is not listed again
    assert ctx.size <= 2000
    labels = {p.label: p.chars for p in ctx.parts}
    assert labels["names"] == len(ctx.prefix.split("\n", 1)[0]) + 1
    assert sum(labels.values()) == ctx.size


def test_a_file_shown_whole_gets_no_names_line() -> None:
    text = "import os\n\ndef target(x):\n    y = os.path.join(x)\n    \n    return y\n"
    cursor = Cursor(4, 4)
    ctx = ContextEngine().build_from_text(
        text, "python", "/p/m.py", cursor, 2000, crossfile=False, deadline_ms=10_000
    )
    assert HEAD not in ctx.prefix
    assert ctx.prefix == "import os\n\ndef target(x):\n    y = os.path.join(x)\n    "


def test_no_names_line_in_the_stable_layout_or_at_small_budgets() -> None:
    text, cursor = _big_module()
    stable = ContextEngine().build_from_text(text, "python", "/p/m.py", cursor, 2000, layout="stable")
    assert HEAD not in stable.prefix
    small = ContextEngine().build_from_text(text, "python", "/p/m.py", cursor, 900, crossfile=False)
    assert HEAD not in small.prefix


def test_an_opened_file_keeps_its_names_share_when_the_function_fills_the_budget() -> None:
    """Read at didOpen, the file's names are known before the window is laid: their share is
    kept out of the local budget up front, not only from what the far rows would have had."""
    body = "".join(
        f"    value_{i} = compute_something_long(argument_{i}, other_argument_{i})\n" for i in range(60)
    )
    far = "".join(f"def user_{i}():\n    return shared_helper(registry_value)\n\n" for i in range(40))
    # Imports naming what the function calls take their whole share too.
    imports = "".join(
        f"from package.module_{i} import compute_something_long as long_{i}\n" for i in range(20)
    )
    text = imports + "\n" + far + "def big(x):\n" + body + "    \n" + body + "    return x\n\n" + far
    row = text.split("\n").index("    return x") - 61
    engine = ContextEngine()
    doc = Document("file:///p/m.py", "python", 1, text, "/p/m.py")
    engine.index_document(doc)  # didOpen: the names are read now
    ctx = engine.build(doc, Cursor(row, 4), 2000, crossfile=False, deadline_ms=10_000)
    assert ctx.size <= 2000
    names = _names(ctx.prefix)
    assert not set(IDENT.findall(ctx.prefix.split("\n", 1)[1] + ctx.suffix)) & set(names)
    assert len(ctx.prefix.split("\n", 1)[0]) + 1 >= int(2000 * NAMES_SHARE) - 20


def test_words_of_string_literals_and_one_row_names_are_never_listed() -> None:
    """A key split into words would pass the redaction the whole literal would not."""
    early = "".join(f"def early_{i}(a):\n    return a + {i}\n\n" for i in range(120))
    target = "def target(x):\n    y = x + 1\n    \n    return y\n\n"
    late = "".join(
        f"def late_{i}(a):\n    return send_request(a, 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', token_{i})\n\n"
        for i in range(40)
    )
    late += 'PEM = """\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n"""\n'
    mid = "".join(f"def mid_{i}(b):\n    return b\n\n" for i in range(120))
    text = "import os\n\n" + early + target + mid + late
    row = text.split("\n").index("    y = x + 1") + 1
    ctx = ContextEngine().build_from_text(
        text, "python", "/p/m.py", Cursor(row, 4), 2000, crossfile=False, deadline_ms=10_000
    )
    names = _names(ctx.prefix)
    assert names[0] == "send_request"
    assert "sk_live_4eC39HqLyjWDarjtT1zdp7dc" not in names
    assert not any(n.startswith(("MIIB", "token_")) for n in names)  # each spelled on one row


def test_the_names_line_takes_the_place_of_the_in_file_outline() -> None:
    """Where the file gets a names line, the first lines of nearby definitions are not sent:
    the line carries such names at ~8 characters each, the outline at a whole line each;
    what it would have taken goes to the file. Without a names line the outline stays."""
    text, cursor = _big_module()

    def parts(budget: int, opened: bool = True) -> dict[str, int]:
        engine = ContextEngine()
        doc = Document("file:///p/m.py", "python", 1, text, "/p/m.py")
        if opened:
            engine.index_document(doc)  # didOpen: the names are read now
        ctx = engine.build(doc, cursor, budget, crossfile=False, deadline_ms=10_000)
        assert ctx.size <= budget
        return {p.label: p.chars for p in ctx.parts}

    for opened in (True, False):  # names read at didOpen or by this request: the same rows
        got = parts(2000, opened)
        assert "outline" not in got
        assert got["names"] > 0
    assert parts(900).get("outline", 0) > 0  # too small a budget for a names line
    # A file none of whose names is spelled on two code rows: no names line, so the outline.
    lone = "".join(f"def lone_{i}():\n    pass\n\n" for i in range(80))
    lone += "def target(x):\n    \n"
    engine = ContextEngine()
    doc = Document("file:///p/l.py", "python", 1, lone, "/p/l.py")
    engine.index_document(doc)
    row = lone.split("\n").index("def target(x):") + 1
    ctx = engine.build(doc, Cursor(row, 4), 2000, crossfile=False, deadline_ms=10_000)
    got = {p.label: p.chars for p in ctx.parts}
    assert "names" not in got and got.get("outline", 0) > 0


def test_a_stale_names_set_is_read_again_a_slice_per_edit_not_by_a_request() -> None:
    """Every `MENTION_STALE_EDITS` edits the file's names are read again: in slices, by the
    didChange hook, while requests keep the previous set (a whole read of a 10,000-line
    file took 12-16 ms inside the request that found the set stale)."""
    from lsp_assist.context.sources.names import MENTION_STALE_EDITS
    from lsp_assist.documents.store import DocumentStore, TextChange

    text, cursor = _big_module()
    text = "".join(f"def pad_{i}(a):\n    return a\n\n" for i in range(512)) + text
    row = cursor.line + 3 * 512
    store = DocumentStore()
    engine = ContextEngine()
    store.on_change.append(engine.index_document)  # as the server wires it
    doc = store.open("file:///p/m.py", "python", 1, text, "/p/m.py")
    first = engine._mentions[id(doc)].names
    assert first is not None and "typed_name" not in first
    version = 1
    col = 4

    def type_text(s: str) -> None:
        nonlocal version, col
        for ch in s:
            version += 1
            store.change(doc.uri, version, [TextChange(Cursor(row, col), Cursor(row, col), ch)])
            col += 1

    type_text("typed_name = 1" + " " * (MENTION_STALE_EDITS - 14) + "x")  # one edit past stale
    engine.build(doc, Cursor(row, col), 2000, crossfile=False, deadline_ms=10_000)
    m = engine._mentions[id(doc)]
    assert m.names is first  # the request did not read the file again
    assert 0 < m.next_row < doc.line_count  # the edit's hook began the read: one slice
    while m.names is first:
        type_text(" ")
        assert version < 200
    assert "typed_name" in m.names
    ctx = engine.build(doc, Cursor(row, col), 2000, crossfile=False, deadline_ms=10_000)
    assert ctx.size <= 2000


def test_the_files_name_families_are_read_with_its_names_not_by_a_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The families of the names a file spells (`outline.family_of`, ~5,000 names in a
    10,000-line file: ~7 ms) are read a slice at a time with the names, so a request that
    ranks other files' outlines by them does none of that work."""
    from lsp_assist.context.sources import names as names_module
    from lsp_assist.documents.store import DocumentStore
    from lsp_assist.structure.outline import families_of

    text, cursor = _big_module()
    text += "".join(f"directory_header_{i} = {i}\n" for i in range(5))
    store = DocumentStore()
    engine = ContextEngine()
    store.on_change.append(engine.index_document)
    other = Document("file:///p/other.py", "python", 1, "def lookup_entry(a):\n    return a\n", "/p/other.py")
    engine.index_document(other)
    doc = store.open("file:///p/m.py", "python", 1, text, "/p/m.py")
    m = engine._mentions[id(doc)]
    assert m.names is not None and m.families == families_of(m.names)
    assert "directory|header" in m.families

    def no_request_work(names: object) -> frozenset[str]:
        raise AssertionError("families computed by the request")

    monkeypatch.setattr(names_module, "families_of", no_request_work)
    ctx = engine.build(doc, cursor, 4000, others=[other], deadline_ms=10_000)
    assert ctx.size > 0


def test_the_names_line_reads_the_kept_rows_names_from_the_versions_table() -> None:
    """After didOpen (the version's row names read: `ContextEngine.warm`) the names line
    looks no kept row up again, and the prompt is the one a build without the table gives."""
    text, cursor = _big_module()
    warmed, cold = ContextEngine(), ContextEngine()
    doc = Document("file:///p/m.py", "python", 1, text, "/p/m.py")
    warmed.index_document(doc)
    warmed.warm(doc)
    looked_up: list[str] = []
    line = warmed.lexicon.line
    warmed.lexicon.line = lambda t: looked_up.append(t) or line(t)  # type: ignore[method-assign]
    got = warmed.build(doc, cursor, 2000, crossfile=False, deadline_ms=10_000)
    assert _names(got.prefix)[:2] == ["far_registry", "lookup"]
    kept = [r for r in got.prefix.split("\n")[1:] if r.strip() and not r.startswith("# ")]
    assert not set(kept) & set(looked_up)  # their names came from the table
    other = Document("file:///p/m.py", "python", 1, text, "/p/m.py")
    cold.index_document(other)
    assert cold.build(other, cursor, 2000, crossfile=False, deadline_ms=10_000) == got
