"""Issue 14, item 2: the term limit is on the whole evaluation, and Ctrl-C stops native code.

* nested reductions multiply: ``sum i in 1 .. P: sum j in 1 .. P: …`` with P = 3,000,000 is
  refused before it runs, by both engines, with the same message (each loop alone is within
  the per-loop limit); a triangular nest is counted exactly (just below and just above the
  limit); the count follows ``if`` branches and ``let`` bindings;
* a long native evaluation (schedule stages in a ``sum``, minutes uninterrupted) stops on
  SIGINT with KeyboardInterrupt, in a subprocess whose whole run is bounded;
* SIGINT outside native code still reaches Python (the native handler chains to CPython's)."""

import signal
import textwrap
import time

import numpy as np
import pytest

from _jit_helpers import interrupt_until_it_stops

import tlop
from tlop.backends.interp import MAX_TERMS
from tlop.runtime.diagnostics import TlopError

SOURCE = '''
import "taulop/platform.tlop"
algorithm nest(P: int >= 1, m: bytes) = sum i in 1 .. P: sum j in 1 .. P: L[shm](m, 1) / (i + j)
algorithm tri(P: int >= 1, m: bytes) = sum i in 1 .. P: sum j in 1 .. i: L[shm](m, 1) / (i + j)
algorithm branchy(P: int >= 1, big: int) =
    if big == 1 then (sum i in 1 .. P: sum j in 1 .. P: 1s) else (sum i in 1 .. P: 1s)
algorithm bound(P: int >= 1) = let n = P * P in sum i in 1 .. P: sum j in 1 .. n: 1s
algorithm few(P: int >= 1) = sum i in 1 .. P: sum j in 1 .. 3: i * 1s
'''
MOD = tlop.loads(SOURCE, "budget.tlop")


def _both(name, **args):
    out = []
    for run in (lambda: MOD[name].evaluate("lusitania", **args),
                lambda: MOD[name].compile("lusitania")(**args)):
        try:
            out.append(run())
        except TlopError as err:
            out.append(err)
    return out


def test_nested_sums_over_the_budget_are_refused_by_both_engines():
    a, b = _both("nest", P=3000000, m=100)
    assert isinstance(a, TlopError) and isinstance(b, TlopError)
    assert str(a) == str(b)
    assert "9,000,003,000,000 reduction terms in all" in str(a) and "longer than tlop evaluates" in str(a)
    assert "budget.tlop:3:" in str(a)


def test_a_triangular_nest_is_counted_exactly():
    # Σ_{i=1}^{P} (1 + i) = P + P(P+1)/2 terms: 4,470 -> 9,997,155 (runs); 4,472 -> 10,006,100 (refused)
    assert 4470 + 4470 * 4471 // 2 <= MAX_TERMS < 4472 + 4472 * 4473 // 2
    a, b = _both("tri", P=4472, m=100)
    assert isinstance(a, TlopError) and str(a) == str(b) and "10,006,100" in str(a)
    ev = MOD["tri"].compile("lusitania")
    assert ev(P=4470, m=100) > 0


def test_the_count_follows_branches_and_bindings():
    assert _both("branchy", P=5000, big=0) == [5000.0, 5000.0]
    a, b = _both("branchy", P=5000, big=1)
    assert isinstance(a, TlopError) and str(a) == str(b)
    a, b = _both("bound", P=300)  # 300 · (1 + 90,000) terms
    assert isinstance(a, TlopError) and str(a) == str(b) and "27,000,300" in str(a)
    assert _both("bound", P=20) == [8000.0, 8000.0]


def test_arrays_are_counted_per_point():
    out = MOD["few"].evaluate("lusitania", P=np.array([1.0, 10.0, 100.0]))
    assert list(out) == [3.0, 165.0, 15150.0]
    with pytest.raises(TlopError, match="reduction terms in all"):
        MOD["tri"].evaluate("lusitania", P=np.array([10.0, 5000.0]), m=1.0)
    with pytest.raises(TlopError, match="reduction terms in all"):
        MOD["tri"].compile("lusitania").batch(P=np.array([10.0, 5000.0]), m=1.0)


LONG = textwrap.dedent('''
    import sys, time, tlop
    import numpy as np
    mod = tlop.loads("""
    import "taulop/platform.tlop"
    algorithm spin(P: int >= 2, m: bytes, K: int) over map: mapping =
        sum k in 1 .. K: stage { par p in 0 .. P - 1: send p -> (p + k) % P : m }
    """, "spin.tlop")
    # the native enumeration (the shift has a closed form, which would finish at once)
    ev = mod["spin"].compile("lusitania", mapping="sequential(8)", closed_forms=False)
    ev(P=64, m=1000.0, K=2)
    t = time.monotonic()
    n = 100000  # points of 4096 x 1000 sends (8.2e6 elements with the par bindings): within the budget per point, hours in all
    try:
        # "ready" inside the try: every SIGINT the parent sends after reading it is caught here
        print("ready", flush=True)
        ev.batch(P=np.full(n, 4096.0), m=np.full(n, 1000.0), K=np.full(n, 1000.0))
    except KeyboardInterrupt:
        import os, signal
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's next SIGINT, if any, changes nothing
        print(f"interrupted after {time.monotonic() - t:.2f}s", flush=True)
        os._exit(3)
    print("finished", flush=True)
''')


