"""The first complete line is the answer, as a promise: no request waits for the rest of
the stream, at any kind of position, Automatic or Invoked.

The fake model sends the first line, then stalls far longer than any request may wait
(`pause_after_line_ms`) before the rest. The Invoked requests run with the default number
of choices and a choices wait and deadline longer than that patience, so a server that
gathered the choices before answering (the fuller answer needs the stream's end) times
out here instead of answering. No figure is asserted: the answer either holds the first
line while the model still stalls, or the request waits for the stall and fails.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from tests.e2e.conftest import doc_uri, inline, lsp_session, open_doc, openai_tiers, texts
from tests.fakes.fake_model_server import FakeModelServer, Script

STALL_MS = 30_000  # the model's pause after its first line
PATIENCE_S = 10.0  # how long a request may take here (the stall is three times that)


def _decoder_fresh_line() -> tuple[str, int, int]:
    """json/decoder.py with a fresh line inserted mid-file (real code after it), indented
    like the next line: the text, the row and the column of the cursor."""
    lines = (Path(sysconfig.get_paths()["stdlib"]) / "json" / "decoder.py").read_text().split("\n")
    row = next(i for i, text in enumerate(lines) if text.strip().startswith("end = _w(s, end).end()"))
    nxt = lines[row + 1]
    indent = nxt[: len(nxt) - len(nxt.lstrip())]
    return "\n".join([*lines[: row + 1], indent, *lines[row + 1 :]]), row + 1, len(indent)


def _positions() -> list[tuple[str, str, int, int, str]]:
    """(name, text, row, column, the model's first line) for each kind of position."""
    decoder, row, col = _decoder_fresh_line()
    return [
        ("empty body", "def total(items):\n    \n", 1, 4, "value = compute(items)"),
        ("fresh line mid-file", decoder, row, col, "value = compute(s)"),
        ("after a colon", "def f(flag, x):\n    if flag:\n        \n    return x\n", 2, 8, "x = scale(x)"),
        ("call arguments", "def g(a, b):\n    return combine(\n", 1, 19, "a, b)"),
    ]


@pytest.mark.parametrize("invoked", [False, True], ids=["automatic", "invoked"])
async def test_every_kind_of_position_is_answered_at_its_first_line(
    tmp_path: Path, fake: FakeModelServer, invoked: bool
) -> None:
    init = {
        **openai_tiers(fake.base_url, first_token_timeout_ms=5000, total_timeout_ms=60_000),
        "completion": {"prefetch": False, "deadline_ms": 60_000, "invoked_choices_wait_ms": 60_000},
    }
    async with lsp_session(tmp_path, init) as client:
        for i, (name, text, row, col, first) in enumerate(_positions()):
            fake.push(Script(text=f"{first}\n    return value\n", ttft_ms=20, pause_after_line_ms=STALL_MS))
            uri = doc_uri(tmp_path, f"p{i}.py")
            open_doc(client, uri, text)
            got = texts(await inline(client, uri, row, col, invoked=invoked, timeout=PATIENCE_S))
            assert got and got[0].split("\n")[0] == first, (name, got)
        # Every stream is still in its stall: each answer came from its first line alone.
        assert fake.stats.streams_completed == 0


async def test_no_answer_is_a_prefix_of_a_stream_that_was_cut(tmp_path: Path, fake: FakeModelServer) -> None:
    """Requests in several documents, each followed at once by one at another line of the
    same document (which closes the first one's stream mid-line): every answer is empty
    or a whole line the model wrote, never the text a cut stream had so far."""
    import asyncio
    import random

    rng = random.Random(7)
    lines: list[str] = []

    def answer(_body: object) -> str:
        name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(14))
        lines.append(f"MK{name}_ok)")
        return lines[-1] + "\n"

    fake.default = Script(text=answer, ttft_ms=10, tokens_per_s=60)
    init = {**openai_tiers(fake.base_url), "completion": {"prefetch": False, "enrichment": False}}
    text = "".join(f"def f{i}(a):\n    return g(\n\n" for i in range(6))
    answers: list[str] = []
    async with lsp_session(tmp_path, init) as client:
        for d in range(4):
            uri = doc_uri(tmp_path, f"cut{d}.py")
            open_doc(client, uri, text)
            for k in range(3):
                rows = rng.sample(range(6), 2)
                first = asyncio.ensure_future(inline(client, uri, 3 * rows[0] + 1, 13, invoked=bool(k % 2)))
                await asyncio.sleep(rng.uniform(0.03, 0.12))  # mid-line of the first stream
                second = await inline(client, uri, 3 * rows[1] + 1, 13, invoked=bool(k % 2))
                answers += texts(await first) + texts(second)
    assert fake.stats.streams_aborted > 0, "no stream was cut: the test checked nothing"
    for got in answers:
        head = got.split("\n")[0]
        assert not any(line.startswith(head) and line != head for line in lines if head), got
