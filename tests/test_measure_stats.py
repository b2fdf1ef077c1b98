"""Statistics and the adaptive stopping rule of tlop measure (no MPI)."""

import itertools
import math

import numpy as np
import pytest

from tlop.runtime.measure.stats import Rule, median_ci, stop_reason, summarize


def test_summarize_known_values():
    x = [5.0, 1.0, 3.0, 2.0, 4.0]
    s = summarize(x)
    assert s["n"] == 5 and s["min"] == 1.0 and s["median"] == 3.0 and s["mean"] == 3.0
    assert s["ci_low"] <= 3.0 <= s["ci_high"]
    assert s["p95"] == pytest.approx(np.percentile(x, 95))
    assert s["outliers"] == 0


def test_summarize_flags_but_keeps_outliers():
    x = [1.0] * 50 + [1.1] * 50 + [100.0]
    s = summarize(x)
    assert s["outliers"] == 1
    assert s["n"] == 101
    assert s["mean"] > 1.5          # the outlier was not dropped


def test_summarize_empty():
    s = summarize([])
    assert s["n"] == 0 and math.isnan(s["median"])


def test_median_ci_covers_the_true_median():
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        x = np.sort(rng.exponential(1.0, 60))
        lo, hi = median_ci(x, 0.95)
        hits += lo <= math.log(2) <= hi
    assert 0.90 <= hits / 400 <= 0.995


def test_stop_rule_min_max_and_convergence():
    rule = Rule(eps=0.05, cl=0.95, min_n=10, max_n=100, time_cap=10.0, warmup=0)
    assert stop_reason([1.0] * 5, rule, 0.0) is None            # below min_n
    assert stop_reason([1.0] * 10, rule, 0.0) == "converged"    # zero spread
    noisy = list(np.random.default_rng(0).uniform(0.5, 1.5, 20))
    assert stop_reason(noisy, rule, 0.0) is None                 # CI far too wide
    assert stop_reason(noisy, rule, 11.0) == "time_cap"
    assert stop_reason(list(np.random.default_rng(0).uniform(0.5, 1.5, 100)), rule, 0.0) in ("max_n", "converged")


def test_stop_rule_gives_up_on_very_slow_points():
    rule = Rule(eps=0.01, min_n=30, max_n=100, time_cap=1.0)
    assert stop_reason([1.0, 2.0, 3.0], rule, 5.0) == "time_cap"
    assert stop_reason([1.0, 2.0], rule, 5.0) is None


class _OneRank:
    """A communicator of one rank (what adaptive_pair needs of mpi4py's)."""

    def Get_rank(self):
        return 0

    def Get_size(self):
        return 1

    def bcast(self, obj, root=0):
        return obj


def test_adaptive_pair_alternates_short_batches_until_both_stop():
    from tlop.runtime.measure.engine import PAIR_BATCH, adaptive_pair

    calls = []
    rng = np.random.default_rng(3)

    def kernel(name, spread):
        def run(n):
            calls.append((name, n))
            return 1e-5 * (1 + spread * rng.random(n))
        return run

    clock = itertools.count(0.0, 1e-3)
    rule = Rule(eps=0.03, min_n=20, max_n=2000, time_cap=1e9, warmup=2)
    (a, ra), (b, rb) = adaptive_pair(_OneRank(), kernel("a", 0.01), kernel("b", 0.5), rule, True, lambda: next(clock))
    # warm-up, then strictly alternating batches of at most PAIR_BATCH iterations, a first
    assert calls[:2] == [("a", 2), ("b", 2)]
    timed = calls[2:]
    assert [c[0] for c in timed] == ["a", "b"] * (len(timed) // 2)
    assert all(n <= PAIR_BATCH for _, n in timed) and [n for _, n in timed[::2]] == [n for _, n in timed[1::2]]
    # the steady kernel converges early but keeps being sampled while the noisy one needs more
    assert len(a) == len(b) == sum(n for _, n in timed[::2]) > rule.min_n
    assert ra == rb == "converged" and len(b) > 2 * rule.min_n
    assert stop_reason(a[:rule.min_n].tolist(), rule, 0.0) == "converged"
