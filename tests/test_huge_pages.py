"""``engine.huge_pages``: the kernel really backs advised memory with huge pages, and leaves
a range without a whole huge page alone.

Read back from ``/proc/self/smaps``: ``THPeligible`` is 1 for a region the kernel may give
huge pages, which under the usual "madvise" setting means one that was advised."""

from __future__ import annotations

import ctypes
import mmap
import re
import threading
from pathlib import Path

import pytest

from papersift.engine import huge_pages

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
pytestmark = pytest.mark.skipif(
    not THP.exists() or "[madvise]" not in THP.read_text(),
    reason="needs Linux with transparent huge pages on request (madvise)",
)
SIZE = 16 << 20


def _region(address: int) -> dict[str, int]:
    """The smaps counters of the mapping that holds ``address``."""
    found: dict[str, int] = {}
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = re.match(r"^([0-9a-f]+)-([0-9a-f]+) ", line)
        if head:
            inside = int(head[1], 16) <= address < int(head[2], 16)
        elif inside and line.split()[0] in ("THPeligible:", "AnonHugePages:"):
            found[line.split()[0].rstrip(":")] = int(line.split()[1])
    return found


def _private_memory() -> tuple[mmap.mmap, int]:
    """16 MB of private anonymous memory, written (so resident), and its address."""
    memory = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.write(b"x" * SIZE)
    view = (ctypes.c_char * SIZE).from_buffer(memory)
    address = ctypes.addressof(view)
    del view  # the mapping can be closed once no buffer points into it
    return memory, address


def test_advised_memory_goes_on_huge_pages() -> None:
    memory, address = _private_memory()
    try:
        assert _region(address)["THPeligible"] == 0  # not advised: 4 KB pages
        assert huge_pages.advise(address, SIZE)
        region = _region(address)
        assert region["THPeligible"] == 1
        # MADV_COLLAPSE (Linux 6.1+) makes them huge at once; before, khugepaged does later.
        if region["AnonHugePages"] == 0:
            pytest.skip("this kernel does not collapse on request (Linux < 6.1)")
        assert region["AnonHugePages"] >= 8 << 10  # kB: at least half of the 16 MB
    finally:
        memory.close()


def test_a_range_without_a_whole_huge_page_is_left_alone() -> None:
    memory, address = _private_memory()
    try:
        start = (address + huge_pages.HUGE_PAGE - 1) & -huge_pages.HUGE_PAGE
        assert not huge_pages.advise(start + 4096, huge_pages.HUGE_PAGE)
        assert _region(address)["THPeligible"] == 0
    finally:
        memory.close()


def test_without_waiting_the_collapse_runs_on_a_thread() -> None:
    memory, address = _private_memory()
    try:
        assert huge_pages.advise(address, SIZE, wait=False)
        for thread in threading.enumerate():
            if thread.name == "huge-pages":
                thread.join(timeout=60)
        region = _region(address)
        assert region["THPeligible"] == 1
        if region["AnonHugePages"] == 0:
            pytest.skip("this kernel does not collapse on request (Linux < 6.1)")
        assert region["AnonHugePages"] >= 8 << 10
    finally:
        memory.close()
