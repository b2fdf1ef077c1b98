"""Out-of-grid warnings at native speed (issue 24; the default ``out_of_grid = "warn"``).

A lookup outside a table's measured grid warns (once per table and evaluation).  The compiled
evaluator used to issue that warning by re-running the reference interpreter on the point, so
a call that went out of the grid cost what the interpreter costs.  Printed: the time per call
of the binomial broadcast (``taulop/bcast binomial``, m = 1 MiB, one node: ``sequential(P)``,
so the concurrency τ of the last stages is past lusitania's measured columns) on lusitania
under ``out_of_grid="warn"`` (the default) against the same profile with ``"allow"`` (no
warning), for the compiled evaluator (closed form, and native enumeration with
``closed_forms=False``) and the tiered API (``h.evaluate``); the ratio warn / allow is the
price of the warning (1 is the goal).  Each call is checked to warn with the interpreter's
text and to return the interpreter's value.  CPU time, best of interleaved rounds.

Run: ``python bench/bench_oog_warn.py`` (about 10 s; 35 s before this change, when each warning
re-ran the interpreter).
"""

from __future__ import annotations

import math
import time
import warnings

import tlop
from tlop.backends.binding import as_mapping, bind_mapping
from tlop.backends.interp import Interpreter
from tlop.runtime.errors import OutOfGridWarning

PS = (1 << 10, 1 << 20)
ROUNDS = 5


def _texts(w) -> list:
    return [str(x.message) for x in w if issubclass(x.category, OutOfGridWarning)]


def _per_call(fn, reps: int) -> float:
    best = math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(ROUNDS):
            t = time.process_time()
            for _ in range(reps):
                fn()
            best = min(best, (time.process_time() - t) / reps)
    return best


def _reps(fn) -> int:
    """Calls per round: about 50 ms of them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.process_time()
        fn()
        probe = time.process_time() - t
    return max(1, min(5000, int(0.05 / max(probe, 1e-6))))


def main() -> None:
    warn = tlop.load_profile("lusitania")
    allow = warn.with_interpolation(out_of_grid="allow")
    h = tlop.load("taulop/bcast")["binomial"]
    m = float(1 << 20)
    print(f"{'P':>8} {'path':28} {'warn ms':>10} {'allow ms':>10} {'warn/allow':>11}")
    for P in PS:
        mp = as_mapping(f"sequential({P})")
        env = bind_mapping(h.ir, h.bind({"P": P, "m": m}), mp)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            warn.new_evaluation()
            ref = Interpreter(h.module.program, warn, mp).eval(h.ir.body, env)
        ref_text = _texts(w)
        assert ref_text, "the interpreter does not warn: the case is not out of grid"
        cases = []
        for label, cf in (("compiled, closed form", True), ("compiled, enumeration", False)):
            evs = {prof: h.compile(prof, mapping=mp, closed_forms=cf) for prof in (warn, allow)}
            cases.append((label, {prof: (lambda ev=ev: ev(P=P, m=m)) for prof, ev in evs.items()}))
        cases.append(("API h.evaluate (tiered)",
                      {prof: (lambda prof=prof: h.evaluate(prof, mapping=mp, P=P, m=m)) for prof in (warn, allow)}))
        for label, fns in cases:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fns[warn]()  # compile / tier up
                fns[allow]()
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                warn.new_evaluation()
                v = fns[warn]()
            assert _texts(w) == ref_text, (label, _texts(w), ref_text)
            assert math.isclose(v, ref, rel_tol=1e-12), (label, v, ref)
            tw, ta = (_per_call(fns[p], _reps(fns[p])) for p in (warn, allow))
            print(f"{P:8} {label:28} {tw * 1e3:10.4f} {ta * 1e3:10.4f} {tw / ta:11.2f}", flush=True)
    print("goal: warn/allow ~1 (the warning costs no re-evaluation)")


if __name__ == "__main__":
    main()
