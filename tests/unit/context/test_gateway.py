"""The assembler's gateway: no part reaches a prompt unless the data boundary admits its file,
whichever source offered it."""

from __future__ import annotations

import pytest

from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.gateway import Gateway, part_path
from lsp_assist.context.parts import Part
from lsp_assist.context.sources.other_files import OtherFiles
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, Snippet

TEXT = "import os\n\ndef main(path):\n    value = os.path.join(path, 'x')\n    return value\n"


def _refuse_secret(path: str) -> bool:
    return "secret" not in path


def test_a_source_that_forgets_the_boundary_cannot_place_a_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """A source offering text of a refused file (a bug in that source) is stopped at the
    assembler: the part is dropped, its label never recorded; admitted parts stay."""
    leaked = Snippet(path="/w/secret.py", text="# MARKER_4242", score=1.0, reason="outline")
    fine = Snippet(path="/w/util.py", text="# def helper(): ...", score=1.0, reason="outline")

    def offer(self: OtherFiles, req: object) -> tuple[list[Snippet], None]:
        return [leaked, fine], None

    monkeypatch.setattr(OtherFiles, "offer", offer)
    engine = ContextEngine()
    engine.set_boundary(_refuse_secret)
    other = Document("file:///w/util.py", "python", 1, "def helper():\n    pass\n", "/w/util.py")
    doc = Document("file:///w/main.py", "python", 1, TEXT, "/w/main.py")
    ctx = engine.build(doc, Cursor(4, 4), 4000, others=[other], deadline_ms=10_000)
    assert [s.path for s in ctx.snippets] == ["/w/util.py"]
    assert "MARKER_4242" not in ctx.prefix + ctx.suffix
    assert all("secret" not in p.reason for p in ctx.parts)


def test_a_refused_document_gives_an_empty_context() -> None:
    engine = ContextEngine()
    engine.set_boundary(_refuse_secret)
    doc = Document("file:///w/secret.py", "python", 1, TEXT, "/w/secret.py")
    ctx = engine.build(doc, Cursor(4, 4), 4000)
    assert (ctx.prefix, ctx.suffix, ctx.snippets, ctx.parts) == ("", "", (), ())


def test_a_package_line_is_judged_by_its_directory() -> None:
    assert part_path("/w/pkg/") == "/w/pkg"
    gate = Gateway(lambda p: p != "/w/secret")
    parts = [Part("package:names", "", "/w/secret/"), Part("package:names", "", "/w/pkg/")]
    assert [p.path for p in gate.parts(parts)] == ["/w/pkg/"]
