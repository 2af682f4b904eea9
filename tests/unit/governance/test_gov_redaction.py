"""Redaction catalogue: true positives, false-positive guards, idempotence, cursor split."""

from __future__ import annotations

import pytest

from lsp_assist.domain import PromptContext, Snippet
from lsp_assist.governance import redaction
from lsp_assist.governance.redaction import contains_placeholder, redact, redact_context

GHP = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"  # 36 chars after the prefix
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1y2z3\nAbCdEf==\n-----END RSA PRIVATE KEY-----"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

POSITIVES = [
    ('key_id = "AKIAIOSFODNN7EXAMPLE"', "AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("ASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A", "aws-access-key"),
    (
        'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws-secret-key",
    ),
    (f"token = '{GHP}'", GHP, "github-token"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "github_pat_11ABCDEFG0123456789",
        "github-token",
    ),
    ("glpat-abcdefghij0123456789", "glpat-abcdefghij0123456789", "gitlab-token"),
    ("SLACK = 'xoxb-123456789012-abcdefghijkl'", "xoxb-123456789012-abcdefghijkl", "slack-token"),
    ("stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "google-api-key"),
    ("k = 'sk-proj-AbC123dEf456GhI789jKl012MnO345'", "sk-proj-AbC123dEf456GhI789jKl012MnO345", "openai-key"),
    ("k = 'sk-ant-api03-AbC123dEf456GhI789jKl012'", "sk-ant-api03-AbC123dEf456GhI789jKl012", "anthropic-key"),
    (f"auth_header = 'Bearer {JWT}'", JWT, "jwt"),
    (PEM + "\nx = 1", "MIIEowIBAAKCAQEAx1y2z3", "private-key"),
    ("url = 'postgres://admin:pa55w0rd!x@db.example.com/app'", "pa55w0rd!x", "url-password"),
    ('password = "S3cr3t!Passw0rd#2024"', "S3cr3t!Passw0rd#2024", "secret"),
    ('{"client_secret": "q8Zr2LmW9xTp4VnB"}', "q8Zr2LmW9xTp4VnB", "secret"),
    ("API_KEY=abcDEF123456ghiJKL789", "abcDEF123456ghiJKL789", "secret"),
    ('self.api_key: str = "Zx9Lq2Wm8Rt4Yp6Vn3Kb"', "Zx9Lq2Wm8Rt4Yp6Vn3Kb", "secret"),
    # The keyword qualified by a value-ish word (found by the end-to-end secrets test).
    ('secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"', "wJalrXUtnFEMI/K7MDENG", "secret"),
    ('TOKEN_VALUE = "q8Zr2LmW9xTp4VnB"', "q8Zr2LmW9xTp4VnB", "secret"),
    # A literal assigned to a password name is a password, however short or guessable.
    ('password = "hunter2"', "hunter2", "secret"),
    # Issue 13: an Azure storage connection string and a hex key assigned to a *_KEY name.
    (
        "AccountName=acme;AccountKey=" + "Zm9vYmFy" * 11 + ";EndpointSuffix=core.windows.net",
        "Zm9vYmFy" * 11,
        "azure-key",
    ),
    (
        'ENCRYPTION_KEY = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
        "9f86d081884c",
        "secret",
    ),
    ("SIGNING_KEY=3d5dcafbcc2bf57ae1041f3e3855c80d", "3d5dcafbcc2bf57ae1041f3e3855c80d", "secret"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), POSITIVES)
def test_true_positives(text: str, secret: str, kind: str) -> None:
    out, n = redact(text)
    assert n >= 1
    assert secret not in out
    assert f"<redacted:{kind}>" in out


NEGATIVES = [
    "def get_token(self) -> str:\n    return self._token",
    'password = os.environ["DB_PASSWORD"]',
    'token_type = "bearer"',
    'sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
    'commit = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"',
    'name = "sk-learn-compatible-estimator-name"',
    "private_key_path = None  # read from disk",
    'author = "Jane Doe"',
    "AKIA_PREFIX_LENGTH = 4",
    "url = 'https://example.com:8080/path'",
    'password = "${DB_PASSWORD}"',
    'api_key = "your-api-key-here"',
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_false_positive_guards(text: str) -> None:
    assert redact(text) == (text, 0)


def test_keeps_code_shape_and_is_idempotent() -> None:
    text = f'cfg = {{\n  "key": "AKIAIOSFODNN7EXAMPLE",\n  "gh": "{GHP}",\n}}\n{PEM}\nprint(1)\n'
    once, n = redact(text)
    assert n == 3
    assert '"key": "<redacted:aws-access-key>",' in once
    assert once.endswith("print(1)\n")
    assert redact(once) == (once, 0)
    assert contains_placeholder(once)


def test_truncated_private_key_block_is_redacted_to_the_end() -> None:
    out, n = redact("x = 1\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA")
    assert n == 1 and "b3BlbnNz" not in out


def test_context_secret_split_by_cursor_and_snippets() -> None:
    ctx = PromptContext(
        language="python",
        path="a.py",
        prefix='key = "AKIAIOSFOD',
        suffix='NN7EXAMPLE"\nprint(1)\n',
        snippets=(Snippet(path="b.py", text=f"t = '{GHP}'"),),
    )
    out, n = redact_context(ctx)
    assert n == 2
    joined = out.prefix + out.suffix + "".join(s.text for s in out.snippets)
    assert "AKIAIOSFOD" not in joined and "NN7EXAMPLE" not in joined and GHP not in joined
    assert out.suffix.startswith('"\nprint(1)')


def test_clean_context_is_returned_unchanged() -> None:
    ctx = PromptContext(language="python", path="a.py", prefix="def f(x):\n    return ", suffix="\n")
    out, n = redact_context(ctx)
    assert n == 0 and out is ctx


def test_a_remembered_snippet_is_redacted_every_time_and_the_memo_stays_bounded() -> None:
    secret_snip = Snippet(path="b.py", text=f"t = '{GHP}'")
    ctx = PromptContext(language="python", path="a.py", prefix="x = ", suffix="\n", snippets=(secret_snip,))
    first, n1 = redact_context(ctx)
    again, n2 = redact_context(ctx)  # the second time from the memo
    assert n1 == n2 == 1
    assert GHP not in again.snippets[0].text and again.snippets[0].text == first.snippets[0].text
    big = "x = 1\n" * 2000  # ~12 KB a text: a few hundred overflow the budget
    for i in range(redaction.SNIPPET_MEMO_BYTES // len(big) * 2):
        redact_context(
            PromptContext(
                language="python",
                path="a.py",
                prefix="x = ",
                suffix="\n",
                snippets=(Snippet(path="c.py", text=f"{big}def f{i}(): pass"),),
            )
        )
    assert 0 < redaction.snippet_memo_bytes() <= redaction.SNIPPET_MEMO_BYTES
    # Evicted, then found again: still redacted.
    out, n = redact_context(ctx)
    assert n == 1 and GHP not in out.snippets[0].text


# -- the clean-lines memo: a prompt whose every line is known clean is not scanned ---------


def _corpus_lines() -> list[str]:
    from tests.data.secrets_corpus import BENIGN, PLANTED

    texts = [c.text for c in PLANTED + BENIGN] + [p[0] for p in POSITIVES] + [PEM, JWT]
    return [ln for t in texts for ln in t.split("\n")]


def test_every_rule_matches_within_a_line_so_clean_lines_make_a_clean_text() -> None:
    """What the memo rests on: an ASCII text has something to redact exactly when one of
    its lines, alone, has (random joins of the corpus' lines, planted secrets and look-alikes)."""
    import random

    rng = random.Random(7)
    lines = [ln for ln in _corpus_lines() if ln.isascii()]
    checked = 0
    for _ in range(400):
        joined = "\n".join(rng.sample(lines, rng.randint(1, 12)))
        if len(joined) < 8:
            continue
        whole = bool(redaction._DEFAULT.find(joined))
        per_line = any(redaction._DEFAULT.line_spans(ln) for ln in joined.split("\n"))
        assert whole == per_line, joined
        checked += 1
    assert checked > 300


def test_the_clean_lines_memo_answers_as_a_scan_would() -> None:
    """Random prompts from the corpus' lines and clean code, through the memo: the same
    spans as a scan of each; prompts whose lines were all seen are answered from it."""
    import random

    rng = random.Random(11)
    corpus = _corpus_lines()
    code = [f"    value_{i} = compute(item_{i}, key={i})" for i in range(40)]
    memo = redaction.CleanLines()
    for _ in range(600):
        pool = code if rng.random() < 0.6 else corpus + code
        joined = "\n".join(rng.choice(pool) for _ in range(rng.randint(1, 20)))
        assert memo.spans(redaction._DEFAULT, joined) == redaction._DEFAULT.find(joined), joined
    assert memo.hits > 100


def test_a_prompt_from_known_lines_skips_the_scan_and_a_new_secret_line_is_found() -> None:
    base = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(30))
    redaction.learn_clean_text(base)
    before = redaction._clean_lines.hits
    ctx = PromptContext(language="python", path="a.py", prefix=base[:300], suffix=base[300:900])
    out, n = redact_context(ctx)
    assert n == 0 and out is ctx and redaction._clean_lines.hits == before + 1
    # An edit brings one new line: scanned alone, and its secret is found as a scan finds it.
    edited = base[:300] + f"token = '{GHP}'\n"
    out, n = redact_context(
        PromptContext(language="python", path="a.py", prefix=edited, suffix=base[300:900])
    )
    assert n == 1 and GHP not in out.prefix
    assert out.prefix == redact(edited + base[300:900])[0][: len(out.prefix)]
    # A whole text with a secret is not learned: its clean lines are still scanned with it.
    redaction.learn_clean_text(f"a = 1\nk = '{GHP}'\n")
    assert "k = '" + GHP + "'" not in redaction._clean_lines._lines


def test_the_clean_lines_memo_stays_within_its_bound() -> None:
    memo = redaction.CleanLines(max_bytes=20_000)
    for i in range(2_000):
        memo.spans(redaction._DEFAULT, f"x_{i} = {i}\ny_{i} = {i}")
    assert 0 < memo.nbytes <= 20_000
    assert memo.spans(redaction._DEFAULT, "x_1999 = 1999\ny_1999 = 1999") == []
