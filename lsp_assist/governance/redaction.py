"""Secret redaction for every prompt before it leaves the machine.

`redact(text) -> (text, count)` replaces key-like strings with a typed placeholder that
keeps the code's shape (`key = "<redacted:aws-access-key>"`), so the model still sees an
assignment. Rules follow gitleaks / detect-secrets:

- known formats: AWS, GitHub, GitLab, Slack, Stripe, Google, OpenAI, Anthropic, Hugging
  Face, npm, PyPI, SendGrid, Twilio, Mailchimp, Shopify, DigitalOcean, Discord, Telegram,
  Azure (connection-string `AccountKey=`/`SharedAccessKey=`, SAS `sig=`, AD client
  secrets), JWTs, private key blocks;
- credentials in URLs and DSNs (`scheme://user:pass@`, `user:pass@tcp(...)`) and HTTP
  `Authorization: Bearer/Basic` values;
- the secret half of a key pair on the key id's line (AWS, Twilio), passed positionally;
- assignments (`=`, `:`, `:=`, `=>`; quoted or bare, so Python, JS/TS, Go, Java, YAML,
  .env, JSON, INI/TOML and properties alike) to a password name (any literal with a digit
  or symbol), a secret name (`secret`, `token`, `api_key`, `auth`... with a random value)
  or any name ending in `key` whose value looks like a key (hex, base64, UUID).
  Placeholders (`${VAR}`, `{{ tpl }}`, `<your-key>`, `changeme`) and references
  (`settings.DB_PASSWORD`, `os.environ[...]`) are left alone.

Measured by benchmarks/secrets_corpus.py on tests/data/secrets_corpus.py (91 planted
secrets in nine syntaxes; 45 look-alikes: lockfile hashes, UUIDs, base64 data, git SHAs,
public keys, identifiers, placeholders) and on 6 MB of real code: recall 100%, 0 of 45
look-alikes touched, and in the real code 4 redactions, all credential-shaped examples
(URL passwords in httpx's docs, planted test strings). Yelp's detect-secrets with every
plugin on the same input: 54% recall and 9 look-alikes flagged scanning as it scans files
(a line like `x = f(...)` is skipped whole, so `boto3.client(..., aws_secret_access_key=
"...")` passes), 299 lockfile integrity hashes flagged in the real code; 100% recall but
44 of 45 look-alikes flagged with its ad-hoc `scan_line` (every word is a candidate); 28
and 61 ms per 10 KB prompt against 0.35 ms here. So these rules are kept alone:
detect-secrets adds no secret they miss, only false positives and latency (it stays a
test dependency, the benchmark's baseline). It also keeps process-global settings that it
mutates per `scan_line` call.

Speed: each rule has literal trigger strings checked with `in` (memchr-fast) before its
regex runs, so a typical 10 KB prompt with no secrets costs a few `in` scans. All rules
match against the original text; spans are merged, so the result is independent of rule
order and redaction is idempotent (placeholders never match a rule).

`redact_context(ctx)` redacts prefix, suffix and snippets of a `PromptContext`, treating
prefix+suffix as one text so a secret split by the cursor is still found. Snippets (other
files' outlines, definitions) are the same text request after request while the user
works in one place, so their redaction is remembered per text (a `ByteLRU`; redaction is
a pure function of the text, so a remembered answer is the answer).
"""

from __future__ import annotations

import base64
import dataclasses
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from lsp_assist.domain import PromptContext
from lsp_assist.memory import ByteLRU

PLACEHOLDER = "<redacted:{kind}>"
_PLACEHOLDER_PREFIX = "<redacted:"


def shannon_entropy(s: str) -> float:
    if not s:
        return 0.0
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(s: str) -> int:
    return (
        any(c.islower() for c in s)
        + any(c.isupper() for c in s)
        + any(c.isdigit() for c in s)
        + any(not c.isalnum() for c in s)
    )


_PLACEHOLDER_VALUES = re.compile(
    # ${VAR}, {{ template }}, {format_field}, <angle>, %(name)s, xxxx, ****, your-key-here...
    r"^(?:\$\{?[A-Za-z_][\w.]*\}?|\{\{.*\}\}|\{[\w.\[\]()\-]*\}|<[^>]*>|%\(?\w*\)?s|x{4,}|\*{4,}|"
    r"(?:your|my|example|dummy|changeme|placeholder|redacted)[\w\-]*)$",
    re.IGNORECASE,
)


