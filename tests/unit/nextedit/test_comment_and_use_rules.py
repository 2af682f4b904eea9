"""Rules set on the tuning half's errors: a deleted trailing comment is weighed by the
comment (not by the code before it), a generic pragma deleted once waits, and a use
renamed to a fresh name leaves the old name's binding until the change repeats."""

from __future__ import annotations

from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor
from lsp_assist.nextedit import rules
from lsp_assist.nextedit.evidence import is_common_comment
from lsp_assist.nextedit.history import EditHistory
from lsp_assist.nextedit.proposal import Proposal
from lsp_assist.nextedit.tokens import TokenChange
from tests.unit.nextedit.helpers import change, retype, session

URI = "file:///ws/m.py"


def _predict(doc: Document, history: EditHistory) -> list[Proposal]:
    h = history.get(doc.uri)
    assert h is not None and h.last is not None
    end = h.last.end
    line = doc.text.count("\n", 0, end)
    cursor = Cursor(line, end - (doc.text.rfind("\n", 0, end) + 1))
    return rules.predict(doc, h.last, cursor, [], list(h.edits)[:-1])


def _line(doc: Document, p: Proposal) -> str:
    return doc.line(p.start.line).strip()


def _delete(text: str, comment: str) -> tuple[Document, EditHistory]:
    store, history = session(text, URI)
    at = text.index(comment)
    return change(store, URI, at, at + len(comment), ""), history


PRAGMAS = (
    "import os\n\n\n"
    "def load(path):\n"
    "    data = read(path)  # type: ignore[attr-defined]\n"
    "    return data\n\n\n"
    "class Store:\n"
    "    items: dict = {}\n\n"
    "    def keys(self):\n"
    "        return sorted(self.items.keys())  # type: ignore[attr-defined]\n"
)


def test_a_deleted_specific_comment_proposes_the_same_comment_on_an_unlike_line() -> None:
    doc, history = _delete(PRAGMAS, "  # type: ignore[attr-defined]")
    p = _predict(doc, history)[0]
    assert _line(doc, p) == "return sorted(self.items.keys())  # type: ignore[attr-defined]"
    assert p.text == "" and doc.line(p.start.line)[p.start.character :] == "  # type: ignore[attr-defined]"


def test_a_deleted_generic_pragma_waits_for_a_second_deletion() -> None:
    # The specific comment proposes across unlike lines; the generic one is weighed by its
    # line, as code is, and these lines are unlike.
    text = PRAGMAS.replace("read(path)  # type: ignore[attr-defined]", "read(path)[0]  # type: ignore")
    text = text.replace("[attr-defined]", "")
    doc, history = _delete(text, "  # type: ignore")
    assert _predict(doc, history) == []


def test_a_deleted_comment_does_not_propose_a_different_comment() -> None:
    text = PRAGMAS.replace("[attr-defined]\n", "[attr-defined] until 2.0\n", 2).replace(
        "[attr-defined] until 2.0", "[attr-defined]", 1
    )
    doc, history = _delete(text, "  # type: ignore[attr-defined]")
    assert _predict(doc, history) == []


def test_only_a_whole_trailing_comment_deleted_counts_as_one() -> None:
    text = "x = 1  # noqa\ny = 2\n"
    assert rules._deletes_comment(text.replace("  # noqa", ""), TokenChange(5, "  # noqa", ""))
    assert not rules._deletes_comment(text, TokenChange(5, "  # no", ""))  # the line goes on
    assert not rules._deletes_comment(text, TokenChange(0, "x", ""))


def test_generic_comments_are_common() -> None:
    assert is_common_comment("  # type: ignore") and is_common_comment("# noqa")
    assert not is_common_comment("  # type: ignore[attr-defined]")
    assert not is_common_comment("# keep the order: the cache reads it")


IMPORTED = (
    "from .app import Flask\n\n\n"
    "class Provider:\n"
    "    def __init__(self, app: Flask) -> None:\n"
    "        self.app = app\n"
)


def test_a_use_renamed_to_a_fresh_name_does_not_propose_the_import() -> None:
    # The developer points one annotation at another class (imported elsewhere next);
    # `from .app import Flask` still serves whatever else uses it.
    store, history = session(IMPORTED, URI)
    doc = retype(store, URI, "Flask", "App", nth=1)
    assert _predict(doc, history) == []


def test_a_renamed_import_still_proposes_its_uses() -> None:
    store, history = session(IMPORTED, URI)
    doc = retype(store, URI, "Flask", "App")
    p = _predict(doc, history)[0]
    assert _line(doc, p) == "def __init__(self, app: Flask) -> None:" and p.text == "App"
