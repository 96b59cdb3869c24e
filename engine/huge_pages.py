"""Transparent huge pages for the vector graph, which a search reads all over.

An HNSW top 1,000 reads the vectors and links of a few thousand nodes scattered over a
1.2 GB graph (663k papers): on 4 KB pages most of those reads also miss the TLB. On 2 MB
pages the graph's top 1,000 took 10-20% less CPU (bench/search_steps.py; bench/RESULTS.md,
issue 23, session 21). Linux gives memory huge pages when asked (``madvise(MADV_HUGEPAGE)``,
which its usual ``transparent_hugepage`` setting, "madvise", waits for), and
``MADV_COLLAPSE`` (Linux 6.1+) does it at once instead of whenever ``khugepaged`` gets
there. Only anonymous memory qualifies here (collapsing the mapped graph file gave EINVAL),
hence the server reads the graph into memory (``engine.ann.read``).

Only buffers known to be the graph's are advised. The model's weights gained 5-9% on huge
pages too, but their memory cannot be told apart from malloc's heaps, which on huge pages pay
for every trim and regrowth (the whole heap so, by glibc's ``glibc.malloc.hugetlb=1``, made
keyword searches dearer: 5.1 -> 5.5 ms, median of four runs each; RESULTS.md).

Best effort: elsewhere (no ``madvise``, THP off) nothing happens and nothing fails.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path

MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25  # Linux 6.1+; EINVAL before
HUGE_PAGE = 2 << 20
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