def _high_entropy_value(v: str) -> bool:
    """A quoted value assigned to a secret-like name: long, mixed and random enough, and
    one word (tokens have no spaces; `auth: "Bearer <token>"` in a comment is prose)."""
    if len(v) < 8 or v.startswith(_PLACEHOLDER_PREFIX) or _PLACEHOLDER_VALUES.match(v):
        return False
    if any(c.isspace() for c in v):
        return False
    return _classes(v) >= 2 and shannon_entropy(v) >= 3.0


def _high_entropy_bare(v: str) -> bool:
    """An unquoted value (`.env`, shell, YAML): stricter, since identifiers look like this."""
    if len(v) < 12 or v.startswith(_PLACEHOLDER_PREFIX) or _PLACEHOLDER_VALUES.match(v):
        return False
    return any(c.isdigit() for c in v) and _classes(v) >= 2 and shannon_entropy(v) >= 3.5


def _mixed_key(v: str) -> bool:
    # Real OpenAI/Anthropic keys mix digits and upper-case; "sk-learn-compat-..." does not.
    body = v.split("-", 2)[-1]
    return any(c.isdigit() for c in body) and any(c.isupper() for c in body)


def _digit(v: str) -> bool:
    return any(c.isdigit() for c in v)


def _basic_credentials(v: str) -> bool:
    """True when `v` is base64 of `user:password` (what HTTP Basic auth carries)."""
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    return ":" in raw and raw.isprintable()


@dataclass(frozen=True)
class _Rule:
    kind: str
    # The regex runs only on lines containing a trigger (in the lower-cased text when `lower`);
    # no triggers: on the whole text.
    triggers: tuple[str, ...]
    regex: re.Pattern[str]
    group: int = 0  # the group to replace (0: the whole match)
    lower: bool = False
    validate: Callable[[str], bool] | None = None


def _authorization(kind: str, scheme: str, credential: str, validate: Callable[[str], bool]) -> _Rule:
    """An HTTP `Authorization` scheme in any case; only the credential after it is replaced."""
    return _Rule(
        kind,
        (scheme,),
        re.compile(rf"(?i)\b{scheme}[ \t]+({credential})"),
        group=1,
        lower=True,
        validate=validate,
    )


_SECRET_NAME = re.compile(
    r"[\w.\-]*?(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|"
    r"private[_\-]?key|auth|credentials?|client[_\-]?secret|bearer)\d*"
    # `secret_key`, `token_value`, `password_b64`: the keyword qualified by a value-ish word.
    r"(?:[_\-.]?(?:key|value|str|string|data|bytes|b64|base64|hex|raw|text))?\d*",
    re.IGNORECASE,
)
_PASSWORD_NAME = re.compile(
    r"[\w.\-]*?(?:password|passwd|passphrase|pwd)\d*|(?:[\w.\-]*[_\-.])?pass\d*", re.IGNORECASE
)
# `ENCRYPTION_KEY`, `account_key`, `hmacKey`: any name ending in "key" holds a key when its
# value looks like one (hex, base64, a UUID); `sort_key = "created_at"` does not.
_KEY_NAME = re.compile(r"[\w.\-]*key\d*", re.IGNORECASE)
_KEYWORD_TRIGGERS = ("pass", "pwd", "secret", "token", "key", "auth", "credential", "bearer")
# The value side of an assignment; the name before it is checked in Python, which is much
# cheaper than a regex trying a lazy name prefix at every position. The bare form is a
# lookahead so matches overlap: in `url=jdbc:...?user=app&password=...` the value of
# `url` must not swallow the `password=` after it.
# Comparisons too: `if api_key == "..."` hard-codes the secret it checks against.
_ASSIGN_QUOTED = re.compile(r"(?:===?|!==?|:=|=>|=|:)[ \t]*@?[bru]?([\"'`])([^\"'`\n]{6,256})\1")
_ASSIGN_BARE = re.compile(r"(?=[=:][ \t]*([^\s\"'`,;()\[\]{}<>]{6,256}))")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_-~")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF-")
_REFERENCE = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+$")  # settings.DB_PASSWORD, self.pwd


def _key_like(v: str) -> bool:
    """Hex, base64 or a UUID of key length: what a key assigned to a `*_key` name looks like."""
    if len(v) < 16 or not set(v) <= _KEY_CHARS or _PLACEHOLDER_VALUES.match(v):
        return False
    if not any(c.isdigit() for c in v) or not any(c.isalpha() for c in v):
        return False
    if set(v) <= _HEX_CHARS:
        return True
    return shannon_entropy(v) >= 3.5


