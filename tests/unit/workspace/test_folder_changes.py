"""Workspace folders that come and go: an added folder is indexed in the background, a
removed folder's index rows leave the context engine at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_assist.config.loader import ConfigLayers
from lsp_assist.server import Runtime


async def test_an_added_folder_is_indexed_and_a_removed_one_leaves(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "billing.py").write_text("def settle_invoice(total):\n    return total\n")
    offline = {"provider": "offline"}
    rt = Runtime(ConfigLayers(init_options={"tiers": {"fast": offline, "quality": offline}}), [ws])
    rt.build()
    try:
        await rt.workspace.refresh()
        assert rt.context.symbols.lookup("distance_between")
        assert not rt.context.symbols.lookup("settle_invoice")
        rt.change_folders([other], [])
        task = rt.workspace._task
        assert task is not None  # built in the background
        await asyncio.wait_for(task, timeout=60)
        assert rt.context.symbols.lookup("settle_invoice")
        rt.change_folders([], [ws])
        # At once, with no build: the removed folder's rows are gone.
        assert not rt.context.symbols.lookup("distance_between")
        assert rt.context.symbols.lookup("settle_invoice")
    finally:
        await rt.aclose()
