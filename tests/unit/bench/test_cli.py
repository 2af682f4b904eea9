"""`lsp-assist bench`'s arguments: the defaults, the servers chosen, a server given by its
command and the settings that follow it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from lsp_assist.bench.recipes import custom_recipe
from lsp_assist.bench.run import Settings
from lsp_assist.cli.bench_cmd import recipes, settings
from lsp_assist.cli.main import build_parser


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["bench", *argv])


def test_the_defaults_are_the_settings_defaults() -> None:
    assert settings(parse()) == Settings()


def test_a_server_given_by_its_command_takes_the_settings_after_it(tmp_path: Path) -> None:
    args = parse(
        "--servers",
        "lsp-assist",
        "--server",
        "a=my-ls --url {base_url}",
        "--api",
        "tabby",
        "--request",
        "completion",
        "--server",
        "b=other --stdio",
        "--init-options",
        '{"url": "{origin}"}',
    )
    chosen, skipped = recipes(args)
    assert [r.name for r in chosen] == ["lsp-assist", "a", "b"] and skipped == []
    a, b = chosen[1], chosen[2]
    assert (a.api, a.method) == ("tabby", "textDocument/completion")
    assert (b.api, b.method) == ("openai", "textDocument/inlineCompletion")
    cmd, env, init = a.build("http://127.0.0.1:9/v1", tmp_path)
    assert cmd == ["my-ls", "--url", "http://127.0.0.1:9/v1"] and init is None
    assert env["HOME"] == str(tmp_path) and env["LSP_ASSIST_BENCH_ORIGIN"] == "http://127.0.0.1:9"
    assert b.build("http://127.0.0.1:9/v1", tmp_path)[2] == {"url": "http://127.0.0.1:9"}


def test_a_setting_without_a_server_before_it_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("--api", "tabby")
    assert "--server NAME=COMMAND first" in capsys.readouterr().err


def test_bad_specs_are_refused() -> None:
    for spec, kwargs in (("no-command", {}), ("a=x", {"api": "grpc"}), ("a=x", {"init": "{not json"})):
        with pytest.raises(ValueError):
            custom_recipe(spec, **kwargs)
    with pytest.raises(ValueError):
        recipes(parse("--servers", "emacs"))


def test_lsp_assist_runs_on_this_interpreter_with_its_fast_tier_on_the_model(tmp_path: Path) -> None:
    (recipe,), _ = recipes(parse("--servers", "lsp-assist"))
    cmd, env, _ = recipe.build("http://127.0.0.1:9/v1", tmp_path)
    assert cmd[:3] == [sys.executable, "-m", "lsp_assist"]
    config = Path(env["LSP_ASSIST_CONFIG"]).read_text()
    assert 'base_url = "http://127.0.0.1:9/v1"' in config and "debounce_max_ms = 0" in config
    assert recipe.background({"max_tokens": 31}) and not recipe.background({"max_tokens": 48})
