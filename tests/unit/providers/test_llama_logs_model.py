"""llama.cpp's own log lines stay out of stderr (the editor's log, the demo's output) and go
to the server's log at debug level (`providers/llama_logs.py`). Marked `model`: the real
embedded model is loaded, and each load logs (its SWA cache notice among them)."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import pytest

from lsp_assist.config.schema import LocalConfig
from tests.unit.providers.conftest import loaded_gemma

pytestmark = [
    pytest.mark.model,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None, reason="the 'local' extra is not installed"
    ),
]


async def test_a_model_load_prints_nothing_of_llama_cpp_on_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="lsp_assist.llama_cpp")
    p = await loaded_gemma(tmp_path, LocalConfig(refine_model=""))
    try:
        err = capfd.readouterr().err
        assert "llama_" not in err and "decode:" not in err, err[-2000:]
        lines = [r.getMessage() for r in caplog.records if r.name == "lsp_assist.llama_cpp"]
        assert lines and all(line.startswith("llama.cpp: ") for line in lines)
        assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "lsp_assist.llama_cpp")
    finally:
        await p.aclose()
