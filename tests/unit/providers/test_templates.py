"""FIM and chat templates per model family."""

from __future__ import annotations

import pytest

from lsp_assist.context.templates import (
    comment_lines,
    is_fim_model,
    render_chat,
    render_completion,
    resolve_template,
)
from lsp_assist.domain import PromptContext, Snippet
from lsp_assist.errors import ConfigError

CTX = PromptContext(language="python", path="pkg/a.py", prefix="def f(x):\n    ", suffix="\n\nprint(f(1))\n")
SNIPS = (Snippet("pkg/util.py", "def helper():\n    return 1"), Snippet("pkg/b.py", "X = 2\n"))
CTX_S = PromptContext(
    language="python", path="pkg/a.py", prefix=CTX.prefix, suffix=CTX.suffix, snippets=SNIPS
)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("Qwen2.5-Coder-1.5B", "qwen"),
        ("qwen2.5-coder:7b-base", "qwen"),
        ("bigcode/starcoder2-3b", "starcoder"),
        ("codellama:7b-code", "codellama"),
        ("deepseek-coder-6.7b-base", "deepseek"),
        ("codestral-latest", "codestral"),
        ("gpt-3.5-turbo-instruct", "plain"),
        ("Qwen2.5-7B-Instruct", "plain"),
    ],
)
def test_auto_by_model_name(model: str, family: str) -> None:
    assert resolve_template("auto", model) == family


def test_explicit_and_unknown_template() -> None:
    assert resolve_template("starcoder", "qwen2.5-coder") == "starcoder"
    assert resolve_template("auto", "gemma-3-270m", default="none") == "none"
    with pytest.raises(ConfigError, match="fim_template"):
        resolve_template("bogus", "m")


def test_qwen() -> None:
    r = render_completion(CTX, "qwen", "m")
    assert r.prompt == "<|fim_prefix|>def f(x):\n    <|fim_suffix|>\n\nprint(f(1))\n<|fim_middle|>"
    assert r.suffix is None and "<|endoftext|>" in r.stop and "<|file_sep|>" in r.stop
    rs = render_completion(CTX_S, "qwen", "m")
    assert rs.prompt.startswith(
        "<|repo_name|>workspace\n<|file_sep|>pkg/util.py\ndef helper():\n    return 1\n"
        "<|file_sep|>pkg/b.py\nX = 2\n\n"
        "<|file_sep|>pkg/a.py\n<|fim_prefix|>"
    )


def test_starcoder() -> None:
    r = render_completion(CTX, "starcoder", "m")
    assert r.prompt == "<fim_prefix>def f(x):\n    <fim_suffix>\n\nprint(f(1))\n<fim_middle>"
    assert "<file_sep>" in r.stop
    assert "<file_sep>pkg/util.py\n" in render_completion(CTX_S, "starcoder", "m").prompt


def test_codellama_and_deepseek() -> None:
    assert (
        render_completion(CTX, "codellama", "m").prompt
        == "<PRE> def f(x):\n     <SUF>\n\nprint(f(1))\n <MID>"
    )
    assert "<EOT>" in render_completion(CTX, "codellama", "m").stop
    d = render_completion(CTX, "deepseek", "m")
    assert d.prompt == "<｜fim▁begin｜>def f(x):\n    <｜fim▁hole｜>\n\nprint(f(1))\n<｜fim▁end｜>"


def test_plain_and_codestral_use_api_fields() -> None:
    for t in ("plain", "codestral"):
        r = render_completion(CTX, t, "m")
        assert r.prompt == CTX.prefix and r.suffix == CTX.suffix
    rs = render_completion(CTX_S, "plain", "m")
    assert rs.prompt == (
        "# Path: pkg/util.py\n# def helper():\n#     return 1\n# Path: pkg/b.py\n# X = 2\n# Path: pkg/a.py\n"
        + CTX.prefix
    )


def test_prefix_only_has_path_snippets_then_prefix() -> None:
    r = render_completion(CTX_S, "none", "gemma")
    assert r.suffix is None
    assert r.prompt.index("pkg/util.py") < r.prompt.index("pkg/b.py") < r.prompt.index("# Path: pkg/a.py")
    assert r.prompt.endswith(CTX.prefix) and "print(f(1))" not in r.prompt


def test_comment_syntax_per_language() -> None:
    assert comment_lines("a\nb", "typescript") == "// a\n// b\n"
    assert comment_lines("a", "lua") == "-- a\n"
    assert comment_lines("x --> y", "html") == "<!-- x -- > y -->\n"
    assert comment_lines("", "python") == "#\n"


def test_is_fim_model() -> None:
    assert is_fim_model("qwen2.5-coder-0.5b-q8_0.gguf") and is_fim_model("starcoder2-3b.gguf")
    assert not is_fim_model("gemma-3-270m-q4_k_m.gguf") and not is_fim_model(
        "SmolLM2-135M-Instruct.Q4_1.gguf"
    )
    assert not is_fim_model("qwen2.5-7b-instruct.gguf")


def test_chat_messages() -> None:
    msgs = render_chat(CTX_S)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "ONLY" in msgs[0]["content"] and "markdown" in msgs[0]["content"]
    user = msgs[1]["content"]
    assert "def f(x):\n    <CURSOR>\n\nprint(f(1))" in user
    assert user.index("pkg/util.py") < user.index("pkg/b.py") < user.index("File pkg/a.py")
    assert "current line" in user
    assert render_chat(CTX_S) == msgs  # deterministic
