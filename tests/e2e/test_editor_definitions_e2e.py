"""`lspAssist/definitions` over real stdio: what the editor's language server resolved reaches
the prompt the fake model receives; excluded files, secrets and bad params do not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.e2e.conftest import doc_uri, inline, isolated_env, lsp_session, open_doc, openai_tiers, texts
from tests.e2e.test_cli import run
from tests.fakes.fake_model_server import FakeModelServer, Script

APP = "from billing import Invoice\n\n\ndef run(items, rate):\n    inv = Invoice(items)\n    total = inv.\n"
SIGNATURE = "class Invoice:\n    def grand_total_with_vat(self, rate: float) -> float: ..."
SECRET = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"


def _definition(name: str, uri: str, line: int, text: str) -> dict[str, Any]:
    pos = {"line": line, "character": 6}
    return {"name": name, "uri": uri, "range": {"start": pos, "end": pos}, "text": text}


async def test_editor_definitions_reach_the_model_prompt_and_go_with_the_document(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="grand_total_with_vat(rate)\n", ttft_ms=5)
    init = {**openai_tiers(fake.base_url), "governance": {"exclude": ["private/**"]}}
    async with lsp_session(tmp_path, init) as client:
        uri = doc_uri(tmp_path, "app.py")
        open_doc(client, uri, APP, version=2)
        client.protocol.notify("lspAssist/definitions", {"uri": uri, "bad": True})  # ignored, no crash
        client.protocol.notify(
            "lspAssist/definitions",
            {
                "uri": uri,
                "version": 2,
                "definitions": [
                    _definition("Invoice", doc_uri(tmp_path, "billing.py"), 10, SIGNATURE),
                    _definition("rate", doc_uri(tmp_path, "private/keys.py"), 0, "rate = 'PRIVATE-RATE'"),
                    _definition("items", doc_uri(tmp_path, "conf.py"), 0, f"GITHUB_TOKEN = '{SECRET}'"),
                ],
            },
        )
        res = await inline(client, uri, 5, 16)
        assert texts(res) == ["grand_total_with_vat(rate)"]
        prompt = str((fake.model_requests()[-1].body or {}).get("prompt", ""))
        assert "def grand_total_with_vat(self, rate: float) -> float: ..." in prompt
        assert "PRIVATE-RATE" not in prompt and "private/keys.py" not in prompt  # excluded file
        assert "GITHUB_TOKEN" in prompt and SECRET not in prompt  # redacted like any context

        # Closed and reopened: the definitions went with the document.
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        open_doc(client, uri, APP + "\n", version=3)
        await inline(client, uri, 5, 16)
        prompt = str((fake.model_requests()[-1].body or {}).get("prompt", ""))
        assert "grand_total_with_vat" not in prompt


def test_context_command_labels_the_editor_definitions(tmp_path: Path) -> None:
    src = tmp_path / "app.py"
    src.write_text(APP, encoding="utf-8")
    defs = tmp_path / "defs.json"
    defs.write_text(
        json.dumps([_definition("Invoice", (tmp_path / "lib" / "billing.py").as_uri(), 10, SIGNATURE)]),
        encoding="utf-8",
    )
    out = run(["context", f"{src}:6:16", "--definitions", str(defs), "--json"], isolated_env(tmp_path))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    editor = next(s for s in data["snippets"] if s["reason"] == "editor")
    assert editor["text"] == SIGNATURE and editor["path"].endswith("lib/billing.py")
    assert editor["why"] == "from the editor's language server (lspAssist/definitions)"
    labels = {p["label"]: p["reason"] for p in data["parts"]}
    assert "from the editor's language server" in labels["editor:billing.py"]
    text_out = run(["context", f"{src}:6:16", "--definitions", str(defs)], isolated_env(tmp_path)).stdout
    assert "snippet (editor)" in text_out and "from the editor's language server" in text_out
    bad = run(
        ["context", f"{src}:6:16", "--definitions", str(tmp_path / "missing.json")], isolated_env(tmp_path)
    )
    assert bad.returncode == 2 and "--definitions" in bad.stderr
