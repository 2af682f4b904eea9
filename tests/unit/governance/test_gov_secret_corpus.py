"""The planted-secret corpus: every secret redacted, every look-alike left alone."""

from __future__ import annotations

import pytest

from lsp_assist.governance.redaction import contains_placeholder, redact
from tests.data.secrets_corpus import BENIGN, PLANTED, Case


@pytest.mark.parametrize("case", PLANTED, ids=lambda c: c.name)
def test_planted_secret_is_redacted(case: Case) -> None:
    assert case.secrets, "a planted case must name what may not survive"
    out, n = redact(case.text)
    assert n >= 1 and contains_placeholder(out)
    for secret in case.secrets:
        assert secret not in out
    assert redact(out) == (out, 0)  # idempotent: placeholders never match a rule


@pytest.mark.parametrize("case", BENIGN, ids=lambda c: c.name)
def test_look_alike_survives(case: Case) -> None:
    assert redact(case.text) == (case.text, 0)


def test_the_whole_corpus_as_one_prompt() -> None:
    """Rules see one prompt, not one case: neighbours must not hide or create secrets."""
    text = "\n".join(c.text for c in [*BENIGN, *PLANTED])
    out, _ = redact(text)
    for case in PLANTED:
        for secret in case.secrets:
            assert secret not in out, case.name
    for case in BENIGN:
        assert case.text in out, case.name
