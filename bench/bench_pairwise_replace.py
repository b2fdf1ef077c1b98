"""MPICH's in-place all-to-all (``coll/alltoall mpich_pairwise_sendrecv_replace``) priced natively.

The schedule is one stage per pair of ranks, P(P − 1)/2 stages of one exchange (523,776 at
P = 1024); ``tlop tune`` prices it for the 14 message sizes of its grid at every P.  Printed per
P: the stages, the CPU seconds of one compiled batch over the 14 sizes (1 B … 64 MiB, ×4;
metropolis, ``sequential(nodes=4)`` as ``bench/bench_tune.py``), the nanoseconds per stage and
size, and the compile time; at P ≤ 64 the values are checked against the reference interpreter
(1e-12 relative).  Run the same script on an older tree for the before/after (see
bench/RESULTS.md).

Run: ``python bench/bench_pairwise_replace.py [--P 64 256 1024]``.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--P", type=int, nargs="+", default=[64, 256, 1024])
    a = ap.parse_args()
    warnings.simplefilter("ignore")  # 16 and 64 MiB are past metropolis' grid
    import tlop
    from tlop.backends.binding import as_mapping, bind_mapping
    from tlop.backends.interp import Interpreter

    prof = tlop.load_profile("metropolis")
    h = tlop.load("coll/alltoall", model="taulop")["mpich_pairwise_sendrecv_replace"]
    mp = as_mapping("sequential(nodes=4)")
    ms = np.array([4.0 ** k for k in range(14)])
    t0 = time.process_time()
    ev = h.compile(prof, mapping=mp)
    print(f"compile (or cache hit): {time.process_time() - t0:.3f} s CPU")
    print(f"{'P':>6} {'stages':>9} {'batch of 14 s':>14} {'ns/stage/size':>14}")
    for P in a.P:
        stages = P * (P - 1) // 2
        ev.batch(P=float(min(P, 8)), m=ms)  # warm
        t0 = time.process_time()
        got = ev.batch(P=float(P), m=ms)
        t = time.process_time() - t0
        if P <= 64:
            for m, v in zip(ms, got):
                env = bind_mapping(h.ir, h.bind({"P": P, "m": float(m)}), mp)
                ref = Interpreter(h.module.program, prof, mp).eval(h.ir.body, env)
                assert math.isclose(v, ref, rel_tol=1e-12), (P, m, v, ref)
        print(f"{P:6} {stages:9} {t:14.3f} {t / stages / len(ms) * 1e9:14.1f}", flush=True)


if __name__ == "__main__":
    main()
