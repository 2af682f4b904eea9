"""The data boundary's one gateway: what of which file may reach a prompt.

Three checks, one rule (`verdict`):
- at the source: the context engine's symbol index holds no file the boundary refuses
  (`admits`, installed by the runtime), so no reader of it (import-based context, the
  package names line, the editor's files, recent edits) can hand one on;
- at the assembler: every part a context source offers passes the engine's gateway
  (`context/gateway.py`, the same `admits`) before it is placed, so no source can bypass it;
- at the end: every cross-file part of a finished context is checked by its path again
  (`gate_context`, run by `PromptBuilder` for every feature, before redaction and the cache
  key). A part dropped at the last two is a bug in its source: it is logged, by count only.

The rule: a file path goes through governance's boundary (secret globs, exclusion globs,
ignore files, the path as named and after realpath); an `untitled:` buffer has no path
and no name that could mark it secret (key-like strings in it are still redacted); any
other path-less URI fails closed.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable
from typing import Protocol

from lsp_assist.context.gateway import part_path
from lsp_assist.domain import PromptContext

log = logging.getLogger(__name__)

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


class Boundary(Protocol):
    def excluded(self, path: str | None) -> str | None: ...


def verdict(boundary: Boundary, path: str | None) -> str | None:
    """Why text of the file at `path` (a filesystem path, or the URI of a path-less
    buffer) must not reach a model, or None."""
    if path is not None and path.startswith("untitled:"):
        return None
    if path is not None and _URI.match(path):
        return "no file path (fail closed)"
    return boundary.excluded(path)


def admits(boundary: Boundary) -> Callable[[str], bool]:
    """`verdict` as a predicate, for the context engine's index."""

    def admit(path: str) -> bool:
        return verdict(boundary, path) is None

    return admit


def gate_context(boundary: Boundary, ctx: PromptContext) -> tuple[PromptContext, int]:
    """`ctx` without the cross-file parts whose file the boundary refuses; how many."""
    kept = tuple(s for s in ctx.snippets if _part_allowed(boundary, s.path))
    dropped = len(ctx.snippets) - len(kept)
    if not dropped:
        return ctx, 0
    log.warning(
        "data boundary: %d cross-file part(s) from excluded files dropped at the gateway"
        " (a context channel did not check the boundary)",
        dropped,
    )
    return dataclasses.replace(ctx, snippets=kept), dropped


def _part_allowed(boundary: Boundary, path: str) -> bool:
    # Judged by the same path as at the assembler's gateway (a package's names line by its
    # directory, whose files the index already judged one by one).
    return verdict(boundary, part_path(path)) is None