def test_ctrl_c_stops_a_long_native_evaluation():
    # uninterrupted: 100,000 points of 4,096 ranks x 1,000 stages
    out, err, returncode = interrupt_until_it_stops(LONG)
    assert "finished" not in out, "the evaluation ended before the signal: make it longer"
    assert returncode == 3, (out, err)
    assert "interrupted after" in out


def test_ctrl_c_stops_the_whole_batch_not_only_the_running_point():
    """A point that saw Ctrl-C stops its loops; the batch must stop too.  Before it did, every
    later point ran up to its own first poll (2^14 iterations, ~0.1 ms here): with 4·10^6 points
    that is minutes after the signal even on an idle machine, past the handshake's bound — so
    this fails without the batch-level stop, whatever the load.  (Arrays for every argument: a
    scalar argument would compile a variant after "ready", and a signal during that compile is
    Python's to handle.)"""
    source = LONG.replace("n = 100000", "n = 4 * 10 ** 6\nargs = {k: np.full(n, v) for k, v in (('P', 4096.0), ('m', 1000.0), ('K', 1000.0))}").replace(
        "ev.batch(P=np.full(n, 4096.0), m=np.full(n, 1000.0), K=np.full(n, 1000.0))", "ev.batch(**args)")
    assert "n = 4 * 10 ** 6" in source and "ev.batch(**args)" in source  # the arrays exist before "ready"
    out, err, returncode = interrupt_until_it_stops(source)
    assert "finished" not in out
    assert returncode == 3, (out, err)
    assert "interrupted after" in out


LONG_SUM = textwrap.dedent('''
    import sys, time
    import numpy as np
    import tlop
    mod = tlop.loads("""
    import "taulop/platform.tlop"
    algorithm spin(K: int >= 1, m: bytes) = sum i in 1 .. K: L[shm](m, 2) / i
    """, "spin_sum.tlop")
    ev = mod["spin"].compile("lusitania")
    ev(K=10, m=1000.0)
    t = time.monotonic()
    try:  # 10^4 points of 10^7 terms, each with a loop-invariant table search LLVM hoists
        # "ready" inside the try: every SIGINT the parent sends after reading it is caught here
        print("ready", flush=True)
        ev.batch(K=np.full(10000, 10.0 ** 7), m=np.full(10000, 1000.0))
    except KeyboardInterrupt:
        print(f"interrupted after {time.monotonic() - t:.2f}s", flush=True)
        sys.exit(3)
    print("finished", flush=True)
''')


@pytest.mark.parametrize("program", [LONG, LONG_SUM], ids=["stages", "reduction"])
def test_ctrl_c_stops_a_long_native_loop_the_optimiser_has_worked_on(program):
    """The poll survives optimisation, in stage loops and in a reduction whose invariant table
    search is hoisted out of it.  A handshake (SIGINT repeated from "ready" on until the child
    reacts), not a sleep: one signal 0.5 s after "ready" could land before the native loop
    started, or, on a loaded machine, before the child entered its ``try``."""
    out, err, returncode = interrupt_until_it_stops(program)
    assert "finished" not in out, "the evaluation ended before the signal: make it longer"
    assert returncode == 3, (out, err)
    assert "interrupted after" in out


def test_sigint_outside_native_code_still_reaches_python():
    from tlop.backends.jit import interrupt

    # independent of the tests before it: Python's own handler, then the native one in front of
    # it as every compile installs it (a test or plugin may have replaced SIGINT's handler)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        MOD["few"].compile("lusitania")
        assert interrupt.install() and interrupt.installed()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
            for _ in range(1000):  # the Python handler runs at the next bytecode check
                time.sleep(0.001)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_large_modules_are_optimised_less_and_huge_ones_refused():
    from tlop.backends.jit import NotCompilable
    from tlop.backends.jit.engine import MAX_IR_CHARS, engine, opt_level

    assert [opt_level(n) for n in (1_000, 200_000, 200_001, 2_000_001, MAX_IR_CHARS)] == [3, 3, 1, 0, 0]
    assert opt_level(MAX_IR_CHARS + 1) is None
    with pytest.raises(NotCompilable, match="too large to compile"):
        engine().compile_ir(" " * (MAX_IR_CHARS + 1), "huge")
