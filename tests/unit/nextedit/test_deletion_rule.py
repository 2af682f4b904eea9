"""A rule set on the enlarged tuning half and borne out by both held-out halves: a deletion
whose text is left at one place only proposes that place whatever the threshold."""

from __future__ import annotations

from lsp_assist.documents.store import Document
from lsp_assist.nextedit.history import EditHistory
from tests.unit.nextedit.helpers import change, line_of, predict, session

URI = "file:///ws/m.py"

SOURCE = (
    "def fetch(url):\n"
    "    return client.get(url, verify=False)\n\n\n"
    "class Uploader:\n"
    "    def run(self, path, data):\n"
    "        for chunk in data:\n"
    "            self.sent += len(client.get(path, params=chunk, verify=False).content)\n"
)


def _delete(text: str, old: str) -> tuple[Document, EditHistory]:
    store, history = session(text, URI)
    at = text.index(old)
    return change(store, URI, at, at + len(old), ""), history


def test_a_deletion_left_at_one_place_proposes_it_on_an_unlike_line() -> None:
    doc, history = _delete(SOURCE, ", verify=False")
    (p,) = predict(doc, history)
    assert line_of(doc, p).startswith("self.sent += len(client.get(path, params=chunk, verify=False)")
    assert p.text == ""


def test_a_deletion_left_at_two_unlike_places_waits() -> None:
    text = SOURCE + "\n\ndef ping():\n    assert client.get('/', timeout=3, verify=False).ok\n"
    doc, history = _delete(text, ", verify=False")
    assert predict(doc, history) == []
