"""A bounded in-process cache: the most recently used entries, up to a size."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    """At most ``size`` entries; reading or writing one makes it the most recent, and a write
    past ``size`` drops the least recent. Not locked: callers shared by threads hold a lock."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, V] = OrderedDict()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[Hashable]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable, default: V | None = None) -> V | None:
        """The entry of ``key`` (now the most recent), or ``default``."""
        if key not in self._items:
            return default
        self._items.move_to_end(key)
        return self._items[key]

    def put(self, key: Hashable, value: V) -> V:
        """Keep ``value`` under ``key`` as the most recent entry; returns ``value``."""
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return value

    def compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The entry of ``key``, or ``compute()`` kept under it."""
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        return self.put(key, compute())

    def values(self) -> list[V]:
        """The entries, least recent first (their order unchanged)."""
        return list(self._items.values())

    def clear(self) -> None:
        self._items.clear()
