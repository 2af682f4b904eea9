"""PromptBuilder reuses a document's prompt while nothing it depends on changed."""

from __future__ import annotations

from typing import Any

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


class CountingContext(ContextEngine):
    """A real context engine that counts its builds."""

    builds = 0

    def build(self, *args: Any, **kwargs: Any) -> PromptContext:
        self.builds += 1
        return super().build(*args, **kwargs)


def _counting() -> tuple[PromptBuilder, DocumentStore, CountingContext]:
    store, context = DocumentStore(), CountingContext()
    store.on_change.append(context.index_document)
    store.on_close.append(context.forget_document)
    return PromptBuilder(Config(), store, context, NoGovernance(), {}), store, context  # type: ignore[arg-type]


TEXT = "import os\n\ndef f(x):\n    return "


def test_a_document_reopened_as_it_was_reuses_its_prompt_without_a_build() -> None:
    prompts, store, context = _counting()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    first = prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    store.change("file:///a.py", 2, [TextChange(Cursor(3, 11), Cursor(3, 11), "x")])
    store.close("file:///a.py")  # re-indexes the file as last seen (its own entry only)
    store.open("file:///a.py", "python", 3, TEXT, "/a.py")
    again = prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    assert first is not None and again is not None
    assert context.builds == 1 and prompts.reused == 1
    assert again.key == first.key and again.context is first.context


def test_an_undo_to_an_earlier_text_reuses_its_prompt() -> None:
    prompts, store, context = _counting()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    first = prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    store.change("file:///a.py", 2, [TextChange(Cursor(3, 11), Cursor(3, 11), "x")])
    typed = prompts.for_open("file:///a.py", Cursor(3, 12), "fast")
    store.change("file:///a.py", 3, [TextChange(Cursor(3, 11), Cursor(3, 12), "")])
    undone = prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    assert first is not None and typed is not None and undone is not None
    assert context.builds == 2 and undone.key == first.key and typed.key != first.key


def test_other_text_another_files_index_change_or_another_cursor_rebuild() -> None:
    prompts, store, context = _counting()
    store.open("file:///a.py", "python", 1, TEXT, "/a.py")
    prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    store.close("file:///a.py")
    store.open("file:///a.py", "python", 2, TEXT + "1", "/a.py")  # reopened with other text
    prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    assert context.builds == 2
    # Another file enters the index (not an open document): the cross-file context may change.
    context.symbols.update_file("/helpers.py", "def helper(x):\n    return x\n", "python")
    prompts.for_open("file:///a.py", Cursor(3, 11), "fast")
    assert context.builds == 3
    prompts.for_open("file:///a.py", Cursor(3, 10), "fast")
    assert context.builds == 4 and prompts.reused == 0
