"""Evaluation speed of schedules: the counting reduction against the oracle, and the targets.

Prints, for each case, the time per evaluation of the schedule by

* ``oracle``: the reference interpreter with the oracle's reduction (enumeration, then one
  ``lexsort`` by phase, group, size; ``Interpreter(…, schedules="sort")``);
* ``count``: the same enumeration with the counting reduction (``tlop.backends.schedule_count``:
  ``bincount`` per contention group, ``W ‖ T(m)`` for groups of equal sizes), which the API and
  ``--engine auto`` use;
* ``api``: ``AlgorithmHandle.evaluate`` (argument binding, the mapping's checks, the counting path);
* ``closed``: the interpreter on the hand-written closed form of the same cost (a few table
  lookups; for the ring across nodes the costs differ, its work is the scale),

all measured in this run (interleaved rounds, best of each), with the issue's target for the case
and the ratios oracle/count and count/target (≤ 1 meets the target).  The targets (ring allgather
P = 256, Q = 8: ≤ 10 µs; P = 4096: ≤ 100 µs; binomial broadcast at P = 2^20: ≤ 5 ms) were set for
native evaluation; the reference library takes 145–675 ms for the first.  Each case first checks
that both reductions agree to 1e-12.

Run: ``python bench/bench_schedules.py`` (about 15 s).
"""

from __future__ import annotations

import math
import time

import tlop
from tlop.backends.binding import as_mapping, bind_mapping
from tlop.backends.interp import Interpreter

ROUNDS = 5


def _best(fns: dict, n: int) -> dict:
    best = {k: float("inf") for k in fns}
    for _ in range(ROUNDS):
        for k, fn in fns.items():
            t = time.perf_counter()
            for _ in range(n):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t) / n)
    return best


def _engine(handle, prof, args, mapping, schedules):
    mp = as_mapping(mapping)
    env = bind_mapping(handle.ir, handle.bind(dict(args)), mp)
    program, body = handle.module.program, handle.ir.body
    return lambda: Interpreter(program, prof, mp, schedules).eval(body, env)


def main() -> None:
    prof = tlop.load_profile("lusitania")
    ag, bc = tlop.load("taulop/allgather"), tlop.load("taulop/bcast")
    m = 1 << 20
    cases = [  # name, handle, args, mapping, closed form handle, closed args, target (s), repeats
        ("ring P=256 sequential(8)", ag["ring"], dict(P=256, m=m), "sequential(8)",
         ag["ring_allgather_node"], dict(P=256, m=m), 10e-6, 20),
        ("ring P=4096 sequential(8)", ag["ring"], dict(P=4096, m=m), "sequential(8)",
         ag["ring_allgather_node"], dict(P=4096, m=m), 100e-6, 10),
        ("binomial P=4096 one node", bc["binomial"], dict(P=4096, m=m), "sequential(4096)",
         bc["binomial_bcast"], dict(P=4096, m=m), None, 5),
        ("binomial P=2^20 one node", bc["binomial"], dict(P=1 << 20, m=m), "sequential(1048576)",
         bc["binomial_bcast"], dict(P=1 << 20, m=m), 5e-3, 1),
    ]
    print(f"{'case':26} {'oracle':>10} {'count':>10} {'api':>10} {'closed':>10} {'target':>9} "
          f"{'oracle/count':>12} {'count/target':>12}")
    for name, h, args, mapping, closed, cargs, target, n in cases:
        oracle = _engine(h, prof, args, mapping, "sort")
        count = _engine(h, prof, args, mapping, "count")
        a, b = oracle(), count()
        assert math.isclose(a, b, rel_tol=1e-12), (name, a, b)
        t = _best({"oracle": oracle, "count": count,
                   "api": lambda: h.evaluate(prof, mapping=mapping, **args),
                   "closed": lambda: closed.evaluate(prof, **cargs)}, n)
        tgt = f"{target * 1e3:7.3f}ms" if target else f"{'-':>9}"
        over = f"{t['count'] / target:12.1f}" if target else f"{'-':>12}"
        print(f"{name:26} " + " ".join(f"{t[k] * 1e3:8.3f}ms" for k in ("oracle", "count", "api", "closed"))
              + f" {tgt} {t['oracle'] / t['count']:12.1f} {over}")


if __name__ == "__main__":
    main()
