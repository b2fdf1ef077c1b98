"""Scalar calling forms of a compiled evaluator against a plain Python function.

Prints, for each calling form of ``ev = compile_algorithm(taulop/bcast, binomial_bcast)`` —
keywords, positional, a channel by name, a default omitted, a numpy scalar — the time per call
and its ratio to a plain Python function ``def plain(P, m, c=0): return P * m`` called with the
same arguments, both measured in this run (interleaved rounds, best of each).  Target: every
ratio <= 2.

``--options`` also measures the ways of reaching the native wrapper that were weighed (see
bench/RESULTS.md): the evaluator class (a ``functools.partial`` subclass), a plain class whose
``__call__`` is the builtin, the builtin itself, the other calling convention, a Python closure
generated per signature, and ctypes with a cached prototype.

Run: ``python bench/bench_calls.py [--options]`` (about 20 s).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import os
import sys
import tempfile
import timeit

import numpy as np

import tlop
from tlop.backends.jit import compile_algorithm

ROUNDS = 7
NUMBER = 100_000


def best(stmts: dict, g: dict, number: int = NUMBER, rounds: int = ROUNDS) -> dict:
    """Seconds per call of each statement: the best of ``rounds`` interleaved rounds."""
    timers = {k: timeit.Timer(s, globals=g) for k, s in stmts.items()}
    out = {k: float("inf") for k in stmts}
    for _ in range(rounds):
        for k, t in timers.items():
            out[k] = min(out[k], t.timeit(number) / number)
    return out


def forms(ev, plain) -> list:
    """(label, evaluator statement, plain statement) for each calling form."""
    return [
        ("keywords", "ev(P=16, m=1024.0, c=0)", "plain(P=16, m=1024.0, c=0)"),
        ("positional", "ev(16, 1024.0, 0)", "plain(16, 1024.0, 0)"),
        ("channel name", "ev(P=16, m=1024.0, c='shm')", "plain(P=16, m=1024.0, c='shm')"),
        ("default omitted", "ev(P=16, m=1024.0)", "plain(P=16, m=1024.0)"),
        ("numpy scalar", "ev(P=16, m=m64)", "plain(P=16, m=m64)"),
        ("int arguments", "ev(P=16, m=1024)", "plain(P=16, m=1024)"),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--options", action="store_true", help="also measure the mechanisms weighed")
    args = ap.parse_args()
    os.environ.setdefault("TLOP_CACHE_DIR", tempfile.mkdtemp(prefix="tlop-bench-calls-"))
    met = tlop.default_profile()
    mod = tlop.load("taulop/bcast")
    ev = compile_algorithm(mod.program, "binomial_bcast", met)
    ref = mod["binomial_bcast"].evaluate(met, P=16, m=1024.0)

    def plain(P, m, c=0):
        return P * m

    g = {"ev": ev, "plain": plain, "m64": np.float64(1024.0)}
    for _, s, _ in forms(ev, plain):  # every form answers, and answers the interpreter's value
        assert eval(s, g) == ref, s
    print(f"python {sys.version.split()[0]}; {ev!r}")
    print(f"{'form':18s} {'evaluator':>10s} {'plain':>8s} {'ratio':>6s}")
    worst = 0.0
    for label, s_ev, s_plain in forms(ev, plain):
        r = best({"ev": s_ev, "plain": s_plain}, g)
        ratio = r["ev"] / r["plain"]
        worst = max(worst, ratio)
        print(f"{label:18s} {r['ev'] * 1e9:8.0f} ns {r['plain'] * 1e9:6.0f} ns {ratio:6.2f}")
    print(f"worst ratio {worst:.2f} (target <= 2.00)")
    if args.options:
        options(ev, g)
    return 0


def options(ev, g) -> None:
    """The mechanisms weighed for reaching native code from a Python call."""
    from tlop.backends.jit import pywrap
    from tlop.backends.jit.tables import status_words

    fn = ev.func  # the builtin (the running interpreter's convention)

    class PlainClass:  # an ordinary class whose __call__ is the builtin (slot_tp_call path)
        __call__ = fn

    other = "fastcall" if pywrap.CONVENTION == "varargs" else "varargs"
    alt = pywrap.NativeCall("alt", ev._tabs, ev._scal, ev._names, [i.default for i in ev._infos],
                            [i.channel for i in ev._infos], list(ev.program.channels),
                            status_words(len(ev.layout.tables)), (ev.layout,), convention=other)
    alt.set_fallback(ev._call_slow)
    for combo, code in ev._codes.items():
        alt.set_code([v for _, v in combo], code.addrs[f"{code.sym}_batch"])

    class AltPartial(functools.partial):
        pass

    # a Python function generated for the signature, calling the builtin positionally
    src = ("def gen(P=None, m=None, c=0.0):\n"
           "    if type(P) in T and type(m) in T and type(c) in T:\n"
           "        return fn(P, m, c)\n"
           "    return slow(P=P, m=m, c=c)\n")
    ns = {"T": frozenset((float, int)), "fn": fn, "slow": ev._call_slow}
    exec(compile(src, "<generated binder>", "exec"), ns)  # noqa: S102 - benchmark only
    # ctypes with a cached prototype: the batch loop for one point
    code = ev._primary
    buf = (ctypes.c_double * 4)()
    ptrs = (ctypes.c_void_p * 4)(*[ctypes.addressof(buf) + 8 * k for k in range(4)])
    strides = (ctypes.c_int64 * 4)()
    out = ctypes.c_double()
    st = (ctypes.c_int64 * status_words(len(ev.layout.tables)))()
    batch = code.batch
    tabs, scal = ev._tabs, ev._scal

    def via_ctypes(P, m, c=0.0):
        buf[0], buf[1], buf[2] = P, m, c
        batch(0, 1, ptrs, strides, tabs, scal, ctypes.byref(out), st)
        return out.value

    g = dict(g, pc=PlainClass(), fn=fn, alt=AltPartial(alt.function), gen=ns["gen"], via_ctypes=via_ctypes)
    stmts = {
        "plain Python function": "plain(P=16, m=1024.0)",
        "evaluator (partial subclass)": "ev(P=16, m=1024.0)",
        "plain class, __call__ = builtin": "pc(P=16, m=1024.0)",
        "the builtin itself": "fn(P=16, m=1024.0)",
        f"partial subclass, {other} convention": "alt(P=16, m=1024.0)",
        "generated Python closure": "gen(P=16, m=1024.0)",
        "ctypes, cached prototype": "via_ctypes(P=16, m=1024.0)",
    }
    for k, s in stmts.items():
        assert k.startswith("plain Python") or eval(s, g) == g["ev"](P=16, m=1024.0), s
    r = best(stmts, g, number=50_000, rounds=5)
    print("\nmechanisms (keyword call P=16, m=1024.0)")
    base = r["plain Python function"]
    for k, v in r.items():
        print(f"  {k:40s} {v * 1e9:8.0f} ns  {v / base:6.2f}x")


if __name__ == "__main__":
    sys.exit(main())
