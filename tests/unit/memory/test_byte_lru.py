"""`ByteLRU`: least recently used out first, until the estimated bytes fit."""

from __future__ import annotations

from lsp_assist.memory import ENTRY_OVERHEAD, ByteLRU


def _lru(max_bytes: int, max_entries: int | None = None) -> ByteLRU[str, str]:
    return ByteLRU(max_bytes, lambda k, v: len(k) + len(v), max_entries)


def test_evicts_the_least_recently_used_until_the_bytes_fit() -> None:
    cost = 10 + ENTRY_OVERHEAD  # a 1-char key and a 9-char value
    lru = _lru(3 * cost)
    for k in "abc":
        lru.put(k, k * 9)
    assert lru.get("a") == "a" * 9  # now the most recent
    lru.put("d", "d" * 9)
    assert "b" not in lru and list(lru.keys()) == ["c", "a", "d"]
    assert lru.nbytes == 3 * cost and lru.evictions == 1


def test_a_replaced_or_removed_entry_gives_its_bytes_back() -> None:
    lru = _lru(10_000)
    lru.put("k", "x" * 100)
    lru.put("k", "y" * 10)
    assert lru.nbytes == 11 + ENTRY_OVERHEAD
    assert lru.pop("k") == "y" * 10 and lru.nbytes == 0
    lru.put("u1", "a")
    lru.put("u2", "b")
    lru.put("v1", "c")
    lru.discard_where(lambda k: k.startswith("u"))
    assert list(lru.keys()) == ["v1"] and lru.nbytes == 3 + ENTRY_OVERHEAD
    lru.clear()
    assert len(lru) == 0 and lru.nbytes == 0


def test_an_entry_larger_than_the_budget_is_not_kept_and_evicts_nothing() -> None:
    lru = _lru(1000)
    lru.put("small", "s")
    lru.put("huge", "h" * 5000)
    assert "huge" not in lru and "small" in lru


def test_the_entry_limit_holds_too() -> None:
    lru = _lru(10**9, max_entries=2)
    for k in "abcd":
        lru.put(k, k)
    assert list(lru.keys()) == ["c", "d"]


def test_many_inserts_stay_under_the_bound() -> None:
    lru = _lru(50_000)
    for i in range(5000):
        lru.put(f"key{i}", "v" * (i % 700))
        assert lru.nbytes <= 50_000
    assert lru.nbytes == sum(len(k) + len(v) + ENTRY_OVERHEAD for k, v in lru.items())
