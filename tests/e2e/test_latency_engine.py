"""The latency engine over real stdio: supersession, stale versions, typing-through, enrichment."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from lsprotocol import types

from tests.e2e.conftest import doc_uri, inline, lsp_session, open_doc, openai_tiers, texts
from tests.fakes.fake_model_server import FakeModelServer, Script

SOURCE = "def add(a, b):\n    \n"


def change(client, uri: str, version: int, line: int, col: int, text: str) -> None:  # type: ignore[no-untyped-def]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=line, character=col),
                        end=types.Position(line=line, character=col),
                    ),
                    text=text,
                )
            ],
        )
    )


def params(uri: str, line: int, col: int, invoked: bool = False) -> types.InlineCompletionParams:
    kind = (
        types.InlineCompletionTriggerKind.Invoked if invoked else types.InlineCompletionTriggerKind.Automatic
    )
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=col),
        context=types.InlineCompletionContext(trigger_kind=kind),
    )


async def test_typing_burst_supersedes_and_closes_streams(tmp_path: Path, fake: FakeModelServer) -> None:
    # Slow enough that a superseded stream would still be running when the next key comes.
    fake.default = Script(text="value = compute(a, b)\n", ttft_ms=150, tokens_per_s=50)
    opts = openai_tiers(fake.base_url)
    # The trailing debounce within a burst (the defaults send every key: docs/latency.md).
    debounce = {"debounce_min_ms": 10, "debounce_max_ms": 90}
    opts["completion"] = {"prefetch": False, "enrichment": False, **debounce}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "burst.py")
        open_doc(client, uri, SOURCE)
        word = "total = items"
        pending = None
        for k, ch in enumerate(word):
            if pending is not None:
                client.cancel_request(types.CancelParams(id=pending[0]))
            change(client, uri, 2 + k, 1, 4 + k, ch)
            msg_id = f"burst-{k}"
            fut = asyncio.wrap_future(
                client.protocol.send_request(
                    types.TEXT_DOCUMENT_INLINE_COMPLETION, params(uri, 1, 5 + k), msg_id=msg_id
                )
            )
            pending = (msg_id, fut)
            await asyncio.sleep(0.04)
        assert pending is not None
        await asyncio.wait_for(pending[1], timeout=20)
        await asyncio.to_thread(
            fake.wait_for, lambda s: s.streams_started == s.streams_completed + s.streams_aborted, 5
        )
        stats = fake.stats
        assert 1 <= stats.streams_started <= 2, stats
        # Nothing is left streaming: every started stream ended (read to the end or aborted).
        assert stats.streams_started == stats.streams_completed + stats.streams_aborted, stats


async def test_stale_version_is_never_answered(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n", ttft_ms=400)
    async with lsp_session(tmp_path, openai_tiers(fake.base_url)) as client:
        uri = doc_uri(tmp_path, "stale.py")
        open_doc(client, uri, SOURCE)
        fut = asyncio.ensure_future(inline(client, uri, 1, 4))
        assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_started >= 1, 5)
        change(client, uri, 2, 0, 0, "# edited meanwhile\n")
        res = await fut
        assert texts(res) == []  # computed for version 1; the document is at version 2


async def test_typing_through_makes_no_model_call(tmp_path: Path, fake: FakeModelServer) -> None:
    fake.default = Script(text="return a + b\n")
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "tt.py")
        open_doc(client, uri, SOURCE)
        assert texts(await inline(client, uri, 1, 4)) == ["return a + b"]
        calls = len(fake.model_requests())
        for k, ch in enumerate("retu"):
            change(client, uri, 2 + k, 1, 4 + k, ch)
            res = await inline(client, uri, 1, 5 + k, invoked=False)
            assert texts(res) == ["return a + b"[k + 1 :]]
        # Backspace to an earlier state finds that state's suggestion again.
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=10),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=1, character=6), end=types.Position(line=1, character=8)
                        ),
                        text="",
                    )
                ],
            )
        )
        assert texts(await inline(client, uri, 1, 6, invoked=False)) == ["turn a + b"]
        assert len(fake.model_requests()) == calls


async def test_enrichment_notifies_and_rerequest_returns_longer(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    body = "total = a + b\n    if total < 0:\n        return 0\n    return total\n"
    fake.default = Script(text=body, tokens_per_s=200)
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "enrich.py")
        open_doc(client, uri, SOURCE)
        ready = client.protocol.wait_for_notification_async("lspAssist/suggestionReady")
        first = texts(await inline(client, uri, 1, 4))
        # Invoked: the quick first line first; the fuller answer is a choice after it.
        assert first[0] == "total = a + b"
        note = await asyncio.wait_for(ready, timeout=10)
        assert note.uri == uri
        assert note.position.line == 1
        again = texts(await inline(client, uri, 1, 4, invoked=False))
        assert again and again[0].startswith("total = a + b\n    if total < 0:")
        assert len(again[0]) > len(first[0])
        assert len(fake.model_requests()) == 1  # the enrichment came from the same stream


async def test_request_attaches_to_the_stream_the_user_types_along(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    # Slow tokens: the user types "re" while the model is still producing "return a + b".
    fake.default = Script(text="return a + b\n", ttft_ms=100, tokens_per_s=15)
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"prefetch": False, "enrichment": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "attach.py")
        open_doc(client, uri, SOURCE)
        first = asyncio.wrap_future(
            client.protocol.send_request(
                types.TEXT_DOCUMENT_INLINE_COMPLETION, params(uri, 1, 4, invoked=True), msg_id="first"
            )
        )
        assert await asyncio.to_thread(fake.wait_for, lambda s: s.tokens_sent >= 1, 5)
        # As VS Code does: cancel the old request, apply the keystrokes, ask again.
        client.cancel_request(types.CancelParams(id="first"))
        change(client, uri, 2, 1, 4, "re")
        res = await inline(client, uri, 1, 6, invoked=False)
        assert texts(res) == ["turn a + b"]
        assert len(fake.model_requests()) == 1  # no second model call: it attached
        with contextlib.suppress(Exception):
            await asyncio.wait_for(first, 5)


async def test_prefetch_makes_the_next_suggestion_instant_after_accepting(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.default = Script(text="return a + b\n")
    fake.add_rule(r"return a \+ b$", Script(text=" * 2\n"))  # the prompt as if the suggestion were accepted
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"enrichment": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "prefetch.py")
        open_doc(client, uri, SOURCE)
        assert texts(await inline(client, uri, 1, 4)) == ["return a + b"]
        # The prefetch for the accepted state runs in the background.
        assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_started >= 2, 10)
        await asyncio.to_thread(fake.wait_for, lambda s: s.streams_completed + s.streams_aborted >= 2, 10)
        calls = len(fake.model_requests())
        change(client, uri, 2, 1, 4, "return a + b")  # the editor inserts the accepted suggestion
        res = await inline(client, uri, 1, 16, invoked=False)
        assert texts(res) == [" * 2"]
        assert len(fake.model_requests()) == calls  # answered from the prefetch, no new call


async def test_accepting_before_the_prefetch_ends_waits_for_it_not_a_second_call(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    """The user accepts while the prefetch for the state after the suggestion is still
    streaming (a real model takes hundreds of ms): the request for that state waits for the
    prefetch's answer instead of paying for the same prompt a second time. The prefetch
    holds its first token until the request has been sent, so the order is fixed."""
    fake.default = Script(text="return a + b\n")
    fake.add_rule(r"return a \+ b$", Script(text=" * 2\n", ttft_ms=1500))
    opts = openai_tiers(fake.base_url)
    opts["completion"] = {"enrichment": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "prefetch.py")
        open_doc(client, uri, SOURCE)
        assert texts(await inline(client, uri, 1, 4)) == ["return a + b"]
        assert await asyncio.to_thread(fake.wait_for, lambda s: s.streams_started >= 2, 10)
        assert len(fake.model_requests()) == 2  # the answer's call and the prefetch, still open
        change(client, uri, 2, 1, 4, "return a + b")  # accepted
        res = await inline(client, uri, 1, 16, invoked=False)
        assert texts(res) == [" * 2"]
        assert len(fake.model_requests()) == 2  # the prefetch's answer, no second call


async def test_answer_within_the_budget_then_the_longer_suggestion(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    """A slow model whose first line is not complete by the tier's answer budget: the request
    is answered with the part so far, cut at a code boundary; the stream goes on, the full
    line is announced with suggestionReady, and typing through the early part stays
    consistent with it."""
    fake.default = Script(
        tokens=["total", " =", " compute", "_sum", "(a", ",", " b", ")", "\n"], ttft_ms=30, tokens_per_s=8
    )
    opts = openai_tiers(fake.base_url, answer_budget_ms=300)
    opts["completion"] = {"prefetch": False, "enrichment": False}
    async with lsp_session(tmp_path, opts) as client:
        uri = doc_uri(tmp_path, "budget.py")
        open_doc(client, uri, SOURCE)
        ready = client.protocol.wait_for_notification_async("lspAssist/suggestionReady")
        first = texts(await inline(client, uri, 1, 4))
        line = "total = compute_sum(a, b)"
        assert first and line.startswith(first[0]) and first[0] != line, first  # before the line ended
        cut = len(first[0])
        assert not (first[0][-1].isalnum() and (line[cut].isalnum() or line[cut] == "_")), (
            first
        )  # a whole word
        await asyncio.wait_for(ready, timeout=10)
        full = texts(await inline(client, uri, 1, 4, invoked=False))
        assert full == ["total = compute_sum(a, b)"]
        # Typing the early part's first characters: the rest comes from the full suggestion.
        change(client, uri, 2, 1, 4, "tot")
        through = texts(await inline(client, uri, 1, 7, invoked=False))
        assert through == ["al = compute_sum(a, b)"]
        assert len(fake.model_requests()) == 1
