"""Helpers shared by the JIT tests: in-memory profiles and the JIT-vs-interpreter comparison."""

import math

import numpy as np

from tlop.runtime.diagnostics import TlopError
from tlop.backends.interp import Interpreter
from tlop.runtime.profile import profile_from_dict

REL = 1e-12


def make_profile(name="jit-test", *, tables=None, scalars=None, channels=None, bind=None, **interp):
    policy = {"m_below": "linear", "m_beyond": "linear", "tau_beyond": "proportional",
              "nonnegative": True, "out_of_grid": "allow"}
    policy.update(interp)
    return profile_from_dict({
        "tlop_profile": 1, "name": name,
        "metadata": {"machine": "synthetic", "source": "tests/_jit_helpers.py"},
        "interpolation": policy,
        "channels": channels or {"shm": {"transmission": "shm", "description": "t"},
                                 "net": {"transmission": "tcp", "description": "t"}},
        "bind": bind or {}, "tables": tables or {}, "scalars": scalars or {}, "fits": {},
    })


def taulop_tables(rng, n_m=6, n_tau=4, channels=("shm", "net")):
    """Random noisy (non-monotone) o and L tables on a geometric m grid."""
    m = [float(4 ** i) for i in range(n_m)]
    tau = [float(t) for t in range(1, n_tau + 1)]
    tables = {"o": {}, "L": {}}
    for c in channels:
        tables["o"][c] = {"m": m, "values": [float(v) for v in rng.uniform(1e-7, 1e-5, n_m)]}
        tables["L"][c] = {"m": m, "tau": tau,
                          "values": [[float(v) for v in row] for row in rng.uniform(1e-7, 1e-3, (n_m, n_tau))]}
    return tables


def agree(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return True
    return abs(a - b) <= REL * max(abs(a), abs(b))


def interp_point(program, alg, profile, env, mapping=None):
    """The interpreter's answer at one point: a float, or the TlopError it raises (non-finite
    results — NaN, ±inf — count as errors, as in the API and the JIT); ``mapping`` for an
    algorithm over a process mapping (the oracle's sort reduces its stages)."""
    try:
        if mapping is not None:
            from tlop.backends.binding import bind_mapping

            env = bind_mapping(alg, env, mapping)
        with np.errstate(all="ignore"):
            r = Interpreter(program, profile, mapping, "sort").eval(alg.body, env)
    except TlopError as err:
        return err
    r = float(r)
    if not math.isfinite(r):
        return TlopError(f"not finite: {r}")
    return r


def jit_point(ev, args):
    try:
        return float(ev(**args))
    except TlopError as err:
        return err


def compare_point(program, alg, ev, profile, mapping, args):
    """One point through the compiled evaluator ``ev`` and the reference interpreter: the same
    error (message included, except for non-finite results) or agreeing values."""
    import pytest

    from tlop.backends.binding import bind_arguments, bind_mapping

    try:
        env = bind_mapping(alg, bind_arguments(program, alg, dict(args)), mapping)
    except TlopError as err:
        with pytest.raises(TlopError) as got:
            ev(**args)
        assert str(got.value) == str(err)
        return
    want = interp_point(program, alg, profile, env, mapping)
    got = jit_point(ev, args)
    if isinstance(want, TlopError):
        assert isinstance(got, TlopError), (args, got, want)
        if "not finite" not in str(want):
            assert str(got) == str(want)
    else:
        assert not isinstance(got, TlopError), (args, got, want)
        assert agree(got, want), (args, got, want)


def interrupt_until_it_stops(source: str):
    """Run ``python -c source`` (which prints "ready" just before it enters a long native
    evaluation and exits 3 on KeyboardInterrupt) and send SIGINT until it reacts: a handshake, not
    a sleep — a SIGINT that arrives before a native point starts counts as already seen there, so
    the signal is repeated (each one after the first finds the native loop running), within a
    bound a loaded machine cannot reach by accident.  Returns (stdout, stderr, returncode)."""
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-c", source], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out, err, proc.returncode
