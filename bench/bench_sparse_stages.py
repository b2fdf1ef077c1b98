"""Native enumeration of sparse stages: a user-written pipelined chain grows linearly in P.

The schedule (written here, as a user would): ``m`` split into ``S = 16`` segments passed down a
chain of ``P`` ranks; stage ``k`` holds the sends ``i -> i + 1`` of the segments ``j = k − i`` in
flight, so at most 16 sends a stage, ``P + 14`` stages, ``16 (P − 1)`` sends in all.  Each stage's
key space is the mapping's node count (times phases and channels), so a stage whose cost
depended on the key space (``tlop.backends.jit.schedreduce`` clearing a table of the whole space)
would make the evaluation grow as P²; clearing only the touched slots makes it O(sends).

Printed for P ∈ {256, 1024, 4096, 16384} under ``sequential(8)`` and one node
(``sequential(P)``): the compiled evaluator's time per evaluation
(``compile(profile, mapping=…, closed_forms=False)``: native enumeration; best of interleaved
rounds, CPU time: the machine is shared), the time per send, and the growth factor against the previous P (4× the ranks: linear
is 4, the goal; P² would be 16).  The first P's value is checked against the interpreter.

Part 2 (issue 24 item 9): the binomial broadcast (``taulop/bcast binomial``) at P = 2^20 by
native enumeration (``closed_forms=False``), one node (``sequential(1048576)``) and
``sequential(8)``, CPU time per evaluation against the 5 ms target.  The profile is lusitania
with ``out_of_grid="allow"``: under the default ``"warn"`` the compiled evaluator re-runs the
interpreter on every call whose concurrency falls outside the measured columns (to issue the
warning), which at one node (τ up to 2^19) costs what the interpreter costs.

Run: ``python bench/bench_sparse_stages.py`` (about 30 s; compiles on the first run).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import tlop
from tlop.backends.binding import as_mapping, bind_mapping
from tlop.backends.interp import Interpreter

SOURCE = '''
import "taulop/platform.tlop"

/// A user-written pipelined chain: m split into S segments, segment j leaves rank i at step i + j.
algorithm pchain(P: int >= 2, m: bytes, S: int >= 1 = 16) over map: mapping =
    stages k in 0 .. P + S - 3 {
        par j in 0 .. S - 1 where k - j >= 0 and k - j < P - 1:
            send k - j -> k - j + 1 : m / S
    }
'''
PS = (256, 1024, 4096, 16384)
ROUNDS = 5


def main() -> None:
    prof = tlop.load_profile("lusitania")
    stdlib = Path(tlop.__file__).resolve().parent.parent / "stdlib"
    h = tlop.loads(SOURCE, base=str(stdlib))["pchain"]
    m = float(1 << 20)
    print(f"{'mapping':16} {'P':>6} {'sends':>7} {'ms/eval':>9} {'ns/send':>8} {'growth (x4 P)':>14}")
    for which in ("sequential(8)", "one node"):
        prev = None
        for P in PS:
            mp = "sequential(8)" if which == "sequential(8)" else f"sequential({P})"
            ev = h.compile(prof, mapping=mp, closed_forms=False)
            v = ev(P=P, m=m)
            if P == PS[0]:
                mpo = as_mapping(mp)
                env = bind_mapping(h.ir, h.bind({"P": P, "m": m}), mpo)
                ref = Interpreter(h.module.program, prof, mpo).eval(h.ir.body, env)
                assert math.isclose(v, ref, rel_tol=1e-12), (v, ref)
            reps = max(1, int(2e5 // P))
            best = float("inf")
            for _ in range(ROUNDS):
                t = time.process_time()
                for _ in range(reps):
                    ev(P=P, m=m)
                best = min(best, (time.process_time() - t) / reps)
            sends = 16 * (P - 1)
            growth = f"{best / prev:14.2f}" if prev else f"{'-':>14}"
            print(f"{which:16} {P:6} {sends:7} {best * 1e3:9.3f} {best / sends * 1e9:8.1f} {growth}", flush=True)
            prev = best
    print("goal: growth ~4 per 4x P (linear in the sends), not 16 (quadratic)")
    binomial()


def binomial() -> None:
    prof = tlop.load_profile("lusitania").with_interpolation(out_of_grid="allow")
    h = tlop.load("taulop/bcast")["binomial"]
    P, m, target = 1 << 20, float(1 << 20), 5e-3
    print(f"\n{'binomial P=2^20':24} {'ms/eval':>9} {'ns/send':>8} {'/ 5 ms':>7}")
    for name, mp in (("one node", f"sequential({P})"), ("sequential(8)", "sequential(8)")):
        ev = h.compile(prof, mapping=mp, closed_forms=False)
        ev(P=P, m=m)
        best = float("inf")
        for _ in range(ROUNDS):
            t = time.process_time()
            for _ in range(3):
                ev(P=P, m=m)
            best = min(best, (time.process_time() - t) / 3)
        print(f"{name:24} {best * 1e3:9.3f} {best / (P - 1) * 1e9:8.1f} {best / target:7.2f}", flush=True)
    print("goal: <= 1.00 (5 ms per evaluation)")


if __name__ == "__main__":
    main()
