"""Warmup end to end: `lspAssist.warmCache` over stdio, with progress and cross-file context."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.e2e.conftest import doc_uri, inline, lsp_session, open_doc, openai_tiers
from tests.fakes.fake_model_server import FakeModelServer, Script, prompt_of

LIBRARY = (
    "class Ledger:\n"
    "    pass\n\n\n"
    "def reconcile_accounts(ledger: Ledger, tolerance_cents: int) -> bool:\n"
    "    return True\n"
)
USER = "from finance import reconcile_accounts\n\nok = reconcile_accounts("


async def test_warm_cache_reports_progress_and_feeds_cross_file_context(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "finance.py").write_text(LIBRARY)  # never opened in the editor
    fake.default = Script(text="ledger, 5)\n")
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        summary: Any = await asyncio.wait_for(
            client.workspace_execute_command_async(types.ExecuteCommandParams(command="lspAssist.warmCache")),
            timeout=60,
        )
        assert summary["files"] >= 1 and summary["symbols"] >= 2
        assert summary["connections"] >= 1
        reports = getattr(client, "progress_reports", {})
        assert reports, "no $/progress was reported"
        flat = [r for seq in reports.values() for r in seq]
        assert isinstance(flat[0], types.WorkDoneProgressBegin)
        assert any(isinstance(r, types.WorkDoneProgressReport) for r in flat)
        assert isinstance(flat[-1], types.WorkDoneProgressEnd)

        uri = doc_uri(tmp_path, "main.py")
        open_doc(client, uri, USER)
        await inline(client, uri, 2, len("ok = reconcile_accounts("))
        prompts = [prompt_of(r.body) for r in fake.model_requests()]
        assert any("def reconcile_accounts(ledger: Ledger, tolerance_cents: int)" in p for p in prompts)
