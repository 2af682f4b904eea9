"""An answer given from a prompt the provider cut to its budget is refined from the whole prompt.

The embedded model answers a jump from the lines nearest the cursor only (its jump budget,
providers/prompt_budget.py). The longer suggestion that follows (`suggestionReady`, the cache,
the typing-through memory) must come from the whole prompt, not from the cut one: before this,
it was the cut stream's own continuation (HumanEval exact match 15.0% instead of 25.0%).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor, ModelRequest, PromptContext, StreamChunk
from lsp_assist.pipeline.launcher import StreamLauncher, StreamSpec
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import Target
from tests.unit.pipeline.launcher_harness import one_document, settle

URI = "file:///a.py"
# The name the line needs is defined far above the cursor: a cut prompt does not show it.
TEXT = "def area(width, height):\n" + "    # a comment line\n" * 20 + "    return "
SEEN_WHEN_CUT = 40  # characters of the prompt a cut read keeps (the cursor's lines)


class CuttingModel:
    """A one-slot model that, like the embedded one after a jump, reads only the prompt's end
    unless asked for a refinement, and says so before its first token (`prompt_cut`). It
    writes the parameters it can see, else a guess."""

    name = "local"
    model = "fake-270m"
    endpoint_host = None
    single_slot = True

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        prefix = request.context.prefix
        seen = prefix
        if not request.refine and len(prefix) > SEEN_WHEN_CUT:
            seen = prefix[-SEEN_WHEN_CUT:]
            yield StreamChunk("", meta={"prompt_cut": float(len(prefix) - len(seen))})
        answer = "width * height" if "height" in seen else "None"
        for piece in answer.split(" "):
            await asyncio.sleep(0.001)
            yield StreamChunk(piece if piece == answer.split(" ")[0] else " " + piece)
        yield StreamChunk("\n")

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _setup(tmp_path: Path) -> tuple[StreamLauncher, CuttingModel, DocumentStore, Target, list[Cursor]]:
    model = CuttingModel()
    launcher, store, target, ready = one_document(tmp_path, model, TEXT)
    return launcher, model, store, target, ready


def _spec(target: Target) -> StreamSpec:
    ctx = PromptContext(language="python", path="/a.py", prefix=TEXT, suffix="\n", mode="single")
    return StreamSpec(target, Prompt(ctx, "fast", "key"))


async def _settle(launcher: StreamLauncher) -> None:
    await settle(launcher, URI)


async def test_the_longer_answer_after_a_cut_prompt_comes_from_the_whole_prompt(tmp_path: Path) -> None:
    launcher, model, _, target, ready = _setup(tmp_path)
    flight = await launcher.launch(_spec(target))
    assert await flight.quick == "None"  # the first answer: what the cut prompt showed
    await _settle(launcher)
    assert [r.refine for r in model.requests] == [False, True]
    assert "def area(width, height)" in model.requests[1].context.prefix
    hit = launcher.answers.typing_through(target)
    assert hit is not None and hit.text == "width * height"
    assert launcher.answers.cached("key") == "width * height"
    assert ready == [target.cursor]  # the editor is told to ask again, though not longer
    await launcher.aclose()


async def test_no_refinement_where_the_user_typed_on_or_the_prompt_was_whole(tmp_path: Path) -> None:
    launcher, model, store, target, ready = _setup(tmp_path)
    flight = await launcher.launch(_spec(target))
    await flight.quick
    store.open(URI, "python", 2, TEXT + "x\n", "/a.py")  # a key typed before the stream ended
    await _settle(launcher)
    assert [r.refine for r in model.requests] == [False]
    short = TEXT[-SEEN_WHEN_CUT:]
    whole = StreamSpec(
        target, Prompt(PromptContext("python", "/a.py", short, "\n", mode="single"), "fast", "k2")
    )
    await (await launcher.launch(whole)).final
    await _settle(launcher)
    assert [r.refine for r in model.requests] == [False, False]  # nothing was cut: no second call
    assert ready == []
    await launcher.aclose()


async def test_a_request_closes_a_running_refinement(tmp_path: Path) -> None:
    launcher, _model, _, target, _ = _setup(tmp_path)
    await (await launcher.launch(_spec(target))).final
    refinement = launcher.refining(URI)
    assert refinement is not None and refinement.speculative
    assert launcher.live_stream(URI) is None  # a key typed meanwhile never attaches to it
    foreground = await launcher.launch(_spec(target))
    assert refinement.aborted or refinement.done
    assert not foreground.aborted
    await _settle(launcher)
    await launcher.aclose()
