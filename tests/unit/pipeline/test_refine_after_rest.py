"""A provider with a stronger refine model rewrites an answer once the user rests.

The embedded model's second model (`local.refine_model`, the coder) is slow on a CPU, so it
must never run while the user types: it starts only after `refine_after_s` with the
document unchanged and no newer request for it, and any request ends the wait. These
tests use a fake one-slot model on the real launcher (no timing is asserted: the rest is
a few ms and the tests wait for the outcome, not for a clock).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor, Mode, ModelRequest, PromptContext, StreamChunk
from lsp_assist.errors import PolicyError
from lsp_assist.pipeline.inflight import InflightStream
from lsp_assist.pipeline.launcher import StreamLauncher, StreamSpec
from lsp_assist.pipeline.postprocess.stream import StreamAssembler
from lsp_assist.pipeline.prompt import Prompt
from lsp_assist.pipeline.request import Target
from tests.unit.pipeline.launcher_harness import one_document, settle

URI = "file:///a.py"
TEXT = "def area(width, height):\n    return "
GUESS = "# the next suggestion, guessed\n"


class RestingModel:
    """A one-slot model whose prompts are never cut, with a refine model: a refinement
    (`request.refine`) writes the better line."""

    name = "local"
    model = "fake-270m"
    endpoint_host = None
    single_slot = True

    def __init__(self, rest: float | None) -> None:
        self.requests: list[ModelRequest] = []
        self.refine_after_s = rest
        self.hold: asyncio.Event | None = None  # set: the typing stream waits for it to end
        self.refine_stalls = False  # the rewrite stalls after its first line (more to come)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        if request.context.prefix.endswith(GUESS):  # a prefetch that holds the model
            await asyncio.sleep(60)
        answer = "width * height" if request.refine else "None"
        for i, piece in enumerate(answer.split(" ")):
            await asyncio.sleep(self.refine_delay if request.refine else 0.001)
            yield StreamChunk(piece if i == 0 else " " + piece)
        if not request.refine and self.hold is not None:
            await self.hold.wait()
        yield StreamChunk("\n")
        if request.refine and self.refine_stalls:
            await asyncio.sleep(60)  # the next lines, at a strong model's CPU speed
            yield StreamChunk("    # more\n")

    refine_delay = 0.001  # seconds per piece of a refinement (a slow refine model)

    async def warm(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _setup(tmp_path: Path, rest: float | None) -> tuple[StreamLauncher, RestingModel, DocumentStore, Target]:
    model = RestingModel(rest)
    launcher, store, _, _ = one_document(tmp_path, model, TEXT)
    snap = store.snapshot(URI)
    assert snap is not None
    return launcher, model, store, Target(snap, len(TEXT), Cursor(1, len("    return ")))


def _spec(target: Target, mode: Mode = "single") -> StreamSpec:
    ctx = PromptContext(language="python", path="/a.py", prefix=TEXT, suffix="\n", mode=mode)
    return StreamSpec(target, Prompt(ctx, "fast", "key"))


def _guess(target: Target) -> StreamSpec:
    """A prefetch of the next suggestion (speculative, not live) that holds the model."""
    ctx = PromptContext(language="python", path="/a.py", prefix=TEXT + GUESS, suffix="", mode="single")
    return StreamSpec(target, Prompt(ctx, "fast", "next"), live=False, speculative=True)


async def _running_refinement(launcher: StreamLauncher) -> InflightStream:
    """The document's rewrite once it runs (bounded wait)."""
    refinement = None
    for _ in range(500):
        refinement = launcher.refining(URI)
        if refinement is not None:
            break
        await asyncio.sleep(0.01)
    assert refinement is not None and not refinement.done
    return refinement


async def _settle(launcher: StreamLauncher) -> None:
    await settle(launcher, URI)


async def test_an_answer_is_rewritten_by_the_refine_model_after_a_rest(tmp_path: Path) -> None:
    launcher, model, _, target = _setup(tmp_path, rest=0.02)
    flight = await launcher.launch(_spec(target))
    assert await flight.quick == "None"
    await _settle(launcher)
    # Nothing was cut, yet the answer was asked again, as a refinement.
    assert [r.refine for r in model.requests] == [False, True]
    hit = launcher.answers.typing_through(target)
    assert hit is not None and hit.text == "width * height"
    await launcher.aclose()


async def test_no_rewrite_without_a_refine_model_when_nothing_was_cut(tmp_path: Path) -> None:
    launcher, model, _, target = _setup(tmp_path, rest=None)
    await (await launcher.launch(_spec(target))).final
    await _settle(launcher)
    assert [r.refine for r in model.requests] == [False]
    await launcher.aclose()


