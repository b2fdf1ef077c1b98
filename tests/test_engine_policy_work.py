"""The engine policy's predicted work (``tlop.backends.engine_policy``) for LogGP/pLogP schedules
and for stage elements that run reductions, and the API's tiering of dataflow schedules."""

import math

import tlop
from tlop.backends import engine_policy
from tlop.backends.binding import bind_mapping
from tlop.backends.interp import Interpreter

SEQ4 = tlop.sequential(4)


def _work(h, P, profile=None):
    env = bind_mapping(h.ir, h.bind({"P": float(P), "m": 1.0}), SEQ4)
    return engine_policy.predicted_work(h.module.program, h.ir, env, profile, SEQ4)


def _loggp_profile():
    from tlop.runtime.profile import profile_from_dict

    grid = [0.0, 1024.0, 65536.0, 1e9]
    return profile_from_dict({
        "tlop_profile": 1, "name": "test-loggp", "metadata": {},
        "interpolation": {"m_below": "linear", "m_beyond": "linear", "tau_beyond": "proportional",
                          "nonnegative": True, "out_of_grid": "allow"},
        "channels": {"shm": {"transmission": "shm", "description": "b"}, "net": {"transmission": "tcp", "description": "b"}},
        "bind": {}, "tables": {"gamma": {"*": {"m": grid, "values": [1e-6 + 2e-10 * x for x in grid]}}},
        "scalars": {"L": {"*": 5e-6}, "o": {"*": 1e-6}, "g": {"*": 2e-6}, "G": {"*": 1e-9}}, "fits": {}})


def test_a_dataflow_schedule_runs_every_one_of_its_identical_stages():
    taulop = tlop.load("taulop/allgather")["ring"]
    loggp = tlop.load("loggp/allgather")["ring"]
    # the same text: τ-Lop prices its P − 1 identical stages once, the dataflow engines run each
    assert _work(taulop, 8) == engine_policy.STAGE_UNITS + 8
    assert _work(loggp, 8) == 7 * (1 + engine_policy.STAGE_UNITS + 8)
    assert _work(loggp, 64) == 63 * (1 + engine_policy.STAGE_UNITS + 64)
    # ``(P - 1) * stage {…}``: τ-Lop prices the stage once and multiplies, the dataflow engines run it P − 1 times
    seg = {"P": 8.0, "m": 8.0 * 4096, "seg": 4096.0}
    t_ring, d_ring = tlop.load("taulop/allreduce")["ring_segm"], tlop.load("loggp/allreduce")["ring_segm"]
    t_work, d_work = (engine_policy.predicted_work(h.module.program, h.ir, bind_mapping(h.ir, h.bind(seg), SEQ4), None, SEQ4)
                      for h in (t_ring, d_ring))
    assert d_work > 4 * t_work  # m = P·seg: n = 1, so two of its three stages run P − 1 = 7 times (τ-Lop: once)
    # and the dataflow interpreter is priced at its own rate per unit
    env = bind_mapping(loggp.ir, loggp.bind({"P": 64.0, "m": 1.0}), SEQ4)
    choice = engine_policy.choose(loggp.module.program, loggp.ir, env, 1, mapping=SEQ4)
    assert choice.interp_s == engine_policy.interp_seconds(choice.work, 1, True) > \
        engine_policy.interp_seconds(choice.work, 1, False)


SOURCE = '''
import "taulop/platform.tlop"
algorithm plain(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1 where p > 0: send p -> 0 : m }
algorithm searched(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1 where p > (min q in 0 .. P - 1: q): send p -> 0 : m }
algorithm bounded(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 1 .. (sum q in 0 .. P - 1: 1) - 1: send p -> 0 : m }
'''


def test_reductions_an_element_runs_are_work_estimated_without_evaluating_them():
    import pathlib

    mod = tlop.loads(SOURCE, base=str(pathlib.Path(tlop.__file__).resolve().parent.parent / "stdlib"))
    for P in (8, 64):
        # each of the P elements runs a P-term reduction in its condition
        assert _work(mod["searched"], P) - _work(mod["plain"], P) == P * P
        # a bound that runs a reduction is not evaluated: P iterations, and the reduction's P terms
        assert _work(mod["bounded"], P) == _work(mod["plain"], P) + P
    # the stdlib's node-leader schedule: predicted (cheaply, without evaluating its O(P^3) bounds)
    # far above the compile cost, so a single point goes native
    smp = tlop.load("taulop/smp")["allreduce_smp"]
    env = bind_mapping(smp.ir, smp.bind({"P": 64.0, "m": 1.0}), tlop.sequential(8))
    choice = engine_policy.choose(smp.module.program, smp.ir, env, 1, mapping=tlop.sequential(8))
    assert choice.engine == "jit" and choice.work > 1e7


def test_the_api_tiers_a_dataflow_schedule_and_agrees_with_the_interpreter(monkeypatch):
    # the rule, not the constants: an interpreter predicted far slower than compiling compiles at once
    monkeypatch.setattr(engine_policy, "INTERP_S_PER_UNIT", 1.0)
    prof = _loggp_profile()
    h = tlop.load("loggp/allgather")["ring"]
    mapping = tlop.sequential(8)
    v = h.evaluate(prof, mapping=mapping, P=64, m=65536.0)
    entry = h._last_entry
    assert entry is not None and entry.ev is not None  # LogGP schedules are tiered (were not)
    assert h.evaluate(prof, mapping=tlop.sequential(8), P=64, m=65536.0) == v  # native, fresh mapping
    env = bind_mapping(h.ir, h.bind({"P": 64, "m": 65536.0}), mapping)
    ref = Interpreter(h.module.program, prof, mapping).eval(h.ir.body, env)
    assert math.isclose(v, ref, rel_tol=1e-12)
