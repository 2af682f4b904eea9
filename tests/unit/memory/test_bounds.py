"""Every long-lived memo stays within its named byte bound, however large its entries.

Each test fills one cache with far more (and larger) entries than its bound holds and
measures what it keeps with tracemalloc (`retained.py`), not with the cache's own estimate.
Before these bounds the caches were bounded in entries only (or by clearing at a count),
and these fills kept several times the bound.
"""

from __future__ import annotations

import random
from collections import Counter

from lsp_assist.config.schema import BudgetConfig
from lsp_assist.context.builder import ContextEngine
from lsp_assist.context.crossfile import RANKER_BYTES, CrossFileRanker, SourceDoc
from lsp_assist.context.layout import MEMO_BYTES as LAYOUT_BYTES
from lsp_assist.context.layout import StableLayout
from lsp_assist.context.lexicon import IDENTS_BYTES, ROW_TABLES_BYTES
from lsp_assist.context.sources.related import WINDOWS_BYTES
from lsp_assist.context.trimming import LineSelection
from lsp_assist.documents.store import Document
from lsp_assist.domain import Cursor, PromptContext, Snippet
from lsp_assist.pipeline.cache import MEMORY_BYTES as SUGGESTION_BYTES
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.prompt import Prompt, prompt_bytes
from lsp_assist.pipeline.prompt_memo import MEMO_BYTES as PROMPT_MEMO_BYTES
from lsp_assist.pipeline.prompt_memo import PromptMemo
from lsp_assist.pipeline.typing_index import TYPING_BYTES, TypingIndex
from lsp_assist.structure import imports, outline
from lsp_assist.structure.imports import IMPORTS_MEMO_BYTES, LINE_MEMO_BYTES, cached_imports
from lsp_assist.structure.outline import NAME_MEMO_BYTES, family_of, tail_words
from lsp_assist.structure.symbols import SymbolIndex
from lsp_assist.telemetry.stats import WINDOW_BYTES, StatsCollector
from tests.unit.memory.retained import SLACK, retained_bytes