async def test_a_request_during_the_rest_ends_the_wait(tmp_path: Path) -> None:
    # A long rest: only a request can end it within the test.
    launcher, model, _, target = _setup(tmp_path, rest=30.0)
    await (await launcher.launch(_spec(target))).final
    for _ in range(200):  # the first stream's task reaches its rest
        if launcher.refine_waiting(URI):
            break
        await asyncio.sleep(0.005)
    assert launcher.refine_waiting(URI)
    model.refine_after_s = 0.02  # the second answer's own rest is short
    await (await launcher.launch(_spec(target))).final
    await _settle(launcher)
    # The first answer's refinement never ran; the second answer's did, once.
    assert [r.refine for r in model.requests] == [False, False, True]
    await launcher.aclose()


async def test_no_rewrite_when_the_document_changed_during_the_rest(tmp_path: Path) -> None:
    launcher, model, store, target = _setup(tmp_path, rest=0.05)
    await (await launcher.launch(_spec(target))).final
    store.open(URI, "python", 2, TEXT + "x\n", "/a.py")  # the user typed on
    await _settle(launcher)
    assert [r.refine for r in model.requests] == [False]
    await launcher.aclose()


async def test_an_edit_closes_a_running_rewrite(tmp_path: Path) -> None:
    """The refine model takes seconds of both cores: an answer for a version the user has
    edited away is not worth them."""
    launcher, model, store, target = _setup(tmp_path, rest=0.01)
    model.refine_delay = 30.0  # it would run for a minute: only the edit can end it in time
    await (await launcher.launch(_spec(target))).final
    refinement = await _running_refinement(launcher)
    store.open(URI, "python", 2, TEXT + "x\n", "/a.py")
    launcher.note_change(URI)
    await asyncio.wait_for(asyncio.shield(refinement.final), 5)
    assert refinement.aborted
    await launcher.aclose()


async def test_a_prefetch_holding_the_model_at_the_rest_yields_to_the_rewrite(tmp_path: Path) -> None:
    """Issue 36: at the moment of the rest the prefetch of the next suggestion held the
    one-slot model, the rewrite was refused ("the local model is busy") and never tried
    again, so the code model's line never reached the screen."""
    launcher, model, _, target = _setup(tmp_path, rest=0.05)
    answer = await launcher.launch(_spec(target))
    assert await answer.quick == "None"
    await answer.final  # the prefetch starts as the answer's stream ends, as prefetch.py does
    guess = await launcher.launch(_guess(target))
    await _settle(launcher)
    assert [r.refine for r in model.requests] == [False, False, True]
    assert guess.aborted  # the guess gave the slot to the rewrite
    hit = launcher.answers.typing_through(target)
    assert hit is not None and hit.text == "width * height"
    await launcher.aclose()


async def test_a_prefetch_never_takes_the_slot_from_a_running_rewrite(tmp_path: Path) -> None:
    launcher, model, _, target = _setup(tmp_path, rest=0.01)
    model.refine_delay = 0.2
    await (await launcher.launch(_spec(target))).final
    refinement = await _running_refinement(launcher)
    with pytest.raises(PolicyError):
        await launcher.launch(_guess(target))
    await _settle(launcher)
    assert not refinement.aborted
    hit = launcher.answers.typing_through(target)
    assert hit is not None and hit.text == "width * height"
    await launcher.aclose()


async def test_a_rewrites_first_line_is_on_screen_before_its_stream_ends(tmp_path: Path) -> None:
    """The code model writes ~8 tokens/s here: the line the user rests for is shown as soon
    as it is written, not after the lines the rewrite goes on to write."""
    launcher, model, _, target = _setup(tmp_path, rest=0.01)
    launcher.assembler = StreamAssembler  # the server's: the context's mode, multi-line here
    model.refine_stalls = True
    ready: list[tuple[str, int]] = []
    launcher.answers.on_suggestion_ready = lambda uri, version, _cursor: ready.append((uri, version))
    await (await launcher.launch(_spec(target, "multi"))).final  # an answer of several lines
    refinement = await _running_refinement(launcher)
    hit = None
    for _ in range(500):
        hit = launcher.answers.typing_through(target)
        if hit is not None and hit.text == "width * height":
            break
        await asyncio.sleep(0.01)
    assert hit is not None and hit.text == "width * height"
    assert not refinement.done  # still writing its next lines
    assert (URI, target.snap.version) in ready  # the editor was told to ask again
    refinement.abort()
    await launcher.aclose()


