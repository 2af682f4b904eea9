"""Framing over real stdio: frames the server cannot read are dropped, and the next
well-formed messages are still served; input that ends inside a frame ends the server
with a non-zero status and an error line, never a hang or a traceback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.robustness.stdio_session import assert_still_serving, log_messages, start_server, write_raw

# Bytes that must never be echoed into a log line (the content of a dropped frame).
MARKER = b"DROPPED-FRAME-CONTENT"


BAD_FRAMES = {
    # The held-out battery's case: a header that claims 1 GB, then a few bytes.
    "over the cap": b"Content-Length: 1000000000\r\n\r\n" + MARKER,
    # A whole request behind it: it cannot be delimited, so it is dropped too.
    "not a number": b"Content-Length: lots\r\n\r\n"
    + json.dumps({"jsonrpc": "2.0", "id": 900, "method": MARKER.decode()}).encode(),
    "negative": b"Content-Length: -12\r\n\r\n" + MARKER,
    "no Content-Length": b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + MARKER,
    "a header line with no end": MARKER * 5000 + b"\r\n",
}


@pytest.mark.parametrize("bad", list(BAD_FRAMES), ids=list(BAD_FRAMES))
async def test_a_bad_frame_is_dropped_and_the_next_requests_are_answered(tmp_path: Path, bad: str) -> None:
    client, _ = await start_server(tmp_path)
    try:
        # A round trip first: from then on (after `initialized`) log lines reach the client.
        await assert_still_serving(client)
        write_raw(client, BAD_FRAMES[bad])
        await assert_still_serving(client)
        await assert_still_serving(client)  # and stays in step with the frames after it
        messages = log_messages(client)
        assert "skipped" in messages, messages  # the drop is logged...
        assert MARKER.decode() not in messages  # ...without its content
        assert client.proc.returncode is None
    finally:
        await client.close()


async def test_a_frame_over_the_cap_leaves_a_clean_shutdown(tmp_path: Path) -> None:
    client, _ = await start_server(tmp_path)
    write_raw(client, BAD_FRAMES["over the cap"])
    await client.close()  # shutdown, then exit
    assert client.proc.returncode == 0


INCOMPLETE = {
    "a body cut short": b"Content-Length: 100\r\n\r\n" + MARKER,
    "a header cut short": b"Content-Length: 100\r\n",
    "a frame over the cap": BAD_FRAMES["over the cap"],
}


@pytest.mark.parametrize("data", list(INCOMPLETE), ids=list(INCOMPLETE))
async def test_input_that_ends_inside_a_frame_ends_the_server(tmp_path: Path, data: str) -> None:
    """The client writes part of a frame and closes stdin: the server exits, non-zero, with
    an error line on stderr (the client is gone) and no traceback."""
    client, err = await start_server(tmp_path)
    try:
        write_raw(client, INCOMPLETE[data])
        assert client.proc.stdin is not None
        client.proc.stdin.close()
        status = await asyncio.wait_for(client.proc.wait(), timeout=30)
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()
    assert status == 1
    text = err.read_text(encoding="utf-8", errors="replace")
    assert "input ended inside a frame" in text, text[-2000:]
    assert "Traceback" not in text, text[-3000:]
    assert MARKER.decode() not in text
