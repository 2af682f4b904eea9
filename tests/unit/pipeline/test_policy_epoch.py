"""The policy epoch: memories of content answer to the data boundary at read time, and the
runtime advances the epoch exactly when the boundary may admit less."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_assist.config.loader import ConfigLayers
from lsp_assist.documents.store import DocumentStore
from lsp_assist.domain import Cursor
from lsp_assist.governance.epoch import PolicyEpoch
from lsp_assist.pipeline.answers import AnswerStore
from lsp_assist.pipeline.cache import SuggestionCache
from lsp_assist.pipeline.request import Target
from lsp_assist.pipeline.typing_index import TypingIndex
from lsp_assist.server import Runtime

TEXT = "def add(a, b):\n    \n"
OFF = TEXT.index("    \n") + 4


def test_typing_memory_finds_only_what_the_current_epoch_stored() -> None:
    idx = TypingIndex()
    idx.remember("u", TEXT, OFF, "return a + b", "fast", epoch=0)
    assert idx.lookup("u", TEXT, OFF, epoch=0) is not None
    assert idx.lookup("u", TEXT, OFF, epoch=1) is None  # the policy changed: dropped
    idx.remember("u", TEXT, OFF, "return a + b", "fast", epoch=0)  # a stream that ended late
    assert idx.lookup("u", TEXT, OFF, epoch=1) is None and idx.nbytes == 0
    idx.remember("u", TEXT, OFF, "return a - b", "fast", epoch=1)
    hit = idx.lookup("u", TEXT, OFF, epoch=1)
    assert hit is not None and hit.text == "return a - b"


def test_an_answer_read_under_an_older_epoch_is_not_current() -> None:
    store = DocumentStore()
    store.open("file:///w/a.py", "python", 1, TEXT, "/w/a.py")
    snap = store.snapshot("file:///w/a.py")
    assert snap is not None
    epoch = PolicyEpoch()
    answers = AnswerStore(SuggestionCache(None), TypingIndex(), store, epoch)
    target = Target(snap, OFF, Cursor(1, 4), epoch.value)
    answers.remember(target, "return a + b", "fast")
    assert answers.current(target) and answers.typing_through(target) is not None
    epoch.advance()
    assert not answers.current(target) and not answers.admits(target)
    assert answers.typing_through(target) is None
    fresh = Target(snap, OFF, Cursor(1, 4), epoch.value)
    assert answers.typing_through(fresh) is None  # nothing the old boundary admitted is left


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("LSP_ASSIST_POLICY", str(tmp_path / "no-policy.toml"))
    offline: dict[str, Any] = {"provider": "offline"}
    options = {
        "cache": {"dir": str(tmp_path / "cache")},
        "tiers": {"fast": offline, "quality": offline, "backup": offline},
    }
    ws = tmp_path / "ws"
    ws.mkdir()
    rt = Runtime(ConfigLayers(init_options=options), [ws])
    rt.build()
    return rt


def test_a_rebuild_advances_the_epoch_only_when_the_boundary_changes(runtime: Runtime) -> None:
    start = runtime.policy_epoch.value
    runtime.layers.client = {"completion": {"debounce_min_ms": 5}}
    runtime.build()
    assert runtime.policy_epoch.value == start  # not a boundary change: the memories stay
    runtime.layers.client = {"governance": {"exclude": ["notes/**"]}}
    runtime.build()
    assert runtime.policy_epoch.value == start + 1


def test_an_ignore_file_edited_on_disk_takes_effect_at_once(runtime: Runtime) -> None:
    ws = runtime.workspace_roots[0]
    path = str(ws / "notes.py")
    gov = runtime.governance
    assert gov is not None and gov.excluded(path) is None  # the verdict is now cached (2 s)
    start = runtime.policy_epoch.value
    (ws / ".lsp-assist-ignore").write_text("notes.py\n")
    assert runtime.note_policy_files([str(ws / ".lsp-assist-ignore")]) is False
    assert gov.excluded(path) is not None and runtime.policy_epoch.value == start + 1
    assert runtime.note_policy_files([str(ws / "other.py")]) is False
    assert runtime.policy_epoch.value == start + 1  # an ordinary file: nothing changes
    # A folder's settings file: the caller rebuilds.
    assert runtime.note_policy_files([str(ws / ".lsp-assist.toml")]) is True
