"""Reads LSP frames from a byte stream: a header block, then a body of `Content-Length` bytes.

It replaces the framing of pygls' reader loop (`pygls.io_.run_async`), which trusts the
header: a frame that claims 1 GB makes it wait for that many bytes while the requests
after it are swallowed as body; a `Content-Length` that is not a number leaves it out of
step with every later frame; and input that ends inside a frame escapes as a traceback.
Here a body is capped at `MAX_FRAME_BYTES`, a frame that cannot be read is logged and
skipped by scanning for the next header, and input that ends inside a frame raises
`InputEnded`, so the server can exit non-zero. Log lines give sizes, never content.
"""

from __future__ import annotations

import logging
import re
from typing import Protocol

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""The largest body accepted. A 5 MB document opened with didOpen is about 6 MB of JSON."""

MAX_HEADER_LINE_BYTES = 8 * 1024
"""A header line is about 30 bytes; a longer one is noise, not a header."""

_CHUNK = 64 * 1024

# Where the next frame starts, searched for while skipping one. It cannot occur inside a
# JSON body: CR LF is escaped inside a JSON string, and outside one "Content-Length: "
# followed by digits is not JSON. So a skipped body (even a real one over the cap) never
# yields a false start. Case-sensitive (the spec's spelling, which clients write): a
# literal prefix makes the search an order of magnitude faster than ignoring case.
_NEXT_HEADER = re.compile(rb"Content-Length: ?\d{1,20}\r\n")
# What the scan keeps of the bytes it drops, in case a header is split across two reads.
_HEADER_TAIL = 64
_FIELD = re.compile(rb"([!-9;-~]+):[ \t]*(.*?)[ \t]*\r?\n")
# A longer claim is over any cap, and is not parsed (int() refuses more than 4300 digits).
_MAX_LENGTH_DIGITS = 18


class ByteSource(Protocol):
    """The input: `read(n)` returns up to n bytes, and b"" only at the end of the input
    (asyncio.StreamReader has this interface)."""

    async def read(self, n: int) -> bytes: ...


class InputEnded(Exception):
    """The input ended inside a frame: what was read of it cannot be served."""


class FrameReader:
    """Frames from `source`, one `next_body()` at a time."""

    def __init__(self, source: ByteSource, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self._source = source
        self._max = max_frame_bytes
        self._buf = bytearray()
        self._eof = False
        self.skipped = 0  # frames dropped so far

    async def next_body(self) -> bytes | None:
        """The next frame's body; None when the input ends between frames.

        A frame that cannot be read (over the cap, a length that is not a number, no
        length, a line that is not a header) is logged and skipped. Raises InputEnded when
        the input ends inside a frame, including one being skipped.
        """
        while True:
            length, problem = await self._header_block()
            if problem is not None:
                self.skipped += 1
                log.warning("input: %s; frame skipped, reading on from the next header", problem)
                await self._skip_to_next_header()
                continue
            if length is None:
                return None
            return await self._body(length)

    async def _header_block(self) -> tuple[int | None, str | None]:
        """(length, None) for a good header block, (None, why) for a bad one, (None, None)
        at the end of the input between frames."""
        length: int | None = None
        problem: str | None = None
        seen = False
        while True:
            line = await self._line()
            if line is None:
                overlong = f"a line of over {MAX_HEADER_LINE_BYTES} bytes where a header was expected"
                return None, problem or overlong
            if not line:
                if seen:
                    raise InputEnded("the input ended inside a frame's header")
                return None, None
            if not line.strip():
                if not seen:
                    continue  # blank lines between frames are harmless
                if problem is None and length is None:
                    problem = "a frame without a Content-Length header"
                return (None, problem) if problem else (length, None)
            seen = True
            field = _FIELD.fullmatch(line)
            if field is None:
                # Not a header: the unread end of a frame, or noise. The next header may
                # follow on this very line, so the scan starts at its first byte.
                self._buf[:0] = line
                return None, problem or f"{len(line)} bytes that are not a header"
            if field.group(1).lower() != b"content-length":
                continue  # Content-Type, or anything else: the body is UTF-8 JSON regardless
            value = field.group(2)
            if not value.isdigit():
                problem = "a Content-Length that is not a number"
            elif len(value) > _MAX_LENGTH_DIGITS or int(value) > self._max:
                claim = f"{int(value)} bytes" if len(value) <= _MAX_LENGTH_DIGITS else "a length"
                problem = f"a frame of {claim}, over the {self._max}-byte cap"
            else:
                length = int(value)

    async def _line(self) -> bytes | None:
        """The next line, newline included (consumed); b"" at the end of the input; None
        when no newline comes within MAX_HEADER_LINE_BYTES (nothing consumed)."""
        searched = 0
        while True:
            end = self._buf.find(b"\n", searched)
            if end >= 0:
                if end >= MAX_HEADER_LINE_BYTES:
                    return None
                line = bytes(self._buf[: end + 1])
                del self._buf[: end + 1]
                return line
            if len(self._buf) >= MAX_HEADER_LINE_BYTES:
                return None
            searched = len(self._buf)
            if not await self._fill(_CHUNK):
                if self._buf:
                    raise InputEnded("the input ended inside a frame's header")
                return b""

    async def _body(self, length: int) -> bytes:
        """What is buffered, then exactly the rest from the source, in the pieces it comes
        in, joined once (a didOpen body may be megabytes: one copy, not one per read)."""
        if len(self._buf) >= length:
            with memoryview(self._buf) as view:
                body = bytes(view[:length])
            del self._buf[:length]
            return body
        parts = [bytes(self._buf)] if self._buf else []
        have = len(self._buf)
        self._buf.clear()
        while have < length:
            chunk = await self._read(length - have)
            if not chunk:
                raise InputEnded(f"the input ended inside a frame's body ({have} of {length} bytes)")
            parts.append(chunk)
            have += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def _skip_to_next_header(self) -> None:
        """Drop input up to the next `Content-Length` header (kept for the next block).
        Memory stays bounded: between reads only a header's length of the tail is kept."""
        dropped = 0
        while True:
            found = _NEXT_HEADER.search(self._buf)
            if found is not None:
                dropped += found.start()
                del self._buf[: found.start()]
                log.debug("input: %d bytes dropped before the next header", dropped)
                return
            surplus = len(self._buf) - _HEADER_TAIL
            if surplus > 0:
                dropped += surplus
                del self._buf[:surplus]
            if not await self._fill(_CHUNK):
                raise InputEnded("the input ended inside a frame that was being skipped")

    async def _fill(self, n: int) -> bool:
        """Append up to n more bytes of input to the buffer; False at the end of the input."""
        chunk = await self._read(n)
        self._buf += chunk
        return bool(chunk)

    async def _read(self, n: int) -> bytes:
        """Up to n bytes from the source; b"" at the end of the input, and ever after."""
        if self._eof:
            return b""
        chunk = await self._source.read(n)
        self._eof = not chunk
        return chunk
