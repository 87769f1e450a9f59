"""The one bounded cache: the most recently used entries are kept, up to its size."""

from fairengine.lru import LRU


def test_a_write_past_the_size_drops_the_least_recently_used() -> None:
    cache: LRU[int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert list(cache) == ["a", "c"] and "b" not in cache and len(cache) == 2
    assert cache.get("b", -1) == -1


def test_compute_runs_once_per_kept_key() -> None:
    cache: LRU[int] = LRU(1)
    calls = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    assert cache.compute("k", compute) == cache.compute("k", compute) == 1
    cache.compute("other", compute)  # evicts "k"
    assert cache.compute("k", compute) == 3 and cache.values() == [3]
    cache.clear()
    assert len(cache) == 0
