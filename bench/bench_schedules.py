"""Evaluation speed of schedules: native stages and the counting reduction against the oracle.

Prints, for each case, the time per evaluation of the schedule by

* ``oracle``: the reference interpreter with the oracle's reduction (enumeration, then one
  ``lexsort`` by phase, group, size; ``Interpreter(…, schedules="sort")``);
* ``count``: the same enumeration with the counting reduction (``tlop.backends.schedule_count``);
* ``enum``: the compiled evaluator enumerating the stages in native loops
  (``compile(profile, mapping=…, closed_forms=False)``, ``tlop.backends.jit.schedgen``), called
  as ``ev(P=…, m=…)``;
* ``native``: the compiled evaluator as the JIT builds it by default
  (``AlgorithmHandle.compile(profile, mapping=…)``): the closed form of the schedule where one is
  derived and its conditions hold (``tlop.analysis.closedform``; the ring and the binomial tree
  under a sequential mapping), the native enumeration otherwise;
* ``api``: ``AlgorithmHandle.evaluate`` once it has tiered up to native code
  (``tlop.backends.tiering``: as the engine policy decides for a long loop) — what a
  Python user's loop of evaluations costs, argument handling included;
* ``closed``: the interpreter on the hand-written closed form of the same cost (a few table
  lookups; for the ring across nodes the costs differ, its work is the scale),

all measured in this run (interleaved rounds, best of each), with the issue's target for the case
(ring allgather P = 256, Q = 8, sequential: ≤ 10 µs per evaluation through the Python API;
P = 4096: ≤ 100 µs; binomial broadcast at P = 2^20: ≤ 5 ms; the reference library takes
145–675 ms for the first) and the ratios oracle/native (the speed-up), api/target,
native/target and enum/target (≤ 1 meets the target).  Each case first checks that the oracle,
the counting reduction, the enumeration, the native code and the API agree to 1e-12.

Run: ``python bench/bench_schedules.py`` (about 30 s; compiles on the first run, then loads
the code from the cache).
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
         ag["ring_allgather_seq"], dict(P=256, m=m, Q=8), 10e-6, 200),
        ("ring P=4096 sequential(8)", ag["ring"], dict(P=4096, m=m), "sequential(8)",
         ag["ring_allgather_seq"], dict(P=4096, m=m, Q=8), 100e-6, 40),
        ("binomial P=4096 one node", bc["binomial"], dict(P=4096, m=m), "sequential(4096)",
         bc["binomial_bcast"], dict(P=4096, m=m), None, 20),
        ("binomial P=2^20 one node", bc["binomial"], dict(P=1 << 20, m=m), "sequential(1048576)",
         bc["binomial_bcast"], dict(P=1 << 20, m=m), 5e-3, 2),
    ]
    cols = ("oracle", "count", "enum", "native", "api", "closed")
    print(f"{'case':26} " + " ".join(f"{c:>10}" for c in cols) + f" {'target':>9} {'oracle/native':>13} "
          f"{'api/target':>10} {'native/target':>13} {'enum/target':>11}")
    for name, h, args, mapping, closed, cargs, target, n in cases:
        oracle = _engine(h, prof, args, mapping, "sort")
        count = _engine(h, prof, args, mapping, "count")
        ev = h.compile(prof, mapping=mapping)
        enum = h.compile(prof, mapping=mapping, closed_forms=False)
        h.evaluate(prof, mapping=mapping, **args)  # the API's first call (the engine policy may compile)
        entry = h.module.native_tier.entry(h.ir, prof, mapping)
        if entry.ev is None:  # a cheap point: tier up as a long loop of such calls would
            h.module.native_tier._compile(entry, prof, mapping)
        values = [oracle(), count(), enum(**args), ev(**args), h.evaluate(prof, mapping=mapping, **args)]
        assert all(math.isclose(v, values[0], rel_tol=1e-12) for v in values), (name, values)
        t = _best({"oracle": oracle, "count": count, "enum": lambda: enum(**args), "native": lambda: ev(**args),
                   "api": lambda: h.evaluate(prof, mapping=mapping, **args),
                   "closed": lambda: closed.evaluate(prof, **cargs)}, n)
        tgt = f"{target * 1e3:7.3f}ms" if target else f"{'-':>9}"
        api = f"{t['api'] / target:10.2f}" if target else f"{'-':>10}"
        nat = f"{t['native'] / target:13.2f}" if target else f"{'-':>13}"
        enu = f"{t['enum'] / target:11.2f}" if target else f"{'-':>11}"
        print(f"{name:26} " + " ".join(f"{t[k] * 1e3:8.3f}ms" for k in cols)
              + f" {tgt} {t['oracle'] / t['native']:13.1f} {api} {nat} {enu}")


if __name__ == "__main__":
    main()
