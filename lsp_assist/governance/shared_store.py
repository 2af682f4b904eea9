"""The shared governance store in Redis: quotas, token buckets and concurrency caps for a team.

Every lsp-assist process pointing at the same store checks and takes, in ONE Lua script
(atomic on the server: no read-modify-write race between processes), for one model call:

- each quota scope's daily request count and token count (hash ``{ns}:q:{day}:{scope}``,
  fields ``r`` and ``t``; expires after two days);
- each token bucket (hash ``{ns}:rl:{scope}``, fields ``tokens`` and ``ts``, refilled at
  ``requests_per_minute / 60 000`` per ms up to a burst of ``requests_per_minute``, like
  the local limiter; expires once it would be full again);
- each concurrency cap (sorted set ``{ns}:cc:{scope}`` of lease ids scored by their expiry,
  so a crashed process's slots come back after ``lease_ttl``).

Time comes from the Redis server (``TIME``), so processes on machines with skewed clocks
share one bucket. Either everything is taken or nothing is. Releasing a slot and adding the
call's tokens is a second script sent in the background when the call ends: the request
path pays one round trip. (So a token quota is checked against the tokens of finished
calls: the calls in flight when it runs out may overshoot it by their own tokens.)

When a command fails (connection refused, reset, timeout) the store says so once in the
log, reports itself unavailable at once (no request waits on a dead store) and a
background task pings every `RECONNECT_S` until it answers, then says so once again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

log = logging.getLogger(__name__)

RECONNECT_S = 0.5
QUOTA_TTL_S = 2 * 86400
STORE_ERRORS: tuple[type[BaseException], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.BusyLoadingError,
    OSError,
    asyncio.TimeoutError,
)

# KEYS: quota hashes (nq), bucket hashes (nb), concurrency sets (nc)
# ARGV: nq, nb, nc, quota_ttl_s, lease_id, lease_ttl_ms, then per quota (req_limit, tok_limit)
#       (-1 = none), per bucket (rate per ms, burst), per concurrency set (cap).
# Returns {1} or {0, reason, index (1-based within its kind), retry_ms}.
ADMIT_LUA = """
local nq, nb, nc = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local qttl, lease, lttl = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local a = 7
for i = 1, nq do
  local rl, tl = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local v = redis.call('HMGET', KEYS[i], 'r', 't')
  if rl >= 0 and (tonumber(v[1]) or 0) + 1 > rl then return {0, 'quota', i, 0} end
  if tl >= 0 and (tonumber(v[2]) or 0) >= tl then return {0, 'quota', i, 0} end
end
local fresh = {}
for j = 1, nb do
  local rate, burst = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local v = redis.call('HMGET', KEYS[nq + j], 'tokens', 'ts')
  local tokens, ts = tonumber(v[1]), tonumber(v[2])
  if tokens == nil or ts == nil then tokens, ts = burst, now end
  tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
  if tokens < 1 then return {0, 'rate', j, math.ceil((1 - tokens) / rate)} end
  fresh[j] = {tokens - 1, math.ceil(burst / rate) + 1000}
end
for m = 1, nc do
  local k = KEYS[nq + nb + m]
  redis.call('ZREMRANGEBYSCORE', k, '-inf', now)
  if redis.call('ZCARD', k) >= tonumber(ARGV[a + m - 1]) then return {0, 'concurrency', m, 0} end
end
for i = 1, nq do
  redis.call('HINCRBY', KEYS[i], 'r', 1)
  redis.call('EXPIRE', KEYS[i], qttl)
end
for j = 1, nb do
  redis.call('HSET', KEYS[nq + j], 'tokens', tostring(fresh[j][1]), 'ts', tostring(now))
  redis.call('PEXPIRE', KEYS[nq + j], fresh[j][2])
end
for m = 1, nc do
  local k = KEYS[nq + nb + m]
  redis.call('ZADD', k, now + lttl, lease)
  redis.call('PEXPIRE', k, lttl)
