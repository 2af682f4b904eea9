"""framing.FrameReader in process: frames split at any byte, bad frames skipped with bounded
memory, and the two ways input can end (between frames, inside one)."""

from __future__ import annotations

import json

import pytest

from lsp_assist.protocol.framing import MAX_FRAME_BYTES, FrameReader, InputEnded


class Chunks:
    """A ByteSource that hands out `data` `size` bytes at a time, then b""."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data = data
        self.size = size
        self.pos = 0

    async def read(self, n: int) -> bytes:
        chunk = self.data[self.pos : self.pos + min(n, self.size)]
        self.pos += len(chunk)
        return chunk


class Watched(Chunks):
    """Chunks that record the most its reader buffered before any read."""

    reader: FrameReader | None = None
    high = 0

    async def read(self, n: int) -> bytes:
        if self.reader is not None:
            self.high = max(self.high, len(self.reader._buf))
        return await super().read(n)


def frame(i: int) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "m", "params": {"text": "a\r\nb"}}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def bodies(reader: FrameReader) -> list[int]:
    out = []
    for _ in range(100):  # bounded: a test never loops forever
        body = await reader.next_body()
        if body is None:
            return out
        out.append(json.loads(body)["id"])
    raise AssertionError("more frames than written")


@pytest.mark.parametrize("size", [1, 2, 7, 64, 1 << 20])
async def test_frames_split_anywhere_are_read_whole(size: int) -> None:
    data = frame(1) + b"\r\n" + frame(2) + frame(3)  # a stray blank line between frames is fine
    assert await bodies(FrameReader(Chunks(data, size))) == [1, 2, 3]


@pytest.mark.parametrize("size", [1, 5, 4096])
@pytest.mark.parametrize(
    "bad",
    [
        b"Content-Length: 1000000000\r\n\r\nxyz",
        b"Content-Length: 99999999999999999999999999\r\n\r\n",
        b"Content-Length: ten\r\n\r\n{}",
        b"Content-Length: -1\r\n\r\n",
        b"Content-Type: x\r\n\r\n{}",
        b"garbage without a header\r\n",
        b"no newline at all" * 1000,
    ],
)
async def test_a_bad_frame_is_skipped_up_to_the_next_header(size: int, bad: bytes) -> None:
    reader = FrameReader(Chunks(frame(1) + bad + frame(2) + frame(3), size))
    assert await bodies(reader) == [1, 2, 3]
    assert reader.skipped == 1


async def test_a_real_frame_over_the_cap_is_skipped_without_holding_it() -> None:
    """A genuine 5 MB frame against a 1 MB cap: skipped, and the reader never buffers more
    than a read's worth of it."""
    big = json.dumps({"jsonrpc": "2.0", "method": "m", "params": {"text": "x\r\n" * 1_700_000}}).encode()
    data = frame(1) + b"Content-Length: %d\r\n\r\n" % len(big) + big + frame(2)
    source = Watched(data, 65536)
    reader = source.reader = FrameReader(source, max_frame_bytes=1 << 20)
    assert await bodies(reader) == [1, 2] and reader.skipped == 1
    assert source.high < 2 * 65536


@pytest.mark.parametrize(
    "tail",
    [
        b"Content-Length: 50\r\n\r\n{}",  # a body cut short
        b"Content-Length: 50\r\n",  # a header block cut short
        b"Content-Len",  # a header line cut short
        b"Content-Length: 1000000000\r\n\r\nxyz",  # a frame being skipped
    ],
)
async def test_input_that_ends_inside_a_frame_raises(tail: bytes) -> None:
    reader = FrameReader(Chunks(frame(1) + tail, 3))
    assert await reader.next_body() is not None
    with pytest.raises(InputEnded, match="input ended inside a frame"):
        await reader.next_body()


async def test_input_that_ends_between_frames_is_the_end() -> None:
    reader = FrameReader(Chunks(frame(1), 3))
    assert await reader.next_body() is not None
    assert await reader.next_body() is None
    assert await reader.next_body() is None  # and stays ended


def test_the_cap_is_64_mib() -> None:
    assert MAX_FRAME_BYTES == 64 * 1024 * 1024
