"""The window method's growth rule (runtime/measure/window.py), on one fake rank and a fake clock
(no MPI): ranks descheduled while they wait for a window (a loaded machine) make windows invalid
but do not grow them — on a loaded 2-core machine they used to grow to 18 ms, and the valid
samples were then milliseconds long — while calls that outlast half a window do grow it."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from tlop.runtime.measure.stats import Rule


class _Clock:
    """Time advances 10 ns per reading and by a call's duration; after a 'descheduled' call it
    jumps 1 ms at the second reading — the first is the call's end, the second is the wait for
    the next window: the rank lost its core while it waited."""

    def __init__(self):
        self.t = 0.0
        self.pending = 0

    def __call__(self) -> float:
        self.t += 1e-8
        if self.pending:
            self.pending -= 1
            if not self.pending:
                self.t += 1e-3
        return self.t


class _OneRank:
    def Get_rank(self):
        return 0

    def Get_size(self):
        return 1

    def gather(self, x, root=0):
        return [x]

    def Iprobe(self, *a, **k):
        return False

    def allreduce(self, x, op=None):
        return x

    def Barrier(self):
        pass

    def bcast(self, x, root=0):
        return x

    def Reduce(self, send, recv, op=None, root=0):
        recv[:] = send


@pytest.fixture
def fake_mpi(monkeypatch):
    fake = types.SimpleNamespace(MAX="max")
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", fake)
    if "mpi4py" in sys.modules:
        monkeypatch.setattr(sys.modules["mpi4py"], "MPI", fake, raising=False)
    else:
        monkeypatch.setitem(sys.modules, "mpi4py", types.SimpleNamespace(MPI=fake))
    return fake


def _run(duration, deschedule_every):
    from tlop.runtime.measure.window import windowed

    clock = _Clock()
    n = [0]

    def call():
        n[0] += 1
        clock.t += duration(n[0])
        if deschedule_every and n[0] % deschedule_every == 0:
            clock.pending = 2

    rule = Rule(eps=1e-9, min_n=20, max_n=200, time_cap=1e9, warmup=2)
    return windowed(_OneRank(), call, rule, clock)


def test_descheduled_waits_invalidate_windows_without_growing_them(fake_mpi):
    got = _run(lambda i: 2e-6, deschedule_every=2)       # every other call is followed by a 1 ms wait
    assert got["invalid"] * 2 > got["windows"]          # most windows dropped (the rule before grew
    assert got["window_s"] == pytest.approx(4 * 2e-6 + 20e-6, rel=0.05)   # them to 224 µs), none grew
    assert np.median(got["samples"]) == pytest.approx(2e-6, rel=0.05)


def test_calls_longer_than_half_the_window_grow_it(fake_mpi):
    # the probe sees 2 µs calls (window ≈ 28 µs); then every call takes 40 µs and overruns its window
    got = _run(lambda i: 2e-6 if i <= 7 else 40e-6, deschedule_every=0)
    assert got["window_s"] > 40e-6
    assert np.median(got["samples"]) == pytest.approx(40e-6, rel=0.05)
