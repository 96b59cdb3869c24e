"""Transparent huge pages for the large, long-lived buffers a search reads all over.

Embedding a query streams the model's ~42 MB of weights and an HNSW search reads ~1,000
scattered 1.5 KB vectors of a 1 GB graph: with 4 KB pages most of those reads also miss the
TLB. Backed by 2 MB pages, the query embedding took 8-9% less CPU and the graph's top 1,000
21% less at 663k papers (bench/RESULTS.md, issue 23, session 21). Linux gives a buffer huge
pages when asked (``madvise(MADV_HUGEPAGE)``, which its usual ``transparent_hugepage``
setting, "madvise", waits for) and ``MADV_COLLAPSE`` (Linux 6.1+) does it at once instead of
whenever ``khugepaged`` gets there. Only anonymous memory qualifies: a mapped file (the
keyword index; the graph as CLI commands open it) stays on 4 KB pages.

Everything here is best effort: elsewhere (no ``/proc``, no ``madvise``, THP off) nothing
happens and nothing fails.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25  # Linux 6.1+; EINVAL before
HUGE_PAGE = 2 << 20
MAPS = Path("/proc/self/maps")
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@cache
def _madvise() -> Callable[[int, int, int], int] | None:
    """libc's ``madvise``, where there is one and transparent huge pages are not off."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        if "[never]" in THP.read_text():
            return None
        libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols: libc's among them
    except OSError:
        return None
    fn = libc.madvise
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    madvise: Callable[[int, int, int], int] = fn
    return madvise


def advise(address: int, length: int, *, wait: bool = True) -> bool:
    """Back the whole 2 MB pages inside ``[address, address + length)`` with huge pages;
    whether the kernel took the advice. The collapse copies the memory (0.3-3 s for the
    1.2 GB graph at 663k papers, as free huge pages are found): without ``wait`` it runs on
    a thread of its own (the call releases the GIL) while the memory is in use."""
    madvise = _madvise()
    start = (address + HUGE_PAGE - 1) & -HUGE_PAGE
    end = (address + length) & -HUGE_PAGE
    if madvise is None or end <= start:
        return False
    if madvise(start, end - start, MADV_HUGEPAGE) != 0:
        return False
    # Else khugepaged collapses it in time (Linux before 6.1; 16 MB per 10 s by default).
    if wait:
        madvise(start, end - start, MADV_COLLAPSE)
    else:
        collapse = threading.Thread(
            target=madvise, args=(start, end - start, MADV_COLLAPSE), name="huge-pages",
            daemon=True,
        )  # fmt: skip
        collapse.start()
    return True


def anonymous_regions() -> set[tuple[int, int]]:
    """(start, end) of the process's private writable memory not backed by a file."""
    try:
        lines = MAPS.read_text().splitlines()
    except OSError:
        return set()
    regions = set()
    for line in lines:
        fields = line.split()
        # address perms offset dev inode [path]; anonymous: no path, or the brk heap
        if fields[1].startswith("rw") and (len(fields) == 5 or fields[5] == "[heap]"):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            regions.add((start, end))
    return regions


def _new_parts(before: set[tuple[int, int]], after: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """The address ranges of ``after``'s regions that no region of ``before`` covered (a
    new mapping next to an old one may have merged with it)."""
    old = sorted(before)
    parts = []
    for start, end in sorted(after):
        at = start
        for s, e in old:
            if e <= at or s >= end:
                continue
            if s > at:
                parts.append((at, s))
            at = max(at, e)
        if at < end:
            parts.append((at, end))
    return parts


@contextlib.contextmanager
def new_memory_on_huge_pages(what: str, min_bytes: int = 2 * HUGE_PAGE) -> Iterator[None]:
    """Put the anonymous memory that appears during the block (``what`` made it: a model's
    weights, say) on huge pages, in ranges of at least ``min_bytes``. Memory another thread
    mapped meanwhile is advised too, which does it no harm."""
    if _madvise() is None:
        yield
        return
    before = anonymous_regions()
    yield
    new = [(s, e) for s, e in _new_parts(before, anonymous_regions()) if e - s >= min_bytes]
    advised = sum(e - s for s, e in new if advise(s, e - s))
    if advised:
        log.debug("huge pages for %s: %.0f MB", what, advised / 2**20)
