"""Recent search results, reused while neither index has changed.

A results page is asked for again and again (a popular query, the back button, a feed
reader polling a search feed); answering it from here takes microseconds instead of a
search. Entries are keyed by the request and by the generations of both indexes, so an
import, a harvest or a new embedding checkpoint retires them all at once.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

from cachetools import LRUCache

from papersift.engine.results import SearchResult


class ResultCache:
    """A thread-safe LRU of ``SearchResult``s; ``size`` 0 keeps nothing. Results are shared
    between callers and must not be changed."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.hits = 0
        self.misses = 0
        self._items: LRUCache[Hashable, SearchResult] = LRUCache(max(size, 1))
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> SearchResult | None:
        if self.size <= 0:
            return None
        with self._lock:
            found = self._items.get(key)  # a read makes it the most recently used
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
            return found

    def put(self, key: Hashable, result: SearchResult) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[key] = result  # the least recently used goes when full
