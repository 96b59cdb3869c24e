"""Fusion against hand-worked examples."""

from __future__ import annotations

import pytest

from papersift.engine.fusion import convex, rrf


def test_rrf_hand_worked() -> None:
    keyword = [(1, 9.0), (2, 5.0), (3, 1.0)]
    semantic = [(3, 0.9), (1, 0.8), (4, 0.1)]
    fused = dict(rrf(keyword, semantic, k=60))
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)
    assert fused[4] == pytest.approx(1 / 63)
    assert [d for d, _ in rrf(keyword, semantic, k=60)] == [1, 3, 2, 4]


def test_convex_hand_worked() -> None:
    keyword = [(1, 10.0), (2, 6.0), (3, 2.0)]  # normalised 1.0, 0.5, 0.0
    semantic = [(3, 0.9), (4, 0.7), (1, 0.5)]  # normalised 1.0, 0.5, 0.0
    fused = dict(convex(keyword, semantic, weight=0.4))
    assert fused[1] == pytest.approx(0.6 * 1.0 + 0.4 * 0.0)
    assert fused[2] == pytest.approx(0.6 * 0.5)
    assert fused[3] == pytest.approx(0.6 * 0.0 + 0.4 * 1.0)
    assert fused[4] == pytest.approx(0.4 * 0.5)
    assert [d for d, _ in convex(keyword, semantic, 0.4)] == [1, 3, 2, 4]


def test_edge_cases() -> None:
    assert rrf([], []) == [] and convex([], [], 0.5) == []
    assert convex([(7, 3.0)], [], 0.5) == [(7, 0.5)]  # a single score normalises to 1
    assert [d for d, _ in rrf([(2, 1.0)], [(1, 1.0)])] == [1, 2]  # ties broken by id
