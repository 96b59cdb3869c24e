"""``engine.ranking.Ranking``: the ranks of a page's papers in each list, and the exact-title
papers moved to the front, against plain Python over the same lists."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from papersift.engine.ranking import EMPTY, Ranking, ranks_on_page

unique_ids = st.lists(st.integers(0, 5000), unique=True, max_size=300)


@given(unique_ids, st.data())
def test_ranks_of_is_each_held_docids_position(ids: list[int], data: st.DataObject) -> None:
    # A page holds some of the list's papers (the fused list's, say) and some it lacks.
    held = data.draw(st.lists(st.sampled_from(ids), max_size=30)) if ids else []
    page = held + data.draw(st.lists(st.integers(0, 5000), max_size=10))
    ranking = Ranking.of(ids, [float(-i) for i in range(len(ids))])
    expected = {d: i + 1 for i, d in enumerate(ids) if d in set(page)}
    assert ranking.ranks_of(np.asarray(page, np.int64)) == expected


def test_ranks_on_page_per_list() -> None:
    keyword = Ranking.of([7, 3, 9, 1], [4.0, 3.0, 2.0, 1.0])
    semantic = Ranking.of([1, 8, 7], [0.9, 0.8, 0.7])
    page = [(1, 0.5), (7, 0.4), (5, 0.3)]
    assert ranks_on_page({"keyword": keyword, "semantic": semantic, "none": EMPTY}, page) == {
        "keyword": {7: 1, 1: 4},
        "semantic": {1: 1, 7: 3},
        "none": {},
    }
    assert ranks_on_page({"keyword": keyword}, []) == {"keyword": {}}


@given(unique_ids, st.lists(st.integers(0, 5000), unique=True, max_size=10))
def test_put_first_keeps_list_order_and_adds_the_missing(ids: list[int], first: list[int]) -> None:
    ranking = Ranking.of(ids, [float(len(ids) - i) for i in range(len(ids))])
    moved = ranking.put_first(first)
    held = [d for d in ids if d in set(first)]
    missing = [d for d in first if d not in set(ids)]
    assert moved.ids.tolist() == held + missing + [d for d in ids if d not in set(first)]
    assert sorted(moved.ids.tolist()) == sorted(set(ids) | set(first))
    assert all(s == 0.0 for s in moved.scores[len(held) : len(held) + len(missing)].tolist())
