"""Over stdio: the model ends the line at its first token inside a half-typed name that the
document uses further down; the answer is the rest of that name, and typing on into it is
answered from it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import doc_uri, inline, lsp_session, open_doc, openai_tiers, texts
from tests.e2e.test_latency_engine import change
from tests.fakes.fake_model_server import FakeModelServer, Script

SOURCE = (
    "try:\n    from _json import scans\nexcept ImportError:\n"
    "    c_scanstring = None\nscanstring = c_scanstring\n"
)


async def test_an_empty_model_answer_inside_a_known_name_shows_its_rest(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(tokens=["\n"])  # the model proposes to end the line
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False, "enrichment": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "words.py")
        open_doc(client, uri, SOURCE)
        assert texts(await inline(client, uri, 1, 27, invoked=False)) == ["tring"]
        change(client, uri, 2, 1, 27, "tr")
        assert texts(await inline(client, uri, 1, 29, invoked=False)) == ["ing"]


async def test_an_empty_model_answer_after_a_whole_name_stays_empty(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(tokens=["\n"])
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False, "enrichment": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "words.py")
        open_doc(client, uri, SOURCE.replace("import scans\n", "import scanstring\n"))
        assert texts(await inline(client, uri, 1, 32, invoked=False)) == []
