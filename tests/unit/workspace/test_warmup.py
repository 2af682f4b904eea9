"""The index inside a Runtime: cross-file context, saves, warmup summary and precompute."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from lsp_assist.cli.main import main as cli_main
from lsp_assist.config.loader import ConfigLayers
from lsp_assist.domain import Cursor, Outcome
from lsp_assist.pipeline.request import CompletionRequest
from lsp_assist.server import Runtime
from lsp_assist.workspace.warmup import run_warmup
from tests.fakes.fake_model_server import FakeModelServer


def _runtime(ws: Path, **options: Any) -> Runtime:
    rt = Runtime(ConfigLayers(init_options=options), [ws])
    rt.build()
    return rt


def _openai(fake: FakeModelServer) -> dict[str, Any]:
    tier = {"provider": "openai", "base_url": fake.base_url, "model": "fake-coder"}
    return {"tiers": {"fast": tier, "quality": tier, "backup": {"provider": "offline"}}}


async def test_background_index_feeds_cross_file_context(ws: Path) -> None:
    rt = _runtime(ws)
    try:
        task = rt.workspace.start_background()
        assert task is not None
        await task
        assert rt.context.symbols.lookup("distance_between")
        uri = (ws / "use.py").as_uri()
        text = "from pkg.geometry import distance_between\n\nd = distance_between("
        rt.store.open(uri, "python", 1, text, str(ws / "use.py"))
        doc = rt.store.get(uri)
        assert doc is not None
        ctx = rt.context.build(doc, Cursor(2, len("d = distance_between(")), 4000, deadline_ms=1000)
        assert any("def distance_between(alpha: Vector" in s.text for s in ctx.snippets)
        # Built already: a second start is a no-op.
        assert rt.workspace.start_background() is None
    finally:
        await rt.aclose()


async def test_no_build_starts_after_the_service_closed(ws: Path) -> None:
    """A `shutdown` that comes before the warm-up starts the build: the process must still
    end at `exit` (a build started then was cancelled mid-start and hung the exit)."""
    rt = _runtime(ws)
    try:
        rt.workspace.close()
        assert rt.workspace.start_background() is None
    finally:
        await rt.aclose()


async def test_index_disabled_builds_nothing(ws: Path) -> None:
    rt = _runtime(ws, workspace={"index": False})
    try:
        assert rt.workspace.start_background() is None
        summary = await run_warmup(rt, connections=False)
        assert "disabled" in summary["index"]
        assert not rt.context.symbols.lookup("distance_between")
    finally:
        await rt.aclose()


async def test_save_reindexes_the_file(ws: Path) -> None:
    rt = _runtime(ws)
    try:
        await rt.workspace.refresh()
        (ws / "pkg" / "geometry.py").write_text("def renamed_helper():\n    pass\n")
        rt.workspace.note_saved(str(ws / "pkg" / "geometry.py"))
        assert await rt.workspace.flush_saved() == 1
        assert rt.context.symbols.lookup("renamed_helper")
        assert not rt.context.symbols.lookup("distance_between")
    finally:
        await rt.aclose()


async def test_open_buffer_wins_over_disk_until_closed(ws: Path) -> None:
    rt = _runtime(ws)
    try:
        await rt.workspace.refresh()
        path = ws / "pkg" / "geometry.py"
        uri = path.as_uri()
        rt.store.open(uri, "python", 1, "def buffer_only():\n    pass\n", str(path))
        await rt.workspace.refresh()  # a refresh while open keeps the buffer's symbols
        assert rt.context.symbols.lookup("buffer_only")
        rt.store.close(uri)
        await rt.workspace.flush_saved()
        assert not rt.context.symbols.lookup("buffer_only")
        assert rt.context.symbols.lookup("distance_between")
    finally:
        await rt.aclose()


async def test_warmup_summary_and_progress(ws: Path, fake: FakeModelServer) -> None:
    rt = _runtime(ws, **_openai(fake))
    messages: list[str] = []
    try:
        summary = await run_warmup(rt, messages.append)
        assert summary["files"] == 2 and summary["symbols"] >= 3
        assert summary["connections"] >= 1 and summary["precomputed"] == 0
        assert summary["index_bytes"] > 0
        assert "indexing the workspace" in messages and messages[-1] == "done"
        assert fake.model_requests() == []  # precompute is off by default
    finally:
        await rt.aclose()


async def test_precompute_makes_the_first_request_a_cache_hit(ws: Path, fake: FakeModelServer) -> None:
    fake.push(text="return 42\n")
    rt = _runtime(ws, workspace={"precompute": True, "precompute_limit": 1}, **_openai(fake))
    try:
        summary = await run_warmup(rt)
        assert summary["precomputed"] == 1
        assert len(fake.model_requests()) == 1
        # No git here: the newest file by mtime was chosen.
        target = Path(rt.workspace.recent_paths(1)[0])
        text = await asyncio.to_thread(target.read_text)
        rt.store.open(target.as_uri(), "python", 1, text, str(target))
        doc = rt.store.get(target.as_uri())
        assert doc is not None and rt.engine is not None
        last = doc.line_count - 1
        res = await rt.engine.complete(
            CompletionRequest(uri=doc.uri, cursor=Cursor(last, len(doc.line(last))), invoked=True)
        )
        assert res.outcome == Outcome.CACHE
        assert len(fake.model_requests()) == 1  # served without a model call
    finally:
        await rt.aclose()


async def test_precompute_stops_at_the_warmup_quota(ws: Path, fake: FakeModelServer) -> None:
    rt = _runtime(
        ws,
        workspace={"precompute": True, "precompute_limit": 5},
        governance={"quotas": {"warmup": {"requests_per_day": 0}}},
        **_openai(fake),
    )
    try:
        summary = await run_warmup(rt)
        assert summary["precomputed"] == 0
        assert "quota" in summary.get("precompute_stopped", "")
        assert fake.model_requests() == []
    finally:
        await rt.aclose()


def test_cli_warmup_json(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["warmup", str(ws), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["files"] == 2 and out["symbols"] >= 3 and out["cache_bytes"] > 0
    assert cli_main(["warmup", str(ws), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["reread"] == 0  # the persisted index was reused


def test_cli_warmup_bad_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["warmup", str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err


async def test_a_refresh_keeps_one_index_that_holds_no_closed_file_in_memory(ws: Path) -> None:
    from lsp_assist.workspace.stored_symbols import StoredSymbolIndex

    rt = _runtime(ws)
    try:
        await rt.workspace.refresh()
        first = rt.context.symbols
        assert isinstance(first, StoredSymbolIndex)
        assert first.lookup("distance_between") and first.file_count() == 2
        assert first.summary()["memory_files"] == 0  # every closed file is read from the store
        (ws / "pkg" / "more.py").write_text("def later_added():\n    pass\n")
        summary = await rt.workspace.refresh()
        assert summary["reread"] == 1 and rt.context.symbols is first
        assert first.lookup("later_added")  # the caches were dropped with the store's change
        assert first.file_count() == 3
    finally:
        await rt.aclose()


async def test_the_background_build_reports_progress_then_ends(ws: Path) -> None:
    rt = _runtime(ws)
    seen: list[str | None] = []
    rt.workspace.on_progress = seen.append
    try:
        task = rt.workspace.start_background()
        assert task is not None
        await task
        await asyncio.sleep(0)
        assert any(m is not None and m.startswith("indexed ws: 2/2") for m in seen)
        assert seen[-1] is None
    finally:
        await rt.aclose()


async def test_file_events_refresh_created_changed_and_deleted_files(ws: Path) -> None:
    rt = _runtime(ws)
    try:
        await rt.workspace.refresh()
        (ws / "new.py").write_text("def from_event():\n    pass\n")
        (ws / "main.py").unlink()
        rt.workspace.note_file_events([str(ws / "new.py"), str(ws / "main.py"), "/elsewhere/x.py"])
        assert await rt.workspace.flush_saved() == 2
        assert rt.context.symbols.lookup("from_event")
        assert not rt.context.symbols.has_path(str(ws / "main.py"))
    finally:
        await rt.aclose()
