"""Benchmark: 001's Monte-Carlo (10 000 runs × 50 clusters, the seven heuristics) against the
scalar reference (one problem at a time, :mod:`tlop.apps.gridcast.heuristics` + pricing) on
a sample of the same runs, measured in the same process.

    python bench/bench_gridcast.py            # 10 000 runs of 50 clusters (issue 11: <= 60 s)
    python bench/bench_gridcast.py --runs 2000

Prints the wall time of the vectorised simulation, the scalar reference's time per run (on
``--sample`` runs, extrapolated), their ratio, and the mean completion time per heuristic.
"""

import argparse
import time

import numpy as np

from tlop.apps.gridcast import HEURISTICS, Problem, price, schedule
from tlop.apps.gridcast.simulate import random_problems, simulate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--clusters", type=int, default=50)
    ap.add_argument("--sample", type=int, default=20, help="runs priced by the scalar reference")
    a = ap.parse_args()
    t0 = time.perf_counter()
    means = simulate([a.clusters], a.runs, seed=0)
    vec = time.perf_counter() - t0
    g, L, T = random_problems(np.random.default_rng(1), a.sample, a.clusters)
    t0 = time.perf_counter()
    for r in range(a.sample):
        p = Problem(g[r], L[r], T[r])
        for h in HEURISTICS:
            price(p, schedule(p, h))
    scalar_per_run = (time.perf_counter() - t0) / a.sample
    print(f"{a.runs} runs x {a.clusters} clusters, 7 heuristics: vectorised {vec:.1f} s "
          f"({vec / a.runs * 1e3:.2f} ms per run)")
    print(f"scalar reference: {scalar_per_run * 1e3:.1f} ms per run "
          f"(extrapolated {scalar_per_run * a.runs:.0f} s); ratio {scalar_per_run * a.runs / vec:.1f}x")
    for h in HEURISTICS:
        print(f"  {h:10s} {means[h][0]:.3f} s")


if __name__ == "__main__":
    main()