end
return {1}
"""

# KEYS: concurrency sets (nc), then quota hashes. ARGV: nc, lease_id, tokens, quota_ttl_s.
RELEASE_LUA = """
local nc = tonumber(ARGV[1])
local tokens = tonumber(ARGV[3])
for m = 1, nc do redis.call('ZREM', KEYS[m], ARGV[2]) end
if tokens > 0 then
  for i = nc + 1, #KEYS do
    redis.call('HINCRBY', KEYS[i], 't', tokens)
    redis.call('EXPIRE', KEYS[i], tonumber(ARGV[4]))
  end
end
return 1
"""


@dataclass(frozen=True)
class QuotaCheck:
    scope: str  # e.g. "feature:completion", "bl:payments", "user:alice"
    requests_per_day: int | None
    tokens_per_day: int | None


@dataclass(frozen=True)
class BucketCheck:
    scope: str
    requests_per_minute: float


@dataclass(frozen=True)
class ConcurrencyCheck:
    scope: str
    max_concurrent: int


@dataclass(frozen=True)
class Refusal:
    reason: str  # "quota" | "rate" | "concurrency"
    scope: str
    retry_ms: int = 0


class StoreUnavailable(Exception):
    """The store could not be asked; the caller applies the on_unavailable policy."""


@dataclass
class SharedLease:
    """What one admitted call holds in the store; `release` it once when the call ends."""

    store: RedisStore
    lease_id: str
    concurrency_keys: tuple[str, ...]
    quota_keys: tuple[str, ...]
    released: bool = field(default=False)

    def release(self, tokens: int = 0) -> None:
        if not self.released:
            self.released = True
            self.store.release_later(self, tokens)


class RedisStore:
    """One connection pool to the team's Redis, the two scripts and the health state."""

    def __init__(
        self,
        url: str,
        *,
        password: str | None = None,
        namespace: str = "lsp-assist",
        timeout_s: float = 0.25,
        lease_ttl_s: float = 60.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.namespace = namespace
        self.lease_ttl_ms = int(lease_ttl_s * 1000)
        self._wall = wall_clock
        self._client: Redis = Redis.from_url(
            url,
            password=password,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            health_check_interval=30,
            client_name="lsp-assist",
            # No retries inside a call: the request path must learn at once that the store is
            # down (redis-py's default retries with back-off would add seconds per request).
            retry=Retry(NoBackoff(), 0),
        )
        self._admit = self._client.register_script(ADMIT_LUA)
        self._release = self._client.register_script(RELEASE_LUA)
        self.available = True
        self.outages = 0
        self.round_trips = 0
        self.errors = 0
        self._probe: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self.on_change: Callable[[bool], None] | None = None

    # --- keys ----------------------------------------------------------------------------

    def day(self) -> str:
        # UTC: one team may span time zones, and the window must be the same for all.
        return time.strftime("%Y-%m-%d", time.gmtime(self._wall()))

    def quota_key(self, day: str, scope: str) -> str:
        return f"{self.namespace}:q:{day}:{scope}"

    def bucket_key(self, scope: str) -> str:
        return f"{self.namespace}:rl:{scope}"

    def concurrency_key(self, scope: str) -> str:
        return f"{self.namespace}:cc:{scope}"

    # --- admission -------------------------------------------------------------------------

    async def admit(
        self,
        quotas: Sequence[QuotaCheck],
        buckets: Sequence[BucketCheck],
        caps: Sequence[ConcurrencyCheck],
    ) -> SharedLease | Refusal:
        """Take one call's share of everything, atomically, or say what refused it.

        Raises `StoreUnavailable` at once while the store is known to be down, and when
        this round trip fails (the store is then marked down and a probe starts).
        """
        if not self.available:
            raise StoreUnavailable("team store unreachable")
        day = self.day()
        qkeys = [self.quota_key(day, q.scope) for q in quotas]
        bkeys = [self.bucket_key(b.scope) for b in buckets]
        ckeys = [self.concurrency_key(c.scope) for c in caps]
        lease_id = uuid.uuid4().hex
        args: list[str | int | float] = [
            len(quotas), len(buckets), len(caps), QUOTA_TTL_S, lease_id, self.lease_ttl_ms,
        ]  # fmt: skip
        for q in quotas:
            args += [_lim(q.requests_per_day), _lim(q.tokens_per_day)]
        for b in buckets:
            args += [repr(b.requests_per_minute / 60_000.0), repr(float(b.requests_per_minute))]
        args += [c.max_concurrent for c in caps]
        try:
            out = await self._admit(keys=[*qkeys, *bkeys, *ckeys], args=args)
        except STORE_ERRORS as exc:
            self._down(exc)
            raise StoreUnavailable("team store unreachable") from None
        except redis_errors.RedisError as exc:  # a script or auth error: the store is unusable
            self._down(exc)
            raise StoreUnavailable(f"team store error ({exc.__class__.__name__})") from None
        self.round_trips += 1
        if int(out[0]) == 1:
            return SharedLease(self, lease_id, tuple(ckeys), tuple(qkeys))
        reason = _text(out[1])
        index = int(out[2]) - 1
        kind: Sequence[QuotaCheck | BucketCheck | ConcurrencyCheck] = (
            quotas if reason == "quota" else buckets if reason == "rate" else caps
        )
        scope = kind[index].scope if 0 <= index < len(kind) else "?"
        return Refusal(reason, scope, int(out[3]))

    def release_later(self, lease: SharedLease, tokens: int) -> None:
        """Free the lease's slots and count its tokens, in the background (never waited on)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (shutdown): the slots expire after lease_ttl
        task = loop.create_task(self._do_release(lease, tokens))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _do_release(self, lease: SharedLease, tokens: int) -> None:
        if not lease.concurrency_keys and (tokens <= 0 or not lease.quota_keys):
            return
        try:
            await self._release(
                keys=[*lease.concurrency_keys, *lease.quota_keys],
                args=[len(lease.concurrency_keys), lease.lease_id, max(0, int(tokens)), QUOTA_TTL_S],
            )
        except redis_errors.RedisError as exc:
            # The slots expire by themselves; the tokens of this call are lost to the count.
            self.errors += 1
            log.debug("team store: release failed (%s)", exc.__class__.__name__)
        except OSError:
            self.errors += 1

    async def usage(self, scope: str) -> tuple[int, int]:
        """Today's (requests, tokens) of one quota scope (for `doctor`, tests)."""
        raw = await self._client.hmget(self.quota_key(self.day(), scope), ["r", "t"])
        return int(raw[0] or 0), int(raw[1] or 0)

    async def ping(self) -> bool:
        try:
            return bool(await self._client.ping())
        except (redis_errors.RedisError, OSError, asyncio.TimeoutError):
            return False

    # --- health ------------------------------------------------------------------------------

    def _down(self, exc: BaseException) -> None:
        self.errors += 1
        if not self.available:
            return
        self.available = False
        self.outages += 1
        log.warning(
            "team store unreachable (%s); using the fallback limits until it answers again",
            exc.__class__.__name__,
        )
        if self.on_change is not None:
            self.on_change(False)
        with contextlib.suppress(RuntimeError):
            self._probe = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        while not self.available:
            await asyncio.sleep(RECONNECT_S)
            with contextlib.suppress(redis_errors.RedisError, OSError):
                await self._client.connection_pool.disconnect()
            if await self.ping():
                self.available = True
                log.warning("team store reachable again; shared limits apply")
                if self.on_change is not None:
                    self.on_change(True)

    async def aclose(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        with contextlib.suppress(redis_errors.RedisError, OSError, RuntimeError):
            await self._client.aclose()

    def snapshot(self) -> dict[str, object]:
        return {
            "available": self.available,
            "outages": self.outages,
            "round_trips": self.round_trips,
            "errors": self.errors,
        }


def _lim(v: int | None) -> int:
    return -1 if v is None else int(v)


def _text(v: object) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


__all__ = [
    "BucketCheck",
    "ConcurrencyCheck",
    "QuotaCheck",
    "RedisStore",
    "Refusal",
    "SharedLease",
    "StoreUnavailable",
]
