"""The documents the scenarios type in, and the model's answer for them.

Every trial gets a module of its own (its number in a comment and in every function name),
so no answer can come from a cache another trial filled. A module is a helper function and
then `stubs` empty functions `checkout_<i>_<j>`: with `body`, each has an indented blank line
(the cursor's place: "fresh position"); without, nothing yet (Enter typed at the end of its
`def` line opens it: "a key").
"""

from __future__ import annotations

from lsp_assist.bench.model import first_line_token, split_tokens

COMPLETION = "return compute_total(items, tax_rate)\n    # more lines follow\n    return None\n"
FIRST_LINE = COMPLETION.split("\n", 1)[0]
NEWLINE_TOKEN = first_line_token(split_tokens(COMPLETION))
TOKENS = len(split_tokens(COMPLETION))
BURST_KEYS = "total = items"  # 12 keys typed at a fresh position (the 13th character unused)
INDENT = "    "
_HEAD = (
    "# module {i}\n"
    "import math\n\n"
    "def compute_total(items, tax_rate):\n"
    "    subtotal = sum(item.price for item in items)\n"
    "    return subtotal * (1 + tax_rate)\n\n"
)
_HEAD_LINES = 7


def module(i: int, stubs: int = 1, body: bool = True) -> str:
    parts = [_HEAD.format(i=i)]
    for j in range(stubs):
        parts.append(f"def checkout_{i}_{j}(items, tax_rate):\n" + (INDENT + "\n" if body else "") + "\n")
    return "".join(parts)


def def_line(j: int, body: bool = True) -> int:
    """The row of stub j's `def` line (its body, when it has one, is the next row)."""
    return _HEAD_LINES + j * (3 if body else 2)


def def_end(i: int, j: int) -> int:
    """The column of the end of stub j's `def` line in module i."""
    return len(f"def checkout_{i}_{j}(items, tax_rate):")
