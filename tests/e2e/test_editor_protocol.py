"""What the editors' status item, messages and ghost text get from the server, over real stdio.

The real `lsp-assist serve` against the loopback fake model server: the status item's tier
and last latency (throttled), and the messages a user sees when the model is unreachable.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import doc_uri, inline, lsp_session, open_doc, openai_tiers, texts
from tests.fakes.fake_model_server import FakeModelServer, Script

SOURCE = "def add(a, b):\n    \n"


def track(client: LanguageClient, method: str) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    @client.feature(method)  # type: ignore[untyped-decorator]
    def _note(ls: LanguageClient, params: Any) -> None:
        seen.append(params if isinstance(params, dict) else params._asdict())

    return seen


async def wait_until(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return bool(predicate())


async def test_status_carries_the_last_latency_and_tier_and_is_throttled(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=40)
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        statuses = track(client, "lspAssist/status")
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        assert texts(await inline(client, uri, 1, 4, invoked=False)) == ["return a + b"]
        answered = time.monotonic()
        # Baseline for the editors' first-token-to-ghost figures: first token -> the answer
        # in a bare LSP client (no rendering).
        first_token = fake.stream_times[-1][1][0]
        print(
            json.dumps(
                {
                    "editor": "bare LSP client",
                    "first_token_to_answer_ms": round((answered - first_token) * 1000, 1),
                }
            )
        )
        assert await wait_until(lambda: any(s.get("outcome") == "model" for s in statuses))
        last = [s for s in statuses if s.get("outcome") == "model"][-1]
        assert last["tier"] == "fast" and last["provider"] == "openai"
        assert last["lastLatencyMs"] >= 40  # the fake waits 40 ms before its first token
        # A burst of answered requests (typing-through / cache, instant): coalesced into
        # fewer updates than answers. How many go out per window is checked on a fake clock
        # (tests/unit/protocol/test_status.py), not against this machine's speed.
        before = len(statuses)
        burst = 30
        for _ in range(burst):
            await inline(client, uri, 1, 4, invoked=False)
        await asyncio.sleep(0.4)  # past the throttle's window: its pending update has gone out
        during = len(statuses) - before
        assert 1 <= during < burst, during
        assert statuses[-1]["outcome"] in ("cache", "typing_through", "model")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed again: connecting is refused


async def test_unreachable_endpoint_is_named_at_the_first_failure_once(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    async with lsp_session(tmp_path, openai_tiers(url)) as client:
        statuses = track(client, "lspAssist/status")
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        wanted = f"cannot connect to {url}"
        await inline(client, uri, 1, 4)  # answered by the fallback
        # The request's first connection attempt fails at once on loopback, and the failure
        # names the endpoint before the fallback answers: the message is on the wire ahead
        # of that request's answer.
        shown = [m for m in client.messages if wanted in m.message]
        assert len(shown) == 1, client.messages
        assert any(s.get("state") == "warning" and wanted in str(s.get("message")) for s in statuses)
        # More failures: no more messages (rate-limited), the status item keeps the warning.
        for _ in range(5):
            await inline(client, uri, 1, 4)
        await asyncio.sleep(0.3)
        assert [m for m in client.messages if wanted in m.message] == shown
        assert statuses[-1]["state"] == "warning"


async def test_typing_through_answer_covers_what_was_typed_with_range_and_filter_text(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False}  # its call would race the count below
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        assert texts(await inline(client, uri, 1, 4, invoked=False)) == ["return a + b"]
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=types.Position(1, 4), end=types.Position(1, 4)), text="ret"
                    )
                ],
            )
        )
        res = await inline(client, uri, 1, 7, invoked=False)
        items = res.items if isinstance(res, types.InlineCompletionList) else res
        assert items is not None and len(items) == 1
        item = items[0]
        # LSP 3.18: the item replaces what was typed since the suggestion was computed.
        assert item.insert_text == "return a + b"
        assert item.filter_text == "return a + b"
        assert item.range == types.Range(start=types.Position(1, 4), end=types.Position(1, 7))
        assert len(fake.model_requests()) == 1  # answered from typing-through, no new call


async def invoked_choices(client: LanguageClient, uri: str, line: int, character: int) -> list[str]:
    """An Invoked request answered at once, then its choices: announced by suggestionReady
    (with `choices`) once gathered, and answered to the Invoked request cycling makes."""
    ready = track(client, "lspAssist/suggestionReady")
    first = texts(await inline(client, uri, line, character, invoked=True))
    assert first, "the Invoked request got no answer"
    if not await wait_until(lambda: any(r.get("choices") for r in ready), timeout=5.0):
        return first  # nothing more to choose from
    choices = texts(await inline(client, uri, line, character, invoked=True))
    assert choices[0].startswith(first[0])  # the answer shown stays item 1 (or grew)
    return choices


async def test_invoked_returns_distinct_choices_and_automatic_one(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    # A multi-line answer: the quick first line and the fuller suggestion are two choices.
    fake.default = Script(text="total = a + b\n    if total < 0:\n        return 0\n    return total\n")
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "invoked.py")
        open_doc(client, uri, SOURCE)
        choices = await invoked_choices(client, uri, 1, 4)
        assert len(choices) >= 2
        assert len({c.rstrip() for c in choices}) == len(choices)  # distinct
        # The first line and the fuller answer are both choices (the ghost shows the longer:
        # the stream grew it while the choices were gathered).
        assert "total = a + b" in choices
        assert any(c.startswith("total = a + b\n    if total < 0:") for c in choices)
        other = doc_uri(tmp_path, "automatic.py")
        open_doc(client, other, SOURCE)
        res = await inline(client, other, 1, 4, invoked=False)
        assert len(texts(res)) == 1


async def test_invoked_choices_include_a_second_sample_at_a_higher_temperature(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    # The fake answers like a sampling model: greedy at the tier's temperature, another
    # plausible line when sampled hotter.
    def text(body: dict[str, Any]) -> str:
        return "return b + a\n" if float(body.get("temperature") or 0) >= 0.5 else "return a + b\n"

    fake.default = Script(text=text)
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False, "invoked_sample_temperature": 0.8}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "sampled.py")
        open_doc(client, uri, SOURCE)
        choices = await invoked_choices(client, uri, 1, 4)
        assert choices[0] == "return a + b"
        assert "return b + a" in choices[1:], choices
        assert len({c.rstrip() for c in choices}) == len(choices)  # deduped against the others
        temps = [req.body.get("temperature") for req in fake.model_requests() if req.body]
        assert temps == [0.1, 0.8], temps
        # The sample is a choice only: the answer cached and remembered there is still item 1.
        assert texts(await inline(client, uri, 1, 4, invoked=False)) == ["return a + b"]
        # Automatic requests never sample twice.
        other = doc_uri(tmp_path, "automatic.py")
        open_doc(client, other, SOURCE)
        before = len(fake.model_requests())
        assert texts(await inline(client, other, 1, 4, invoked=False)) == ["return a + b"]
        assert len(fake.model_requests()) - before <= 1


async def test_a_second_sample_that_repeats_the_answer_adds_no_item(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False, "invoked_sample_temperature": 0.8}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "same.py")
        open_doc(client, uri, SOURCE)
        choices = texts(await inline(client, uri, 1, 4, invoked=True))
        assert choices.count("return a + b") == 1, choices
        # The second sample runs behind the answer; it repeats the answer, so no choice is
        # announced and the next Invoked request gets one item again.
        assert await wait_until(lambda: len(fake.model_requests()) >= 2)
        assert [req.body.get("temperature") for req in fake.model_requests() if req.body] == [0.1, 0.8]


async def test_the_answer_is_written_before_the_status_item_it_updates(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    """The status item's latency is a notification of its own; the reply waits for none of
    it (issue 40): on the wire the answer comes first, its status update after it."""
    fake.default = Script(text="return a + b\n")
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        order: list[str] = []
        handle = client.protocol.handle_message

        def noted(message: Any) -> Any:
            method = getattr(message, "method", None)
            if method == "lspAssist/status":
                order.append("status:" + str(getattr(message.params, "outcome", "")))
            elif method is None and getattr(message, "result", None) is not None:
                order.append("reply")
            return handle(message)

        client.protocol.handle_message = noted  # type: ignore[method-assign]
        uri = doc_uri(tmp_path, "calc.py")
        open_doc(client, uri, SOURCE)
        await asyncio.sleep(0.4)  # past the status throttle's window: the update goes at once
        order.clear()
        assert texts(await inline(client, uri, 1, 4, invoked=False)) == ["return a + b"]
        assert await wait_until(lambda: "status:model" in order)
        assert order.index("reply") < order.index("status:model"), order
