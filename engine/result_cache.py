"""Recent search results, reused while neither index has changed.

A results page is asked for again and again (a popular query, the back button, a feed
reader polling a search feed); answering it from here takes microseconds instead of a
search. Entries are keyed by the request and by the generations of both indexes, so an
import, a harvest or a new embedding checkpoint retires them all at once.
"""

from __future__ import annotations

from collections.abc import Hashable

from papersift.core.lru import CountedLRU
from papersift.engine.results import SearchResult


class ResultCache(CountedLRU[SearchResult]):
    """A thread-safe LRU of ``SearchResult``s; ``size`` 0 keeps nothing. Results are shared
    between callers and must not be changed."""

    def __init__(self, size: int) -> None:
        super().__init__(max(size, 1))
        self.size = size

    def get(self, key: Hashable) -> SearchResult | None:
        return super().get(key) if self.size > 0 else None

    def put(self, key: Hashable, value: SearchResult) -> None:
        if self.size > 0:
            super().put(key, value)