def _password_value(v: str, quoted: bool) -> bool:
    """A literal assigned to a password name: any non-placeholder word with a digit or a
    symbol is a password (`hunter2` too); a lone word (`password`, `None`) is not."""
    if len(v) < 6 or v.startswith(_PLACEHOLDER_PREFIX) or _PLACEHOLDER_VALUES.match(v):
        return False
    if any(c.isspace() for c in v) or _REFERENCE.match(v):
        return False
    has_digit = any(c.isdigit() for c in v)
    has_symbol = any(not c.isalnum() for c in v)
    if quoted:
        return has_digit or has_symbol or len(v) >= 16
    # Unquoted in code, an identifier is a variable (`password = password_input`); in .env
    # or YAML a random word is the password: require it to look random.
    if v.replace("_", "").isalnum() and not has_digit:
        return False
    if v.replace("_", "").isalnum():
        return any(c.isupper() for c in v) and any(c.islower() for c in v)
    return has_digit or has_symbol


def _name_before(text: str, line_start: int, op: int) -> str:
    j = op
    while j > line_start and text[j - 1] in " \t":
        j -= 1
    if j > line_start and text[j - 1] in "\"'":
        j -= 1
    k = j
    while k > line_start and text[k - 1] in _NAME_CHARS:
        k -= 1
    return text[k:j]


def _name_kind(name: str) -> str | None:
    if not name:
        return None
    if _PASSWORD_NAME.fullmatch(name):
        return "password"
    if _SECRET_NAME.fullmatch(name):
        return "secret"
    if _KEY_NAME.fullmatch(name):
        return "key"
    return None


def _secret_name_before(text: str, line_start: int, op: int) -> str | None:
    """The kind of name assigned at `op`: "password", "secret", "key" or None."""
    kind = _name_kind(_name_before(text, line_start, op))
    if kind is not None:
        return kind
    # An annotated assignment, `api_key: str = "..."`: look past the annotation.
    colon = text.rfind(":", line_start, op)
    if colon > line_start and text[op] == "=":
        return _name_kind(_name_before(text, line_start, colon))
    return None


def _assigned_secret(kind: str | None, v: str, quoted: bool) -> bool:
    if kind is None:
        return False
    if kind == "password" and _password_value(v, quoted):
        return True
    if kind == "key":
        return _key_like(v)
    return _key_like(v) or (_high_entropy_value(v) if quoted else _high_entropy_bare(v))


def _keyword_secrets(text: str, low: str, spans: list[tuple[int, int, str]]) -> None:
    for ls, le in _trigger_lines(low, _KEYWORD_TRIGGERS):
        for m in _ASSIGN_QUOTED.finditer(text, ls, le):
            if _assigned_secret(_secret_name_before(text, ls, m.start()), m.group(2), True):
                spans.append((m.start(2), m.end(2), "secret"))
        for m in _ASSIGN_BARE.finditer(text, ls, le):
            if _assigned_secret(_secret_name_before(text, ls, m.start()), m.group(1), False):
                spans.append((m.start(1), m.end(1), "secret"))


