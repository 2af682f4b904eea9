"""PromptBuilder reuses a document's prompt while nothing it depends on changed."""

from __future__ import annotations

from lsp_assist.config.schema import Config
from lsp_assist.context.builder import ContextEngine
from lsp_assist.documents.store import DocumentStore, TextChange
from lsp_assist.domain import Cursor, PromptContext
from lsp_assist.pipeline.prompt import PromptBuilder


class NoGovernance:
    def excluded(self, path: str | None) -> str | None:
        return None

    def redact_context(self, ctx: PromptContext) -> tuple[PromptContext, int]:
        return ctx, 0

    async def admit_async(self, feature: str, tier: str, provider_key: str) -> object:
        raise NotImplementedError

    @property
    def hedging_enabled(self) -> bool:
        return False


def _builder() -> tuple[PromptBuilder, DocumentStore, ContextEngine]:
    store, context = DocumentStore(), ContextEngine()
    store.on_change.append(context.index_document)
    return PromptBuilder(Config(), store, context, NoGovernance(), {}), store, context  # type: ignore[arg-type]


def test_the_same_version_and_cursor_reuse_the_prompt() -> None:
    prompts, store, _ = _builder()
    store.open("file:///a.py", "python", 1, "import os\n\ndef f(x):\n    return ", "/a.py")
    first = prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    again = prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    assert first is not None and again is not None
    assert prompts.reused == 1 and again.context is first.context and again.key == first.key


def test_an_edit_another_document_or_the_cursor_rebuilds() -> None:
    prompts, store, _ = _builder()
    store.open("file:///a.py", "python", 1, "def f(x):\n    return ", "/a.py")
    base = prompts.for_open("file:///a.py", Cursor(1, 11), "fast")
    prompts.for_open("file:///a.py", Cursor(1, 10), "fast")  # another cursor
    store.change("file:///a.py", 2, [TextChange(None, None, "def f(x):\n    return x")])
    edited = prompts.for_open("file:///a.py", Cursor(1, 12), "fast")
    store.open("file:///b.py", "python", 1, "def helper():\n    pass\n", "/b.py")
    with_other = prompts.for_open("file:///a.py", Cursor(1, 12), "fast")
    assert prompts.reused == 0
    assert base is not None and edited is not None and with_other is not None
    assert edited.context.prefix.endswith("return x")


def test_forget_drops_the_memo() -> None:
    prompts, store, _ = _builder()
    store.open("file:///a.py", "python", 1, "x = ", "/a.py")
    prompts.for_open("file:///a.py", Cursor(0, 4), "fast")
    prompts.forget("file:///a.py")
    prompts.for_open("file:///a.py", Cursor(0, 4), "fast")
    assert prompts.reused == 0