async def test_the_rest_counts_from_the_request_not_from_the_streams_end(tmp_path: Path) -> None:
    """A typing stream that ended after the rest was already over starts the rewrite at
    once: the rest (30 s here) began when the request arrived."""
    launcher, model, _, target = _setup(tmp_path, rest=30.0)
    model.hold = asyncio.Event()
    flight = await launcher.launch(_spec(target))
    flight.started -= 60.0  # the request arrived a minute ago: the user has rested since
    model.hold.set()
    assert await flight.quick == "None"
    await flight.final
    await _settle(launcher)
    assert [r.refine for r in model.requests] == [False, True]
    await launcher.aclose()


async def test_asking_again_where_the_user_rests_does_not_restart_the_rest(tmp_path: Path) -> None:
    """The editor asks again at the same place on `suggestionReady`: the rest (30 s here)
    still counts from the first request there, which came 29.5 s ago."""
    launcher, model, _, target = _setup(tmp_path, rest=30.0)
    refinements = launcher.refinements

    def ask(since: float) -> asyncio.Task[InflightStream | None]:
        prompt = _spec(target).prompt
        return asyncio.create_task(refinements.after_instant(target, "None", 30.0, since, lambda: prompt))

    first = ask(time.perf_counter() - 29.5)
    await asyncio.sleep(0.05)  # its wait began
    again = ask(time.perf_counter())
    for _ in range(500):  # bounded (5 s): counted from the ask, the rest would last 30 s
        if model.requests:
            break
        await asyncio.sleep(0.01)
    assert [r.refine for r in model.requests] == [True]
    assert await first is None  # the ask ended the first wait
    assert await again is not None
    await launcher.aclose()


BODY = "def area(width, height):\n    "


def _body(tmp_path: Path, model: RestingModel) -> tuple[StreamLauncher, Target, StreamSpec]:
    """A function's first body line, in multi-line mode."""
    launcher, store, _, _ = one_document(tmp_path, model, BODY)
    launcher.assembler = lambda ctx: StreamAssembler(ctx, "multi")
    snap = store.snapshot(URI)
    assert snap is not None
    target = Target(snap, len(BODY), Cursor(1, 4))
    ctx = PromptContext(language="python", path="/a.py", prefix=BODY, suffix="\n", mode="multi")
    return launcher, target, StreamSpec(target, Prompt(ctx, "fast", "key"))


class WritingOnModel(RestingModel):
    """The typing stream writes its first line, then line after line for ~10 s (a typing
    model's multi-line enrichment); the refine model's rewrite is one line."""

    def __init__(self, rest: float | None, lines: int = 1000) -> None:
        super().__init__(rest)
        self.lines = lines
        self.written = 0  # lines after the first the typing stream wrote

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        if request.refine:
            yield StreamChunk("area = width * height\n")
            return
        yield StreamChunk("w = width\n")
        for n in range(self.lines):
            for piece in (f"    x{n}", f" = {n}", "\n"):
                await asyncio.sleep(0.005)
                yield StreamChunk(piece)
            self.written += 1


async def test_at_the_rest_the_typing_stream_ends_at_a_line_end_for_the_rewrite(tmp_path: Path) -> None:
    """The typing model writing its lines after the first holds the one slot: at the rest
    it stops at its next line end (the lines so far stored whole) and the rewrite runs,
    instead of after ~10 s more of lines the rewrite replaces."""
    model = WritingOnModel(rest=0.02)
    launcher, _, spec = _body(tmp_path, model)
    flight = await launcher.launch(spec)
    assert await flight.quick == "w = width"
    result = await asyncio.wait_for(flight.final, 5.0)
    assert model.written < model.lines  # stopped long before its end
    assert flight.raw.endswith("\n") and not result.aborted  # it stopped at a line end
    assert result.text == flight.raw.rstrip()  # its whole lines are the answer
    refinement = await _running_refinement(launcher) if launcher.refining(URI) else None
    await _settle(launcher)
    assert [r.refine for r in model.requests] == [False, True]
    assert refinement is None or refinement.done
    await launcher.aclose()


async def test_without_a_refine_model_the_typing_stream_writes_all_its_lines(tmp_path: Path) -> None:
    model = WritingOnModel(rest=None, lines=8)
    launcher, _, spec = _body(tmp_path, model)
    flight = await launcher.launch(spec)
    await asyncio.wait_for(flight.final, 5.0)
    assert model.written == model.lines
    await launcher.aclose()
