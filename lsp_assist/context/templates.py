"""Prompt templates: how a `PromptContext` becomes the text a model is sent.

One fill-in-the-middle (FIM) template per model family, chosen by the tier's
`fim_template` or, with "auto", by the model name:

- ``qwen``       Qwen2.5-Coder: ``<|fim_prefix|>…<|fim_suffix|>…<|fim_middle|>``; snippets as
                 repo-level ``<|file_sep|>path\\ntext`` files before the current one.
- ``starcoder``  StarCoder / StarCoder2: ``<fim_prefix>…<fim_suffix>…<fim_middle>``, ``<file_sep>``.
- ``codellama``  CodeLlama: ``<PRE> … <SUF>… <MID>``.
- ``deepseek``   DeepSeek-Coder: ``<｜fim▁begin｜>…<｜fim▁hole｜>…<｜fim▁end｜>``.
- ``codestral``  Codestral / Mistral native FIM: sent as ``prompt`` + ``suffix`` API fields.
- ``plain``      any server that does FIM itself from ``prompt`` + ``suffix`` fields.
- ``none``       prefix only, for models without FIM: a path comment, the snippets, the prefix.

Cross-file snippets go in as comments headed by their path (comment syntax per language)
in the order given, which the context builder makes stable-first so that the server's
prompt cache is reused. `render_chat` builds the instruction messages for chat models.
Each template also carries the stop strings that end its answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsp_assist.domain import PromptContext, Snippet
from lsp_assist.errors import ConfigError
from lsp_assist.languages import comment_syntax

TEMPLATES = ("qwen", "starcoder", "codellama", "deepseek", "codestral", "plain", "none")
FIM_TEMPLATES = ("qwen", "starcoder", "codellama", "deepseek")


@dataclass(frozen=True)
class RenderedPrompt:
    """The request fields: `suffix` is None when the suffix is inside `prompt` (or unused)."""

    prompt: str
    suffix: str | None
    stop: tuple[str, ...]


# Stop strings per family: end-of-text tokens plus the markers a model emits when it
# starts writing another file or another FIM block instead of ending the middle.
STOPS: dict[str, tuple[str, ...]] = {
    "qwen": (
        "<|endoftext|>",
        "<|file_sep|>",
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|fim_middle|>",
        "<|fim_pad|>",
        "<|repo_name|>",
        "<|im_end|>",
    ),
    "starcoder": (
        "<|endoftext|>",
        "<file_sep>",
        "<fim_prefix>",
        "<fim_suffix>",
        "<fim_middle>",
        "<repo_name>",
    ),
    "codellama": ("<EOT>", "</s>", "<PRE>", "<SUF>", "<MID>"),
    "deepseek": ("<｜end▁of▁sentence｜>", "<|EOT|>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
    "codestral": (),
    "plain": (),
    "none": ("<|endoftext|>", "<end_of_turn>", "<|im_end|>"),
}

# The control strings each FIM template writes into a prompt. A tokenizer that sees the prompt
# as one string (the in-process engine) reads these as their special tokens and the text
# between them as plain text; read as text, "<|fim_prefix|>" is a dozen ordinary tokens and
# the model never learns where the hole is. (CodeLlama's space-prefixed markers stay text.)
MARKERS: dict[str, tuple[str, ...]] = {
    "qwen": ("<|repo_name|>", "<|file_sep|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
    "starcoder": ("<repo_name>", "<file_sep>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
    "deepseek": ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
}

# Model-name substrings (lower case) -> template, checked in order.
_AUTO: tuple[tuple[tuple[str, ...], str], ...] = (
    (("qwen",), "qwen"),
    (("starcoder", "stable-code", "starchat"), "starcoder"),
    (("codellama", "code-llama", "code_llama"), "codellama"),
    (("deepseek",), "deepseek"),
    (("codestral",), "codestral"),
)


def is_fim_model(model: str) -> bool:
    """True when the model name says it was trained for FIM (for local GGUFs)."""
    name = model.lower()
    if "qwen" in name and "coder" not in name:
        return False  # general Qwen chat models have no FIM tokens
    return any(any(k in name for k in keys) for keys, t in _AUTO if t in FIM_TEMPLATES)


def resolve_template(template: str, model: str, default: str = "plain") -> str:
    """The concrete template name. "auto" picks by model name, else `default`."""
    t = (template or "auto").lower()
    if t != "auto":
        if t not in TEMPLATES:
            raise ConfigError(
                f"unknown fim_template {template!r}: expected auto or one of {', '.join(TEMPLATES)}"
            )
        return t
    name = model.lower()
    if "qwen" in name and "coder" not in name:
        return default
    for keys, family in _AUTO:
        if any(k in name for k in keys):
            return family
    return default


# -- comments ---------------------------------------------------------------------------------


def comment_lines(text: str, language: str) -> str:
    """`text` turned into comment lines, each ending with a newline."""
    start, end = comment_syntax(language)
    if end:
        # Keep a block-comment closer inside the text from ending our comment early.
        text = text.replace(end, end[:-1] + " " + end[-1])
    out = []
    for line in text.splitlines() or [""]:
        body = f"{start} {line}".rstrip() if line else start
        out.append(f"{body} {end}\n" if end else f"{body}\n")
    return "".join(out)


def snippets_as_comments(snippets: tuple[Snippet, ...], language: str) -> str:
    """Each snippet as a commented block headed by its path, in the order given."""
    parts = []
    for snip in snippets:
        body = snip.text if snip.text.endswith("\n") else snip.text + "\n"
        parts.append(comment_lines(f"Path: {snip.path}\n{body}", language))
    return "".join(parts)


def _header(ctx: PromptContext) -> str:
    """Snippets, then the current path, as comments: the prefix-only / plain FIM preamble."""
    return snippets_as_comments(ctx.snippets, ctx.language) + comment_lines(f"Path: {ctx.path}", ctx.language)


# -- completion templates ---------------------------------------------------------------------


def render_completion(ctx: PromptContext, template: str, model: str) -> RenderedPrompt:
    """Render `ctx` for a completions API with `template` ("auto" resolves by `model`)."""
    t = resolve_template(template, model)
    stop = STOPS[t]
    if t == "qwen":
        if ctx.snippets:
            files = "".join(f"<|file_sep|>{s.path}\n{s.text}\n" for s in ctx.snippets)
            head = f"<|repo_name|>workspace\n{files}<|file_sep|>{ctx.path}\n"
        else:
            head = ""
        return RenderedPrompt(
            f"{head}<|fim_prefix|>{ctx.prefix}<|fim_suffix|>{ctx.suffix}<|fim_middle|>", None, stop
        )
    if t == "starcoder":
        if ctx.snippets:
            files = "".join(f"<file_sep>{s.path}\n{s.text}\n" for s in ctx.snippets)
            head = f"<repo_name>workspace{files}<file_sep>{ctx.path}\n"
        else:
            head = ""
        return RenderedPrompt(
            f"{head}<fim_prefix>{ctx.prefix}<fim_suffix>{ctx.suffix}<fim_middle>", None, stop
        )
    if t == "codellama":
        prompt = f"<PRE> {_header(ctx) if ctx.snippets else ''}{ctx.prefix} <SUF>{ctx.suffix} <MID>"
        return RenderedPrompt(prompt, None, stop)
    if t == "deepseek":
        head = _header(ctx) if ctx.snippets else ""
        return RenderedPrompt(
            f"<｜fim▁begin｜>{head}{ctx.prefix}<｜fim▁hole｜>{ctx.suffix}<｜fim▁end｜>", None, stop
        )
    if t in ("codestral", "plain"):
        head = _header(ctx) if ctx.snippets else ""
        return RenderedPrompt(head + ctx.prefix, ctx.suffix, stop)
    # "none": prefix only; the suffix cannot be given to a model without FIM tokens.
    return RenderedPrompt(_header(ctx) + ctx.prefix, None, stop)


# -- chat template ----------------------------------------------------------------------------

CURSOR = "<CURSOR>"

CHAT_SYSTEM = (
    "You are a code completion engine. You are given a file with a <CURSOR> marker. "
    "Reply with ONLY the code to insert at <CURSOR>: no explanations, no markdown fences, "
    "do not repeat code that is already before or after the cursor."
)


def render_chat(ctx: PromptContext) -> list[dict[str, str]]:
    """The system and user messages asking a chat model for the missing code."""
    parts = []
    for snip in ctx.snippets:
        parts.append(f"Context from {snip.path}:\n```\n{snip.text.rstrip()}\n```\n\n")
    scope = (
        "Complete the current line only."
        if ctx.mode == "single"
        else "Complete the code; a few lines at most."
    )
    parts.append(
        f"File {ctx.path} ({ctx.language}):\n```{ctx.language}\n{ctx.prefix}{CURSOR}{ctx.suffix}\n```\n\n"
        f"{scope} Output only the text that replaces {CURSOR}."
    )
    return [{"role": "system", "content": CHAT_SYSTEM}, {"role": "user", "content": "".join(parts)}]


__all__ = [
    "CHAT_SYSTEM",
    "CURSOR",
    "FIM_TEMPLATES",
    "STOPS",
    "TEMPLATES",
    "RenderedPrompt",
    "comment_lines",
    "comment_syntax",  # re-exported from lsp_assist.languages
    "is_fim_model",
    "render_chat",
    "render_completion",
    "resolve_template",
    "snippets_as_comments",
]
