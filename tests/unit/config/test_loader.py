"""Configuration: precedence of the layers, validation with dotted keys, secrets refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_assist.config.loader import ConfigLayers, config_from_dict, load_config, unwrap_client_settings


def test_precedence_defaults_user_workspace_init_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[tiers.fast]\nmodel = "user"\nmax_tokens = 10\n[cache]\ndir = "/u"\n', encoding="utf-8")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".lsp-assist.toml").write_text('[tiers.fast]\nmodel = "workspace"\n', encoding="utf-8")
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(user))
    layers = ConfigLayers(init_options={"tiers": {"fast": {"temperature": 0.5}}})
    layers.load_files([ws])
    cfg = layers.build().config
    assert cfg.tiers["fast"].model == "workspace"  # workspace over user
    assert cfg.tiers["fast"].max_tokens == 10  # user over defaults
    assert cfg.tiers["fast"].temperature == 0.5  # initializationOptions
    assert cfg.cache.dir == "/u"
    layers.client = unwrap_client_settings({"lspAssist": {"tiers": {"fast": {"model": "client"}}}})
    assert layers.build().config.tiers["fast"].model == "client"  # didChangeConfiguration wins


def test_errors_name_the_key_and_keep_defaults() -> None:
    cfg, errors = config_from_dict(
        {
            "tiers": {"fast": {"max_tokens": "many", "max_tokenz": 3, "api": "rpc"}, "turbo": {}},
            "cache": {"memory_entries": 5.5},
            "nonsense": 1,
        }
    )
    text = "\n".join(errors)
    for key in (
        "tiers.fast.max_tokens",
        "tiers.fast.max_tokenz",
        "tiers.fast.api",
        "tiers.turbo",
        "cache.memory_entries",
        "nonsense",
    ):
        assert key in text, key
    assert cfg.tiers["fast"].max_tokens == 48 and cfg.tiers["fast"].api == "completions"


def test_secrets_are_never_read_from_settings() -> None:
    cfg, errors = config_from_dict({"tiers": {"fast": {"api_key": "sk-abc", "api_key_env": "MY_KEY"}}})
    assert any("api_key" in e and "environment variable" in e for e in errors)
    assert "sk-abc" not in "\n".join(errors)
    assert cfg.tiers["fast"].api_key_env == "MY_KEY"


def test_a_broken_user_file_is_reported_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[tiers.fast\nmodel = ", encoding="utf-8")
    monkeypatch.setenv("LSP_ASSIST_CONFIG", str(bad))
    result = load_config()
    assert any("bad.toml" in e for e in result.errors)
    assert result.config.tiers["fast"].provider == "auto"
