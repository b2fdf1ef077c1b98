"""The counting reduction of schedule stages agrees with the oracle's sort.

:mod:`tlop.backends.schedule_count` (used by the API and ``--engine auto``) must give the cost the
oracle (``Interpreter(…, schedules="sort")``) gives, to 1e-12 relative, and fail exactly when the
oracle fails, with the same message.  Schedules are generated as IR: stages of concurrent ``par``
items whose sends follow shift (``p → (p + d) mod P``), xor (``p → p xor d``) and tree
(``p → p + d`` for ``p`` a multiple of ``2d``) patterns, in blocks and ``seq`` loops (several
phases), with equal or unequal sizes (zero included), weights, computations, under sequential,
round-robin and layout mappings and every contention key of the network channel; invalid sizes
and ranks check the errors."""

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tlop
from tlop import ir
from tlop.backends.interp import Interpreter
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.mapping import layout_from_dict

N, V = ir.Num, ir.Var
PLATFORM = (Path(tlop.__file__).parent.parent / "stdlib" / "taulop" / "platform.tlop").read_text()
PROGRAMS = {rule: tlop.loads(PLATFORM.replace("contention dst_node", f"contention {rule}")).program
            for rule in ("dst_node", "src_node", "either", "node", "all")}
PROFILES = [tlop.load_profile(n) for n in ("metropolis", "lusitania")]


def _b(op, a, b):
    return ir.Bin(op, a, b)


def _pattern(kind, d, P):
    """(where, destination) of rank ``p`` for a send pattern with distance ``d``."""
    p = V("p")
    if kind == "shift":
        return N(1.0), _b("%", _b("+", p, N(float(d))), N(float(P)))
    if kind == "xor":
        dst = _b("xor", p, N(float(d)))
        return _b("<", dst, N(float(P))), dst
    dst = _b("+", p, N(float(d)))  # tree: multiples of 2d send to p + d
    return _b("and", _b("==", _b("%", p, N(2.0 * d)), N(0.0)), _b("<", dst, N(float(P)))), dst


def _size(kind, m):
    p = V("p")
    if kind == "equal":
        return N(m)
    if kind == "by_rank":  # unequal inside most groups
        return _b("*", N(m), _b("+", N(1.0), _b("%", p, N(3.0))))
    return _b("*", N(m), _b("%", p, N(2.0)))  # zero for even ranks


SENDS = st.tuples(st.sampled_from(["shift", "xor", "tree"]), st.integers(1, 9),
                  st.sampled_from(["equal", "equal", "by_rank", "zeros"]),
                  st.sampled_from([0.0, 1.0, 1000.0, 65536.0, 1048576.0]),
                  st.sampled_from([1.0, 1.0, 2.0, 0.5]),
                  st.sampled_from(["one", "block", "seq"]),
                  st.booleans())  # a computation after the sends


def _item(spec, P):
    kind, d, skind, m, w, shape, comp = spec
    where, dst = _pattern(kind, d, P)
    send = ir.Send(V("p"), dst, _size(skind, m), N(w))
    if shape == "one":
        body = send
    elif shape == "block":
        body = ir.Block((send, ir.Send(V("p"), dst, N(m), N(1.0))))
    else:
        body = ir.Loop("seq", "k", N(0.0), N(2.0), N(1.0), send)
    if comp:
        body = ir.Block((body, ir.Compute(V("p"), N(1e-6 * (1 + d % 3)))))
    return ir.Loop("par", "p", N(0.0), N(float(P - 1)), where, body)


def _mapping(kind, Q, P, seed):
    if kind == "sequential":
        return tlop.sequential(Q)
    if kind == "round_robin":
        return tlop.round_robin(Q)
    rng = np.random.default_rng(seed)
    nodes = rng.integers(0, max(1, P // Q), size=P)
    return layout_from_dict({"tlop_layout": 1, "ranks": [{"node": int(n)} for n in nodes]})


def _run(program, profile, mapping, stage, P, schedules):
    try:
        return Interpreter(program, profile, mapping, schedules).eval(stage, {ir.RANKS: float(P)}, 1.0), None
    except TlopError as e:
        return None, str(e)


def _agree(program, profile, mapping, stage, P):
    want, werr = _run(program, profile, mapping, stage, P, "sort")
    got, gerr = _run(program, profile, mapping, stage, P, "count")
    assert gerr == werr
    if werr is None:
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-300), (got, want)
    return want


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SENDS, min_size=1, max_size=3), st.integers(2, 40), st.sampled_from([1, 2, 3, 4, 8]),
       st.sampled_from(["sequential", "round_robin", "layout"]), st.sampled_from(sorted(PROGRAMS)),
       st.sampled_from(PROFILES), st.integers(0, 1000))
def test_counting_agrees_with_the_oracle(specs, P, Q, mkind, rule, profile, seed):
    stage = ir.Stage(tuple(_item(s, P) for s in specs))
    _agree(PROGRAMS[rule], profile, _mapping(mkind, Q, P, seed), stage, P)


@pytest.mark.parametrize("size,dst", [(N(-1.0), V("p")), (N(8.0), _b("+", V("p"), N(1.0)))])
def test_counting_fails_as_the_oracle_fails(size, dst):
    stage = ir.Stage((ir.Loop("par", "p", N(0.0), N(7.0), N(1.0), ir.Send(V("p"), dst, size, N(1.0))),))
    want, err = _run(PROGRAMS["dst_node"], PROFILES[0], tlop.sequential(4), stage, 8, "sort")
    assert err is not None
    assert _run(PROGRAMS["dst_node"], PROFILES[0], tlop.sequential(4), stage, 8, "count") == (None, err)


@pytest.mark.parametrize("alg,P,mapping", [("ring", 64, "sequential(8)"), ("ring", 64, "round_robin(8)"),
                                           ("ring", 37, "sequential(4)")])
def test_stdlib_schedules_agree(alg, P, mapping):
    mod = tlop.load("taulop/allgather")
    prof = PROFILES[1]
    from tlop.backends.binding import as_mapping, bind_mapping

    mp = as_mapping(mapping)
    env = bind_mapping(mod[alg].ir, {"P": float(P), "m": 65536.0}, mp)
    sort = Interpreter(mod.program, prof, mp, "sort").eval(mod[alg].ir.body, env)
    assert math.isclose(mod[alg].evaluate(prof, P=P, m=65536.0, mapping=mapping), sort, rel_tol=1e-12)
    bc = tlop.load("taulop/bcast")
    env = bind_mapping(bc["binomial"].ir, {"P": float(P), "m": 65536.0, "root": 3.0}, mp)
    sort = Interpreter(bc.program, prof, mp, "sort").eval(bc["binomial"].ir.body, env)
    assert math.isclose(bc["binomial"].evaluate(prof, P=P, m=65536.0, root=3, mapping=mapping), sort,
                        rel_tol=1e-12)
