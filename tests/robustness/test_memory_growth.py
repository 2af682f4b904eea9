"""A long session over real stdio: every memo the server keeps stays within its byte bound.

The real `lsp-assist serve` and the loopback fake model (its own process), driven by the
soak benchmark's session (`benchmarks/soak.py --documents`): real standard-library files
opened, fresh lines typed at random rows of them with a request per keystroke (every third
cancelled), then deleted again. The server's own accounting (`lspAssist.stats` "memory") is
read every 200 requests. No RSS or timing figure is asserted: those are the benchmark's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.rpc_client import server_cmd
from benchmarks.soak import soak_spread
from lsp_assist.context.crossfile import RANKER_BYTES
from lsp_assist.context.layout import MEMO_BYTES as LAYOUT_BYTES
from lsp_assist.context.lexicon import IDENTS_BYTES, ROW_TABLES_BYTES
from lsp_assist.context.sources.other_files import OUTLINES_BYTES, SCOPE_NAMES_BYTES, SCOPES_BYTES
from lsp_assist.context.sources.related import VERSIONS_BYTES as WINDOW_ROWS_BYTES
from lsp_assist.context.sources.related import WINDOWS_BYTES
from lsp_assist.governance.redaction import CLEAN_LINES_BYTES, SNIPPET_MEMO_BYTES
from lsp_assist.nextedit.history import HISTORY_BYTES
from lsp_assist.pipeline.cache import MEMORY_BYTES as SUGGESTION_BYTES
from lsp_assist.pipeline.prompt_memo import MEMO_BYTES as PROMPT_MEMO_BYTES
from lsp_assist.pipeline.typing_index import TYPING_BYTES
from lsp_assist.structure.imports import IMPORTS_MEMO_BYTES, LINE_MEMO_BYTES
from lsp_assist.structure.outline import NAME_MEMO_BYTES
from lsp_assist.telemetry.events import EVENTS_BYTES
from lsp_assist.telemetry.stats import WINDOW_BYTES as STATS_BYTES
from tests.fakes.fake_model_server import Script
from tests.fakes.process import FakeModelProcess

BOUNDS = {
    "context.idents": IDENTS_BYTES,
    "context.windows": WINDOWS_BYTES,
    "context.window_rows": WINDOW_ROWS_BYTES,
    "context.similar": RANKER_BYTES,
    "context.layout": LAYOUT_BYTES,
    "context.names": 2 * NAME_MEMO_BYTES,
    "context.imports": IMPORTS_MEMO_BYTES,
    "context.import_rows": LINE_MEMO_BYTES,
    "context.row_names": ROW_TABLES_BYTES,
    "context.scopes": SCOPES_BYTES,
    "context.scope_names": SCOPE_NAMES_BYTES,
    "context.outlines": OUTLINES_BYTES,
    "typing": TYPING_BYTES,
    "prompts": PROMPT_MEMO_BYTES,
    "suggestions": SUGGESTION_BYTES,
    "stats": STATS_BYTES,
    "suggestion_events": EVENTS_BYTES,
    "next_edit_history": HISTORY_BYTES,
    "redacted_snippets": SNIPPET_MEMO_BYTES,
    "redaction_clean_lines": CLEAN_LINES_BYTES,
}
REQUESTS = 600
DOCUMENTS = 12


async def test_a_long_session_keeps_every_memo_within_its_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeModelProcess(quiet=True) as fake:
        fake.set_default(Script(text="    return subtotal * (1 + tax_rate)\n", ttft_ms=1))
        samples = await soak_spread("test", server_cmd(), fake, REQUESTS, 200, DOCUMENTS, seed=2)
    assert [s.requests for s in samples] == [200, 400, 600]
    for s in samples:
        assert set(s.memory) == {*BOUNDS, "total"}
        over = {k: v for k, v in s.memory.items() if k in BOUNDS and v > BOUNDS[k]}
        assert not over, f"over their bound after {s.requests} requests: {over}"
        assert s.memory["total"] == sum(v for k, v in s.memory.items() if k != "total")
    last = samples[-1].memory
    # The session does fill the line memo (12 files read at open, then every edited row):
    # the bound is what holds it, not the length of the session.
    assert last["context.idents"] > IDENTS_BYTES * 0.8
    assert last["typing"] > 0 and last["prompts"] > 0 and last["suggestions"] > 0
    capsys.readouterr()  # the benchmark's report
