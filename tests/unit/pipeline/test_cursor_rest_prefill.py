"""`lspAssist/cursorRest` leads to a prefill: with the real embedded model (marked `model`),
the engine's KV cache holds that position's whole prompt afterwards, so the first key typed
there reads only itself. Without a model, the notification is counted and skipped for a
reason (stale version, not open, excluded, no embedded model), and never breaks anything."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

from lsp_assist.config.loader import ConfigLayers
from lsp_assist.context.templates import render_completion
from lsp_assist.domain import Cursor
from lsp_assist.errors import Unavailable
from lsp_assist.pipeline.request import CompletionRequest, Target
from lsp_assist.providers.llama_engine import common_prefix
from lsp_assist.providers.local import LocalProvider
from lsp_assist.providers.models import resolve_model
from lsp_assist.server import Runtime
from tests.fakes.fake_model_server import running
from tests.fakes.runtimes import openai_runtime

SOURCE = Path(json.__file__).with_name("decoder.py")  # real code no one here wrote


def _open(rt: Runtime, root: Path, name: str = "decoder.py") -> tuple[str, list[str]]:
    text = SOURCE.read_text(encoding="utf-8")
    path = root / name
    path.write_text(text, encoding="utf-8")
    rt.store.open(path.as_uri(), "python", 3, text, str(path))
    return path.as_uri(), text.split("\n")


async def test_without_an_embedded_model_the_rest_is_counted_and_skipped(
    isolated: Path, tmp_path: Path
) -> None:
    with running() as fake:
        rt = openai_runtime(fake, tmp_path)
        uri, _ = _open(rt, tmp_path)
        assert rt.note_cursor_rest(uri, 3, Cursor(40, 4)) == "cursor rest: no prefill (no embedded model)"
        assert "stale version" in rt.note_cursor_rest(uri, 2, Cursor(40, 4))
        assert "not open" in rt.note_cursor_rest(uri + ".missing", None, Cursor(0, 0))
        assert rt.prefiller.counts.as_dict() == {
            "received": 3,
            "prefilled": 0,
            "skipped": {"no embedded model": 1, "stale version": 1, "not open": 1},
        }
        assert fake.model_requests() == []  # a rest never calls a remote model
        await rt.aclose()


async def test_a_rest_elsewhere_drops_the_prefetch_of_the_place_left(isolated: Path, tmp_path: Path) -> None:
    """The prefetch that follows a suggestion (for when it is accepted) would take the one
    model slot from the read of the rest position and from the key typed there: a rest
    somewhere else drops it; a rest where the suggestion is shown keeps it."""
    with running() as fake:
        rt = openai_runtime(fake, tmp_path, completion={"prefetch": True, "enrichment": False})
        uri, _ = _open(rt, tmp_path)
        engine, doc = rt.engine, rt.store.get(uri)
        assert engine is not None and doc is not None
        shown_at = Cursor(40, 4)
        target = Target(doc.snapshot(), doc.offset(shown_at), shown_at)
        engine.prefetcher.schedule(CompletionRequest(uri, shown_at), target, "return end")
        assert engine.prefetcher.pending(uri)
        rt.note_cursor_rest(uri, 3, shown_at)  # still where the suggestion is shown
        assert engine.prefetcher.pending(uri)
        rt.note_cursor_rest(uri, 3, Cursor(120, 8))  # the user went elsewhere
        assert not engine.prefetcher.pending(uri)
        await rt.aclose()


@pytest.mark.model
@pytest.mark.timeout(300)
@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="the 'local' extra is not installed"
)
async def test_a_cursor_rest_reads_that_positions_prompt_into_the_kv_cache(
    isolated: Path, tmp_path: Path
) -> None:
    try:
        resolve_model("gemma3-270m", tmp_path / "cache")
    except Unavailable as exc:
        pytest.skip(str(exc))
    opts = {"tiers": {"fast": {"provider": "local"}}, "completion": {"prefetch": False, "enrichment": False}}
    rt = Runtime(ConfigLayers(init_options=opts), [tmp_path])
    rt.build()
    try:
        uri, lines = _open(rt, tmp_path)
        await asyncio.wait_for(rt.wait_for_models(), 180)
        provider = rt.providers["fast"]
        assert isinstance(provider, LocalProvider) and provider.loaded
        engine = provider._engine
        row = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("        "))
        cursor = Cursor(row, 8)
        before = engine.cached_tokens
        assert rt.note_cursor_rest(uri, 3, cursor) == "cursor rest: prefill started"
        for _ in range(1200):  # the cut, then (idle on) the whole prompt; bounded wait
            if not provider.busy:
                break
            await asyncio.sleep(0.05)
        assert not provider.busy
        prompt = rt.engine.prompts.for_open(uri, cursor, "fast")
        assert prompt is not None
        tokens = engine.tokenize(render_completion(prompt.context, provider._template, "").prompt)
        cached = engine.cached_tokens
        # Everything but the last prompt token (whose logits the request itself needs) is read.
        assert common_prefix(cached, tokens) == len(tokens) - 1, (len(cached), len(tokens))
        assert common_prefix(before, tokens) < len(tokens) - 1  # it was not there before
        assert rt.prefiller.counts.as_dict()["prefilled"] == 1
    finally:
        await rt.aclose()
