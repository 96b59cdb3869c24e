"""A thread-safe least-recently-used cache that counts its hits and misses: the search
results' (``engine.result_cache``) and the finished pages' (``server.page_cache``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from cachetools import LRUCache

V = TypeVar("V")


class CountedLRU(Generic[V]):
    """Up to ``maxsize`` entries, or with ``getsizeof`` up to that total size; a read counts
    as a use. An entry larger than the whole cache is not kept."""

    def __init__(self, maxsize: int, getsizeof: Callable[[V], int] | None = None) -> None:
        self.hits = 0
        self.misses = 0
        self._items: LRUCache[Hashable, V] = LRUCache(maxsize, getsizeof)
        self._lock = threading.Lock()

    @property
    def currsize(self) -> int:
        """The entries kept, or their total size with ``getsizeof``."""
        return int(self._items.currsize)

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
            return found

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            if self._items.getsizeof(value) <= self._items.maxsize:
                self._items[key] = value  # the least recently used go to make room