def _row(i: int, width: int = 200) -> str:
    """A distinct line of code with many distinct names."""
    names = " + ".join(f"name_{i}_{k}" for k in range(width // 14))
    return f"    value_{i} = {names}"


def test_line_names_memo() -> None:
    engine = ContextEngine()

    def fill() -> None:
        for i in range(15_000):  # every edit of a row adds its new text
            engine._line_idents(_row(i))

    assert retained_bytes(fill) <= IDENTS_BYTES * SLACK
    assert engine._idents.nbytes <= IDENTS_BYTES


def test_related_windows_memo() -> None:
    engine = ContextEngine()
    rows = 12_000
    doc = Document("file:///w/wide.py", "python", 1, "\n".join(_row(i, 120) for i in range(rows)))
    doc.line_count  # the line table outside the measure  # noqa: B018
    near = Counter({f"name_{r}_1": 1 for r in range(0, rows, 7)})

    def fill() -> None:
        for row in range(200, rows, 400):  # requests all over a long file: ~4,000 windows
            sel = LineSelection(doc, row, 10**6, "# ...")
            engine._add_related(sel, doc, row, near, 10)

    engine._line_idents("warm")  # the per-line memo exists (it is measured with the windows)
    kept = retained_bytes(fill)
    assert engine._windows.nbytes <= WINDOWS_BYTES
    assert kept <= (WINDOWS_BYTES + IDENTS_BYTES) * SLACK


def test_row_name_tables_of_document_versions() -> None:
    engine = ContextEngine()

    def fill() -> None:
        for d in range(24):  # 24 documents of 3,000 rows, each read whole
            doc = Document(
                f"file:///w/d{d}.py", "python", 1, "\n".join(_row(i + 3000 * d, 80) for i in range(3000))
            )
            engine.lexicon.rows(doc, 0, doc.line_count)

    engine._line_idents("warm")
    kept = retained_bytes(fill)
    assert engine.lexicon.tables_bytes <= ROW_TABLES_BYTES
    assert kept <= (ROW_TABLES_BYTES + IDENTS_BYTES) * SLACK


def test_similar_windows_of_other_documents() -> None:
    ranker = CrossFileRanker()
    text = "\n".join(_row(i, 80) for i in range(800))  # ~80 KB

    def fill() -> None:
        for version in range(64):  # another document edited 64 times
            doc = SourceDoc("/w/other.py", "file:///w/other.py", version, text + f"\n# {version}")
            ranker.rank({"name_3_1"}, [doc], 2000)

    assert retained_bytes(fill) <= RANKER_BYTES * SLACK


def test_stable_layout_snippets() -> None:
    layout = StableLayout()
    big = tuple(Snippet(f"/w/m{k}.py", "x = 1\n" * 5000) for k in range(3))

    def fill() -> None:
        for anchor in range(64):
            layout._frozen(
                ("file:///w/a.py", anchor), tuple(Snippet(s.path, s.text + str(anchor)) for s in big)
            )

    assert retained_bytes(fill) <= LAYOUT_BYTES * SLACK


def test_parsed_import_heads() -> None:
    head = tuple(f"from package_{k}.module_{k} import name_{k}  # {'x' * 40}" for k in range(400))

    def fill() -> None:
        for i in range(60):  # a row added or removed in the head: a new one each time
            cached_imports((f"# {i}", *head[:-1]), "python")

    assert retained_bytes(fill) <= (IMPORTS_MEMO_BYTES + LINE_MEMO_BYTES) * SLACK
    assert imports.imports_memo_bytes() <= IMPORTS_MEMO_BYTES
    assert imports.import_rows_memo_bytes() <= LINE_MEMO_BYTES


def test_name_family_and_tail_memos() -> None:
    rng = random.Random(3)

    def fill() -> None:
        for i in range(25_000):
            name = f"someLongPrefix_{rng.randrange(10**12)}_partialName{i}_tail"
            family_of(name)
            tail_words(name)

    assert retained_bytes(fill) <= 2 * NAME_MEMO_BYTES * SLACK
    assert outline.name_memo_bytes() <= 2 * NAME_MEMO_BYTES


def _prompt(text: str) -> Prompt:
    ctx = PromptContext("python", "/w/a.py", prefix=text[:3000], suffix=text[3000:4000])
    return Prompt(ctx, "fast", "k" * 32)


def test_prompt_memo_keeps_old_texts_within_its_bytes() -> None:
    memo: PromptMemo[Prompt] = PromptMemo(sizer=prompt_bytes)
    symbols = SymbolIndex()

    def fill() -> None:
        for d in range(32):
            for state in range(4):  # the last states of 32 documents of ~400 KB
                text = f"# {d} {state}\n" + "x = compute(y)\n" * 28_000
                doc = Document(f"file:///w/{d}.py", "python", state, text)
                memo.put(doc, (Cursor(1, 0),), symbols, _prompt(text))

    assert retained_bytes(fill) <= PROMPT_MEMO_BYTES * SLACK
    assert memo.nbytes <= PROMPT_MEMO_BYTES


def test_typing_index() -> None:
    index = TypingIndex()
    text = "y = compute(x)\n" * 2000

    def fill() -> None:
        for d in range(40):  # 40 documents, 64 answers each
            for k in range(64):
                offset = 10_000 + 15 * k
                index.remember(
                    f"file:///w/{d}.py", text[:offset] + f"#{d}" + text[offset:], offset, "z" * 80, "fast"
                )

    assert retained_bytes(fill) <= TYPING_BYTES * SLACK
    assert index.nbytes <= TYPING_BYTES


def test_suggestion_cache_memory_layer() -> None:
    cache = SuggestionCache(None, memory_entries=4096)

    def fill() -> None:
        for i in range(4096):  # long multi-line suggestions
            cache.put(f"{i:032x}", f"line {i}\n" * 300)

    assert retained_bytes(fill) <= SUGGESTION_BYTES * SLACK
    assert cache.memory_bytes <= SUGGESTION_BYTES


def test_stats_window() -> None:
    stats = StatsCollector(BudgetConfig(), None)
    stages = {f"stage_{k}": 1.5 for k in range(40)}

    def fill() -> None:
        for _ in range(5000):
            stats.record("model", "fast", stages)

    assert retained_bytes(fill) <= WINDOW_BYTES * SLACK
    assert stats.nbytes <= WINDOW_BYTES
