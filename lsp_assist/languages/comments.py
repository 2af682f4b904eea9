"""Comment syntax of the languages lsp-assist has no grammar for.

Prompts are built for any language (line-based where there is no grammar), and their
cross-file snippets and path headers go in as comments of the file's language. The
languages with a profile carry their own (`LanguageProfile.comment`); the others are
listed here. Unknown languages get C-style `//`.
"""

from __future__ import annotations

_HASH = ("#", "")
_DASH = ("--", "")
OTHER_COMMENTS: dict[str, tuple[str, str]] = {
    **{
        k: _HASH
        for k in (
            "ruby",
            "shellscript",
            "shell",
            "bash",
            "sh",
            "zsh",
            "fish",
            "yaml",
            "toml",
            "perl",
            "r",
            "dockerfile",
            "makefile",
            "powershell",
            "elixir",
            "julia",
            "nim",
            "coffeescript",
            "cmake",
            "nix",
            "terraform",
            "hcl",
            "plaintext",
            "ini",
            "gitignore",
        )
    },
    **{k: _DASH for k in ("lua", "sql", "haskell", "elm", "ada", "vhdl")},
    **{k: (";", "") for k in ("lisp", "clojure", "scheme", "racket", "commonlisp")},
    **{k: ("%", "") for k in ("latex", "tex", "erlang", "matlab", "prolog")},
    **{k: ("<!--", "-->") for k in ("html", "xml", "markdown", "svg", "vue", "svelte")},
    **{k: ("/*", "*/") for k in ("css",)},
    "vb": ("'", ""),
    "vim": ('"', ""),
}
