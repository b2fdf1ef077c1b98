"""JIT vs interpreter on every stdlib algorithm: random points inside and outside the table
grids, P = 1, m = 0, huge P; scalar calls and batch calls; errors agree too."""

import math

import numpy as np
import pytest

import tlop
from tlop import ir
from tlop.backends.binding import bind_arguments
from tlop.runtime.diagnostics import TlopError
from tlop.backends.jit import compile_algorithm

from _jit_helpers import agree, interp_point, jit_point, make_profile

MODULES = ["taulop/bcast", "taulop/allgather", "taulop/scatter", "taulop/p2p",
           "plogp/bcast", "plogp/scatter", "loggp/p2p"]


def _plogp_profile():
    met = tlop.load_profile("metropolis")
    g = met.table("L", "ib")
    o = met.table("o", "ib")
    m = [float(x) for x in g.m]
    vals = [float(a + b) for a, b in zip(g.values[:, 0], o.values)]
    return make_profile("plogp-from-metropolis", tables={"g": {"*": {"m": m, "values": vals}}},
                        scalars={"L": {"*": 8e-6}})


def _loggp_profile():
    return make_profile("loggp-test", scalars={"L": {"*": 5e-6}, "o": {"*": 1.5e-6},
                                               "g": {"*": 2e-6}, "G": {"*": 8e-10}})


def _profiles_for(module):
    if module.startswith("taulop"):
        return [tlop.load_profile("metropolis"), tlop.load_profile("lusitania")]
    if module.startswith("plogp"):
        return [_plogp_profile()]
    return [_loggp_profile()]


def _log_loops_only(alg):
    """True when every reduction runs over O(log P) indices (safe for huge P)."""
    for n in ir.walk(alg.body):
        if isinstance(n, ir.Reduce) and not any(isinstance(k, ir.Fn) and k.name == "log2" for k in ir.walk(n.hi)):
            return False
    return True


def _points(alg, rng, n=40):
    pts = []
    for k in range(n):
        p = {}
        for prm in alg.params:
            if prm.type == "int":
                p[prm.name] = float(rng.choice([1, 2, 3, 5, 8, 13, 16, 31, 64, 100, 257]))
            elif prm.type == "bytes":
                p[prm.name] = float(rng.choice([0, 1, 7, 1024, 3000, 65536, 1e5, 4194304, 5e6, 1e8, 3.3e9]))
            elif prm.type == "real":
                p[prm.name] = float(rng.uniform(0, 10))
        if k % 7 == 0 and "P" in p and _log_loops_only(alg):
            p["P"] = float(rng.choice([2 ** 40, 2 ** 40 + 3, 10 ** 15]))
        pts.append(p)
    return pts


CASES = [(mod, name) for mod in MODULES for name in tlop.load(mod).own_algorithms]


@pytest.mark.parametrize("module,name", CASES, ids=[f"{m}:{n}" for m, n in CASES])
def test_stdlib_agreement(module, name):
    mod = tlop.load(module)
    program = mod.program
    alg = program.algorithms[name]
    mappings = [None]
    if any(p.per_rank for p in alg.params):
        # a per-rank argument (gatherv's counts): refused cleanly, the interpreter evaluates it
        from tlop.backends.jit import NotCompilable
        with pytest.raises(NotCompilable, match="per-rank argument"):
            compile_algorithm(program, name, _profiles_for(module)[0], mapping="sequential(4)")
        return
    if ir.has_schedule(alg.body):
        # τ-Lop schedules and dataflow programs (LogGP, pLogP): every kind of mapping
        from tlop.runtime.mapping import layout_from_dict
        mappings = [tlop.sequential(4), tlop.round_robin(3),
                    layout_from_dict({"tlop_layout": 1, "ranks": [{"node": k % 3} for k in range(13)]})]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    dataflow = program.model in ("loggp", "plogp", "loggph") and ir.has_schedule(alg.body)
    for profile, mapping in [(pr, mp) for pr in _profiles_for(module) for mp in mappings]:
        ev = compile_algorithm(program, name, profile, mapping=mapping)
        pts = _points(alg, rng, 40 if mapping is None else 15)
        if dataflow:
            # the reference prices a dataflow program event by event in Python (~0.1 ms a send):
            # points of at most 64 ranks and 32 segments keep the oracle to seconds
            # (tests/test_jit_dataflow.py and bench/bench_dataflow_jit.py cover large P)
            for p in pts:
                if "P" in p:
                    p["P"] = min(p["P"], 64.0)
                if p.get("seg", 0) > 0 and p.get("m", 0) > 0:
                    p["seg"] = max(p["seg"], float(math.ceil(p["m"] / 32)))
        valid = []
        for p in pts:
            try:
                env = bind_arguments(program, alg, p)
                if mapping is not None:
                    from tlop.backends.binding import bind_mapping
                    bind_mapping(alg, env, mapping)
            except TlopError:
                with pytest.raises(TlopError):
                    ev(**p)
                continue
            want = interp_point(program, alg, profile, env, mapping)
            got = jit_point(ev, p)
            if isinstance(want, TlopError):
                assert isinstance(got, TlopError), (p, got, want)
            else:
                assert not isinstance(got, TlopError), (p, got, want)
                assert agree(got, want), (p, got, want)
                valid.append((p, want))
        # the same points through the batch path, as arrays
        if valid:
            names = [prm.name for prm in alg.params if prm.type != "channel"]
            arrays = {k: np.array([p[k] for p, _ in valid]) for k in names if k in valid[0][0]}
            out = ev.batch(**arrays)
            for r, (_, want) in zip(out, valid):
                assert agree(float(r), want)


def test_channel_arguments_and_specialisations():
    """A channel parameter: default, by name, by index — each its own specialisation."""
    mod = tlop.load("taulop/bcast")
    prof = tlop.load_profile("metropolis")
    ev = mod["binomial_bcast"].compile(prof)
    h = mod["binomial_bcast"]
    for c in ("shm", "net", 0, 1):
        for P in (1, 2, 6, 64):
            want = h.evaluate(prof, P=P, m=5000.0, c=c)
            assert agree(ev(P=P, m=5000.0, c=c), want)
    out = ev.batch(P=np.array([2, 4, 8]), m=np.array([[10.0], [1e6]]), c="net")
    assert out.shape == (2, 3)
    want = h.evaluate(prof, P=np.array([2, 4, 8]), m=np.array([[10.0], [1e6]]), c="net")
    assert np.allclose(out, want, rtol=1e-12, atol=0)
