"""The audit log: one JSON line per model call or suggestion event, metadata only.

Never code, prompts, completions, error messages or keys: `AuditLog.write` keeps only the
fields in `FIELDS`, each with its expected type (strings capped at 128 characters), so a
caller cannot leak content by passing an extra field. The workspace is recorded as a keyed
hash (the 16-byte key lives next to the log, 0600), so logs from one machine group by
workspace without revealing paths.

Writes: one `os.write` of one line on an `O_APPEND` descriptor (0600) per record, atomic
with respect to other processes appending to the same file on local filesystems; about
10-20 µs (benchmarks/governance_bench.py), so it runs inline on the event loop. When the file
passes `max_bytes` the writer rotates it (`audit.jsonl` -> `.1` -> ... -> `.<backups>`)
under an exclusive `flock` on `<path>.lock`, re-checking the size under the lock so two
processes do not both rotate. A failed write never raises: it is counted in
`write_errors` and logged once.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: rotation without a cross-process lock
    fcntl = None  # type: ignore[assignment]

from lsp_assist.governance.redaction import redact

log = logging.getLogger(__name__)

# field -> allowed types; anything else is dropped.
FIELDS: dict[str, tuple[type, ...]] = {
    "ts": (str,),
    "environment": (str,),
    "feature": (str,),
    "tier": (str,),
    "provider": (str,),
    "model": (str,),
    "endpoint_host": (str, type(None)),
    "request_bytes": (int,),
    "prompt_tokens": (int,),
    "completion_tokens": (int,),
    "tokens_estimated": (bool,),
    "stages_ms": (dict,),
    "outcome": (str,),
    "error_class": (str, type(None)),
    "http_status": (int, type(None)),
    "fallback_from": (str, type(None)),
    "hedged": (bool,),
    "retries": (int,),
    "redactions": (int,),
    "workspace": (str, type(None)),
    "pid": (int,),
    # A model call's language id, and suggestion events (telemetry/events.py): labels and
    # counts only, never the suggestion's text.
    "language": (str,),
    "event": (str,),
    "suggestion_id": (str,),
    "source": (str,),
    "unit": (str,),
    "accepted_chars": (int,),
    "first_accept": (bool,),
    "checkpoint_s": (int,),
    "retained_chars": (int,),
}
MAX_STR = 128
# Field values repeat (tiers, models, hosts, outcomes, languages): each is redacted once.
# Redaction runs every secret pattern over the text, 0.3 ms a record on the path of a
# stream that ends at the token its request needed; a hit costs a dict lookup.
_REDACTED_CAP = 512
_redacted: dict[str, str] = {}


def _redacted_field(v: str) -> str:
    out = _redacted.get(v)
    if out is None:
        out = redact(v)[0]
        if len(_redacted) >= _REDACTED_CAP:
            _redacted.clear()  # bounded; values that recur come back at once
        _redacted[v] = out
    return out


def _clean(record: Mapping[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, types in FIELDS.items():
        if key not in record:
            continue
        v = record[key]
        if isinstance(v, bool) and bool not in types:
            continue
        if not isinstance(v, types):
            continue
        if isinstance(v, str):
            # Defence in depth: no field should hold a secret, but redact just in case.
            v = _redacted_field(v[:MAX_STR])
        elif isinstance(v, dict):
            v = {
                str(k)[:32]: round(float(x), 2)
                for k, x in v.items()
                if isinstance(x, (int, float)) and not isinstance(x, bool)
            }
        out[key] = v
    return out


class AuditLog:
    def __init__(
        self,
        path: str | os.PathLike[str],
        max_bytes: int = 10 * 1024 * 1024,
        backups: int = 5,
        *,
        enabled: bool = True,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.backups = backups
        self.enabled = enabled
        self.write_errors = 0
        self.records = 0
        self._warned = False
        self._key: bytes | None = None
        self._dir_made = False

    def workspace_hash(self, workspace: str | None) -> str | None:
        """A keyed hash of a workspace path (stable on this machine, meaningless elsewhere)."""
        if not workspace:
            return None
        if self._key is None:
            self._key = self._load_key()
        h = hashlib.blake2b(
            os.path.abspath(workspace).encode("utf-8", "surrogatepass"), digest_size=8, key=self._key
        )
        return h.hexdigest()

    def _load_key(self) -> bytes:
        key_path = self.path.parent / ".audit-key"
        try:
            return key_path.read_bytes()[:32] or b"lsp-assist"
        except FileNotFoundError:
            pass
        except OSError:
            return b"lsp-assist"
        key = secrets.token_bytes(16)
        try:
            key_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, key)
            finally:
                os.close(fd)
        except FileExistsError:  # another process won the race: use its key
            try:
                return key_path.read_bytes()[:32] or key
            except OSError:
                return key
        except OSError:
            pass
        return key

    def write(self, record: Mapping[str, object]) -> bool:
        """Append one record (allowlisted fields only). Never raises; False when not written."""
        if not self.enabled:
            return False
        rec = _clean(record)
        rec.setdefault("ts", _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"))
        rec.setdefault("pid", os.getpid())
        line = (json.dumps(rec, separators=(",", ":"), ensure_ascii=True) + "\n").encode("ascii")
        try:
            if not self._dir_made:  # once: a mkdir per line cost as much as the write
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                self._dir_made = True
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            except FileNotFoundError:  # the directory went away since: make it again
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            self.records += 1
            if size > self.max_bytes:
                self._rotate()
            return True
        except OSError as e:
            self.write_errors += 1
            if not self._warned:
                self._warned = True
                log.warning("audit log not writable (%s)", e.strerror or e.__class__.__name__)
            return False

    def _rotate(self) -> None:
        lock_path = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if self.path.stat().st_size <= self.max_bytes:
                    return  # another process rotated it while we waited
            except FileNotFoundError:
                return
            if self.backups <= 0:
                os.truncate(self.path, 0)
                return
            for i in range(self.backups - 1, 0, -1):
                src = self.path.with_name(f"{self.path.name}.{i}")
                if src.exists():
                    os.replace(src, self.path.with_name(f"{self.path.name}.{i + 1}"))
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        finally:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def files(self) -> list[Path]:
        """The current file and its backups, oldest first (for the usage report)."""
        out = [self.path.with_name(f"{self.path.name}.{i}") for i in range(self.backups, 0, -1)]
        return [p for p in [*out, self.path] if p.exists()]


def audit_files(path: str | os.PathLike[str]) -> list[Path]:
    """The audit file at `path` and every rotated backup beside it, oldest first."""
    p = Path(path)
    backups: list[tuple[int, Path]] = []
    if p.parent.is_dir():
        for q in p.parent.iterdir():
            suffix = q.name[len(p.name) + 1 :]
            if q.name.startswith(p.name + ".") and suffix.isdigit():
                backups.append((int(suffix), q))
    out = [q for _, q in sorted(backups, reverse=True)]
    if p.exists():
        out.append(p)
    return out
