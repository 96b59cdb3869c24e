"""``serve``'s garbage collector: start-up objects frozen, new garbage still
collected. In a child process, so this test session's collector is left as it was."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import gc, json
from papersift.serve import settle_heap

kept = [[i] for i in range(5000)]  # made at start-up, alive for good
settle_heap()
frozen = gc.get_freeze_count()

class Node:
    pass

a, b = Node(), Node()
a.peer, b.peer = b, a  # a cycle made while serving, then dropped
del a, b
print(json.dumps({"frozen": frozen, "collected": gc.collect(),
                  "tracked_after": len(gc.get_objects())}))
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
