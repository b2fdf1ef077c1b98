"""The segment-size search (004 §3: s = m/2^i, then local hill climbing) finds the minimum that
exhaustive search over every s = 1 B … m finds, on a grid of segmented pLogP broadcasts."""

from __future__ import annotations

import numpy as np
import pytest

import tlop
from tlop.apps.segsearch import candidates, search_segment


def test_candidates_are_m_over_powers_of_two():
    assert candidates(1024).tolist() == [1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1]
    assert candidates(1000).tolist() == [1000, 500, 250, 125, 62, 31, 15, 7, 3, 1]


@pytest.mark.parametrize("alg", ["chain_segmented", "binomial_segmented", "flat_segmented"])
def test_search_equals_exhaustive_search(alg):
    ev = tlop.load("plogp/bcast")[alg].compile("localhost-example")
    for P in (4, 16, 64):
        for m in (1000, 1024, 65536, 100000, 1 << 20):
            def cost(s):
                return ev.batch(P=np.full(len(s), float(P)), m=np.full(len(s), float(m)), seg=s)
            s, v, evaluations = search_segment(cost, m)
            every = cost(np.arange(1, m + 1, dtype=float))
            assert v == pytest.approx(float(every.min()), rel=1e-12), (P, m)
            assert v == pytest.approx(float(every[s - 1]), rel=1e-12)
            assert evaluations < 200  # a search, not an enumeration


def test_a_valley_between_candidates_is_found_at_the_smallest_size_of_its_segment_count():
    m = 4096
    cost = lambda s: (s - 700.0) ** 2 + 5.0  # noqa: E731  (a valley between 512 and 1024)
    s, v, _ = search_segment(cost, m)
    assert (s, v) == (683, (683 - 700.0) ** 2 + 5.0)  # 683 = ⌈4096/6⌉: the smallest s with 6 segments near 700