RULES: tuple[_Rule, ...] = (
    _Rule(
        "private-key",
        (),
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    _Rule(
        "aws-access-key",
        ("AKIA", "ASIA"),
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z2-7]{16}(?![A-Z0-9])"),
    ),
    _Rule(
        "aws-secret-key",
        ("aws",),
        re.compile(
            r"(?i)aws[\w.\-]{0,30}?(?:secret|sk|key)[\w.\-]{0,20}[\"']?\s*(?::=|=>|=|:)\s*[\"']?"
            r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        group=1,
        lower=True,
    ),
    # An empty trigger tuple: the regex starts with a literal, which re already finds fast.
    _Rule("github-token", (), re.compile(r"gh[pousr]_[A-Za-z0-9]{36,255}")),
    _Rule("github-token", (), re.compile(r"github_pat_[A-Za-z0-9_]{22,255}")),
    _Rule("gitlab-token", (), re.compile(r"gl(?:pat|ptt|dt|rt)-[A-Za-z0-9_\-]{20,}")),
    _Rule("slack-token", (), re.compile(r"xox[abposre]-[A-Za-z0-9\-]{10,}")),
    _Rule("slack-webhook", (), re.compile(r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}")),
    _Rule("stripe-key", ("_live_", "_test_"), re.compile(r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    _Rule("google-api-key", (), re.compile(r"AIza[0-9A-Za-z_\-]{35}")),
    _Rule("anthropic-key", (), re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,}")),
    _Rule(
        "openai-key",
        ("sk-",),
        re.compile(r"(?<![\w\-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
        validate=_mixed_key,
    ),
    _Rule("huggingface-token", ("hf_",), re.compile(r"(?<![\w])hf_[A-Za-z]{34,}"), validate=_mixed_key),
    _Rule("jwt", (), re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")),
    _Rule(
        "url-password",
        ("://",),
        # The user may be empty (`redis://:pass@host`).
        re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"<>]*:([^\s@/'\"<>]+)@"),
        group=1,
    ),
    # Go's MySQL DSN has no scheme: `user:pass@tcp(host:3306)/db`.
    _Rule(
        "dsn-password",
        ("@tcp(", "@unix(", "@udp("),
        re.compile(r"[\w.\-]+:([^\s:@/'\"<>]+)@(?:tcp|unix|udp)\("),
        group=1,
    ),
    # Azure storage / Service Bus / Event Hubs connection strings and SAS signatures.
    _Rule(
        "azure-key",
        ("accountkey=", "sharedaccesskey=", "sharedaccesssignature="),
        re.compile(r"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature)=([^;\s\"'`<>]{16,})"),
        group=1,
        lower=True,
    ),
    _Rule(
        "azure-sas",
        ("sig=",),
        re.compile(r"[?&]sig=([A-Za-z0-9%+/=_\-]{16,})"),
        group=1,
    ),
    _Rule(
        "azure-client-secret",
        ("Q~",),
        re.compile(r"(?<![\w~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![\w~.\-])"),
    ),
    _Rule("npm-token", ("npm_",), re.compile(r"(?<![\w])npm_[A-Za-z0-9]{36}(?![\w])")),
    _Rule("pypi-token", ("pypi-",), re.compile(r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}")),
    _Rule("sendgrid-key", ("SG.",), re.compile(r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}")),
    _Rule("twilio-key", ("SK",), re.compile(r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])")),
    _Rule("mailchimp-key", ("-us",), re.compile(r"(?<![A-Za-z0-9])[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])")),
    _Rule("shopify-token", ("shp",), re.compile(r"shp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32}")),
    _Rule("digitalocean-token", ("_v1_",), re.compile(r"do[opr]_v1_[a-f0-9]{64}")),
    _Rule("stripe-webhook-secret", ("whsec_",), re.compile(r"whsec_[A-Za-z0-9]{24,}")),
    _Rule(
        "discord-token",
        (".",),
        re.compile(
            r"(?<![\w\-.])[MNO][A-Za-z0-9]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?![\w\-])"
        ),
        validate=lambda v: _digit(v),
    ),
    _Rule("telegram-token", (":AA",), re.compile(r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![\w\-])")),
    # HTTP credentials: `Authorization: Bearer <token>` / `Basic <base64 of user:pass>`.
    _authorization(
        "bearer-token",
        "bearer",
        r"[A-Za-z0-9\-._~+/]{16,}=*",
        lambda v: _digit(v) and any(c.isalpha() for c in v),
    ),
    _authorization("basic-auth", "basic", r"[A-Za-z0-9+/]{8,}={0,2}", _basic_credentials),
)


# Key ids that come with a secret half, often passed positionally with no name to go by:
# `NewStaticCredentialsProvider("AKIA...", "<secret>", "")`, `Client("SK...", "<secret>")`.
_PAIRED_KINDS = frozenset({"aws-access-key", "twilio-key"})
_QUOTED_TOKEN = re.compile(r"[\"'`]([A-Za-z0-9/+_\-]{32,64})[\"'`]")


def _paired_secrets(text: str, spans: list[tuple[int, int, str]]) -> None:
    """On a line holding a key id, a quoted random string of secret length is its secret."""
    lines = {
        (text.rfind("\n", 0, s) + 1, (text.find("\n", e) + 1 or len(text) + 1) - 1)
        for s, e, kind in spans
        if kind in _PAIRED_KINDS
    }
    for ls, le in lines:
        for m in _QUOTED_TOKEN.finditer(text, ls, le):
            v = m.group(1)
            if _digit(v) and any(c.isupper() for c in v) and any(c.islower() for c in v):
                spans.append((m.start(1), m.end(1), "paired-secret"))


def _trigger_lines(hay: str, triggers: tuple[str, ...]) -> list[tuple[int, int]]:
    """The (start, end) of each line containing a trigger: str.find is far faster than a
    regex scanning every position, and secrets other than key blocks sit on one line."""
    lines: set[tuple[int, int]] = set()
    for t in triggers:
        i = hay.find(t)
        while i >= 0:
            ls = hay.rfind("\n", 0, i) + 1
            le = hay.find("\n", i)
            if le < 0:
                le = len(hay)
            lines.add((ls, le))
            i = hay.find(t, le)
    return sorted(lines) if len(lines) > 1 else list(lines)


class Redactor:
    """Finds and replaces secrets. Stateless apart from counters; safe to share."""

    def __init__(self, rules: tuple[_Rule, ...] = RULES) -> None:
        self.rules = rules

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Merged, sorted spans (start, end, kind) to replace."""
        if len(text) < 8:
            return []
        return self.line_spans(text)

    def line_spans(self, text: str) -> list[tuple[int, int, str]]:
        """`find` without its shortcut for short texts (a line of a longer prompt)."""
        low: str | None = None
        spans: list[tuple[int, int, str]] = []
        for rule in self.rules:
            if rule.lower:
                if low is None:
                    low = text.lower()
                hay = low
            else:
                hay = text
            if not rule.triggers:
                windows: list[tuple[int, int]] = [(0, len(text))]
            else:
                windows = _trigger_lines(hay, rule.triggers)
            for ws, we in windows:
                for m in rule.regex.finditer(text, ws, we):
                    start, end = m.span(rule.group)
                    if start < 0 or start == end:
                        continue
                    if rule.validate is not None and not rule.validate(m.group(rule.group)):
                        continue
                    spans.append((start, end, rule.kind))
        _keyword_secrets(text, low if low is not None else text.lower(), spans)
        _paired_secrets(text, spans)
        if len(spans) <= 1:
            return spans
        # At equal starts the specific kind wins over the generic keyword "secret".
        spans.sort(key=lambda sp: (sp[0], sp[2] == "secret", -sp[1]))
        merged = [spans[0]]
        for s, e, k in spans[1:]:
            ps, pe, pk = merged[-1]
            if s < pe:
                merged[-1] = (ps, max(pe, e), pk)
            else:
                merged.append((s, e, k))
        return merged

    def redact(self, text: str) -> tuple[str, int]:
        spans = self.find(text)
        if not spans:
            return text, 0
        return _apply(text, spans), len(spans)


def _apply(text: str, spans: list[tuple[int, int, str]]) -> str:
    out: list[str] = []
    pos = 0
    for s, e, kind in spans:
        out.append(text[pos:s])
        out.append(PLACEHOLDER.format(kind=kind))
        pos = e
    out.append(text[pos:])
    return "".join(out)


_DEFAULT = Redactor()


def redact(text: str) -> tuple[str, int]:
    """Replace secrets in `text`; returns the new text and how many were replaced."""
    return _DEFAULT.redact(text)


#: Snippet texts whose redaction is remembered: many requests' worth of outlines (the
#: cross-file share of a prompt is a few KB).
SNIPPET_MEMO_BYTES = 1 << 20


def _snippet_bytes(text: str, out: tuple[str, int]) -> int:
    # The redacted text is the same object as the key when nothing was found.
    return sys.getsizeof(text) + (sys.getsizeof(out[0]) if out[0] is not text else 0)


_snippet_memo: ByteLRU[str, tuple[str, int]] = ByteLRU(SNIPPET_MEMO_BYTES, _snippet_bytes)


def redact_snippet(text: str) -> tuple[str, int]:
    """`redact(text)`, remembered (least recently used out past `SNIPPET_MEMO_BYTES`)."""
    out = _snippet_memo.get(text)
    if out is None:
        out = _DEFAULT.redact(text)
        _snippet_memo.put(text, out)
    return out


def snippet_memo_bytes() -> int:
    """What the snippet memo holds (for the server's memory report)."""
    return _snippet_memo.nbytes


def contains_placeholder(text: str) -> bool:
    """Completions containing a placeholder are dropped by the pipeline (never restored)."""
    return _PLACEHOLDER_PREFIX in text


#: Lines seen in a prompt (or a whole document read at didOpen) with nothing to redact:
#: ~10,000 lines of code, the open files' and more.
CLEAN_LINES_BYTES = 1 << 20
NEW_LINES_SCANNED = 8  # at most this many unknown lines are scanned one by one, not the text
_LINE_OVERHEAD = 60  # the dict slot of a line (its string is counted by `sys.getsizeof`)


class CleanLines:
    """Line texts known to hold nothing to redact, oldest out first past `max_bytes`.

    Every rule matches within one line (a private key block spans lines, but its `BEGIN`
    line alone is a match), so an ASCII text all of whose lines are clean is clean: a
    prompt at a fresh position of an unchanged document (its rows, the gap markers, the
    names line: lines seen before) is answered with one set comparison instead of a scan,
    and one with a few new lines (the line just edited) by scanning those alone.
    Non-ASCII text is always scanned (lower-casing may move offsets across lines)."""

    def __init__(self, max_bytes: int = CLEAN_LINES_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lines: dict[str, None] = {}
        self.nbytes = 0
        self.hits = 0  # texts answered from the memo (for tests)

    def spans(self, redactor: Redactor, text: str) -> list[tuple[int, int, str]]:
        """`redactor.find(text)`; its lines learned when it is clean."""
        if len(text) < 8 or not text.isascii():
            return redactor.find(text)
        lines = text.split("\n")
        known = self._lines
        if known.keys() >= set(lines):
            self.hits += 1
            return []
        new = {line for line in lines if line not in known}
        if len(new) <= NEW_LINES_SCANNED:  # an edited line, the names line: scanned alone
            if not any(redactor.line_spans(line) for line in new):
                self.learn(list(new))
                self.hits += 1
                return []
            return redactor.find(text)
        spans = redactor.find(text)
        if not spans:
            self.learn(lines)
        return spans

    def learn_text(self, redactor: Redactor, text: str) -> None:
        """Scan a whole text (a document at didOpen) and learn its lines when it is clean."""
        if text.isascii() and len(text) <= self.max_bytes // 4 and not redactor.find(text):
            self.learn(text.split("\n"))

    def learn(self, lines: list[str]) -> None:
        known = self._lines
        for line in lines:
            if line not in known:
                known[line] = None
                self.nbytes += sys.getsizeof(line) + _LINE_OVERHEAD
        while self.nbytes > self.max_bytes and known:
            old = next(iter(known))
            del known[old]
            self.nbytes -= sys.getsizeof(old) + _LINE_OVERHEAD

    def clear(self) -> None:
        self._lines.clear()
        self.nbytes = 0


_clean_lines = CleanLines()


def clean_lines_bytes() -> int:
    """What the clean-lines memo holds (for the server's memory report)."""
    return _clean_lines.nbytes


def learn_clean_text(text: str) -> None:
    """Learn the lines of a document's text when it holds nothing to redact (the prompt
    prebuilder, after didOpen): the first prompt anywhere in it needs no scan."""
    _clean_lines.learn_text(_DEFAULT, text)


def redact_context(ctx: PromptContext) -> tuple[PromptContext, int]:
    """Redact everything in a prompt context that would be sent to a model."""
    joined = ctx.prefix + ctx.suffix
    spans = _clean_lines.spans(_DEFAULT, joined)
    count = len(spans)
    prefix, suffix = ctx.prefix, ctx.suffix
    if spans:
        cut = len(ctx.prefix)
        pre_spans = [(s, min(e, cut), k) for s, e, k in spans if s < cut]
        # A span crossing the cursor is replaced on the prefix side; the suffix resumes after it.
        suffix_start = max((e for s, e, _ in spans if s < cut < e), default=cut)
        suf_spans = [(s - suffix_start, e - suffix_start, k) for s, e, k in spans if s >= cut]
        prefix = _apply(ctx.prefix, pre_spans) if pre_spans else ctx.prefix
        rest = joined[suffix_start:]
        suffix = _apply(rest, suf_spans) if suf_spans else rest
    snippets = []
    for snip in ctx.snippets:
        text, n = redact_snippet(snip.text)
        count += n
        snippets.append(dataclasses.replace(snip, text=text) if n else snip)
    if not count:
        return ctx, 0
    line_prefix, _ = _DEFAULT.redact(ctx.line_prefix)
    line_suffix, _ = _DEFAULT.redact(ctx.line_suffix)
    return (
        dataclasses.replace(
            ctx,
            prefix=prefix,
            suffix=suffix,
            snippets=tuple(snippets),
            line_prefix=line_prefix,
            line_suffix=line_suffix,
        ),
        count,
    )
