"""Daily request and token quotas per feature and per tier, shared by all server processes.

One sqlite file (`quota.sqlite3`, mode 0600) under the cache dir; each editor window's
server process opens it. Every check-and-count is one `BEGIN IMMEDIATE` transaction
(writers serialise on the file lock, WAL lets readers continue), so two processes cannot
lose counts or overshoot a request quota. Token counts are batched: `add_tokens` only adds
to memory and the next `try_consume` (or `flush`) writes them inside its own transaction,
so the request path pays one short transaction per call (measured in
benchmarks/governance_bench.py); token quotas may lag by one call per process.

The window is the local calendar day. A quota applies when its feature or its tier has a
limit; with no limits configured at all nothing touches the disk. When a feature's quota
is spent only that feature is refused. Storage errors (locked past the busy timeout,
corruption) fail open for that call and are counted in `errors`: a broken cache file must
not stop completions, and the audit log still records every call.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsp_assist.governance.settings import QuotaLimit, QuotaSettings

log = logging.getLogger(__name__)

DB_NAME = "quota.sqlite3"
BUSY_TIMEOUT_MS = 250
KEEP_DAYS = 8


@dataclass(frozen=True)
class Remaining:
    """What is left today; None means unlimited."""

    requests: int | None
    tokens: int | None

    @property
    def spent(self) -> bool:
        return self.requests == 0 or self.tokens == 0


def _day(wall: Callable[[], float]) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(wall()))


class QuotaStore:
    def __init__(
        self,
        directory: str | os.PathLike[str],
        limits: QuotaSettings | None = None,
        *,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = limits or QuotaSettings()
        self._wall = wall_clock
        self._pending: defaultdict[tuple[str, str], int] = defaultdict(int)  # (feature, tier) -> tokens
        self.errors = 0
        self.refused: defaultdict[str, int] = defaultdict(int)  # feature -> refusals
        self.path = Path(directory) / DB_NAME
        self._db: sqlite3.Connection | None = None
        if self.limits.any():
            self._db = self._open()

    def _open(self) -> sqlite3.Connection | None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Create the file ourselves so it is 0600 from the first byte; sqlite gives the
            # -wal and -shm files the same permissions as the database.
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            os.close(fd)
            os.chmod(self.path, 0o600)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            # Two windows opening the store at once race on switching it to WAL, and sqlite
            # answers that race with "database is locked" without calling the busy handler;
            # an exclusive lock beside the file serialises the set-up (milliseconds, once per
            # process, never on the request path).
            with open(f"{self.path}.open.lock", "ab") as lock:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
                db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS usage (day TEXT NOT NULL, scope TEXT NOT NULL, "
                    "requests INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0, "
                    "PRIMARY KEY (day, scope))"
                )
                cutoff = time.strftime("%Y-%m-%d", time.localtime(self._wall() - KEEP_DAYS * 86400))
                db.execute("DELETE FROM usage WHERE day < ?", (cutoff,))
            return db
        except (OSError, sqlite3.Error) as e:
            self.errors += 1
            log.warning("quota store unavailable (%s); quotas are kept in memory", e.__class__.__name__)
            db = sqlite3.connect(":memory:", isolation_level=None)
            db.execute(
                "CREATE TABLE usage (day TEXT NOT NULL, scope TEXT NOT NULL, requests INTEGER NOT NULL "
                "DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (day, scope))"
            )
            return db

    def _scopes(self, feature: str, tier: str) -> list[tuple[str, QuotaLimit]]:
        out = []
        fl = self.limits.features.get(feature)
        if fl is not None:
            out.append((f"feature:{feature}", fl))
        tl = self.limits.tiers.get(tier)
        if tl is not None:
            out.append((f"tier:{tier}", tl))
        return out

    def _flush_pending(self, db: sqlite3.Connection, day: str) -> None:
        for (feature, tier), tokens in self._pending.items():
            for scope in (f"feature:{feature}", f"tier:{tier}"):
                db.execute(
                    "INSERT INTO usage(day, scope, requests, tokens) VALUES (?, ?, 0, ?) "
                    "ON CONFLICT(day, scope) DO UPDATE SET tokens = tokens + excluded.tokens",
                    (day, scope, tokens),
                )
        self._pending.clear()

    @staticmethod
    def _read(db: sqlite3.Connection, day: str, scope: str) -> tuple[int, int]:
        row = db.execute(
            "SELECT requests, tokens FROM usage WHERE day = ? AND scope = ?", (day, scope)
        ).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def try_consume(self, feature: str, tier: str, requests: int = 1) -> bool:
        """Count `requests` against the feature's and tier's quotas; False (nothing counted) if spent."""
        scopes = self._scopes(feature, tier)
        db = self._db
        if not scopes or db is None:
            return True
        day = _day(self._wall)
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                self._flush_pending(db, day)
                for scope, lim in scopes:
                    used_r, used_t = self._read(db, day, scope)
                    if lim.requests_per_day is not None and used_r + requests > lim.requests_per_day:
                        db.execute("COMMIT")
                        self.refused[feature] += 1
                        return False
                    if lim.tokens_per_day is not None and used_t >= lim.tokens_per_day:
                        db.execute("COMMIT")
                        self.refused[feature] += 1
                        return False
                for scope, _ in scopes:
                    db.execute(
                        "INSERT INTO usage(day, scope, requests, tokens) VALUES (?, ?, ?, 0) "
                        "ON CONFLICT(day, scope) DO UPDATE SET requests = requests + excluded.requests",
                        (day, scope, requests),
                    )
                db.execute("COMMIT")
                return True
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            self.errors += 1
            log.warning("quota check failed (%s); allowing this call", e.__class__.__name__)
            return True

    def add_tokens(self, feature: str, tier: str, tokens: int) -> None:
        """Batched: written with the next `try_consume` or `flush`."""
        if tokens > 0 and self._db is not None and self._scopes(feature, tier):
            self._pending[(feature, tier)] += tokens

    def flush(self) -> None:
        db = self._db
        if db is None or not self._pending:
            return
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                self._flush_pending(db, _day(self._wall))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except sqlite3.Error:
            self.errors += 1

    def used(self, feature: str, tier: str | None = None) -> dict[str, tuple[int, int]]:
        """Today's (requests, tokens) per configured scope, pending tokens included."""
        db = self._db
        if db is None:
            return {}
        day = _day(self._wall)
        out: dict[str, tuple[int, int]] = {}
        for scope, _ in self._scopes(feature, tier or ""):
            try:
                r, t = self._read(db, day, scope)
            except sqlite3.Error:
                self.errors += 1
                continue
            kind, name = scope.split(":", 1)
            t += sum(v for (f, tr), v in self._pending.items() if (f if kind == "feature" else tr) == name)
            out[scope] = (r, t)
        return out

    def remaining(self, feature: str, tier: str | None = None) -> Remaining:
        reqs: int | None = None
        toks: int | None = None
        used = self.used(feature, tier)
        for scope, lim in self._scopes(feature, tier or ""):
            r, t = used.get(scope, (0, 0))
            if lim.requests_per_day is not None:
                left = max(0, lim.requests_per_day - r)
                reqs = left if reqs is None else min(reqs, left)
            if lim.tokens_per_day is not None:
                left = max(0, lim.tokens_per_day - t)
                toks = left if toks is None else min(toks, left)
        return Remaining(reqs, toks)

    def exhausted(self, feature: str, tier: str) -> bool:
        return bool(self._scopes(feature, tier)) and self.remaining(feature, tier).spent

    def close(self) -> None:
        if self._db is not None:
            self.flush()
            self._db.close()
            self._db = None
