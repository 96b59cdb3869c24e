"""``serve``'s garbage collector: start-up objects frozen, new garbage still
collected. In a child process, so this test session's collector is left as it was."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import gc, json, weakref
from papersift.serve import settle_heap

kept = [[i] for i in range(5000)]  # made at start-up, alive for good
settle_heap()
frozen = gc.get_freeze_count()

class Node:
    pass

a, b = Node(), Node()
a.peer, b.peer = b, a  # a cycle made while serving, then dropped
del a, b
collected = gc.collect()

c, d = Node(), Node()
c.peer, d.peer = d, c  # another, left to the collector's own schedule
gone = weakref.ref(c)
del c, d
held = [[i] for i in range(25_000)]  # requests in flight hold objects for a while
print(json.dumps({"frozen": frozen, "collected": collected,
                  "tracked_after": len(gc.get_objects()) - len(held) - 1,
                  "young_threshold": gc.get_threshold()[0], "cycle_left": gone() is not None}))
"""


def test_start_up_objects_are_frozen_and_new_cycles_still_collected() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(out.stdout)
    assert result["frozen"] >= 5000  # the list and its 5,000 lists at least
    assert result["collected"] >= 2  # the two nodes (and their dicts) of the dropped cycle
    # Frozen objects are out of the collector's sight: what it tracks now is a small rest.
    assert result["tracked_after"] < result["frozen"]
    # Young collections run less often than Python's default (every 700 allocations), yet
    # on their own: the second cycle went once enough objects were made.
    assert result["young_threshold"] > 700
    assert not result["cycle_left"]
