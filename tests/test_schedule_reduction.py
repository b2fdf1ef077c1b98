"""A schedule stage is reduced by the one τ-Lop rule: the same numbers as a parallel composition.

A stage whose sequences of sends all land in one contention group (every rank on one node) must
cost exactly what ``w1 ‖ T(m1) ‖ (w2 ‖ T(m2) + T(m3)) ‖ …`` costs — the ParComp the interpreter
expands with :func:`tlop.ir.taulop.expand_parcomp` — and a stage whose sends form one shared-memory
group and one network group (sends entering node 0 from other nodes) must agree with the ParComp
of the same transmissions on channels shm and net.  Sizes repeat (ties), include 0, and sequences
have different lengths (lock-step phases).  Also: the generic rule over IR (decided groups) and
over numpy arrays agree with the rank form that the expansion uses when orders are unknown."""

import math

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import tlop
from tlop import ir
from tlop.backends.interp import Interpreter
from tlop.ir.taulop import NumericGroups, expand_parcomp, reduce_groups

N = ir.Num
PROGRAM = tlop.load("taulop/p2p").program
SHM, NET = float(PROGRAM.channels.index("shm")), float(PROGRAM.channels.index("net"))
PROFILES = [tlop.load_profile(n) for n in ("metropolis", "lusitania")]
Q = 64  # ranks per node (sequential mapping): sequences 0 … 63 send inside node 0

SIZES = st.sampled_from([0.0, 1.0, 100.0, 1024.0, 3000.0, 65536.0, 200000.0, 1048576.0, 4194304.0])
WEIGHTS = st.sampled_from([1.0, 1.0, 1.0, 2.0, 3.0])
SEQUENCE = st.lists(st.tuples(SIZES, WEIGHTS), min_size=1, max_size=4)


def _close(a, b):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def _stage(sequences):
    """A stage: sequence i is a block of sends ``src_i -> dst_i : m weight w`` (one per element)."""
    items = []
    for src, dst, elems in sequences:
        sends = tuple(ir.Send(N(float(src)), N(float(dst)), N(m), N(w)) for m, w in elems)
        items.append(ir.Block(sends))
    return ir.Stage(tuple(items))


def _parcomp(sequences):
    return ir.ParComp(tuple(tuple(ir.Xmit(N(w), "T", N(ch), N(m)) for m, w in elems)
                            for ch, elems in sequences))


def _both(stage, parcomp, P, profile):
    interp = Interpreter(PROGRAM, profile, tlop.sequential(Q))
    env = {ir.RANKS: float(P)}
    return interp.eval(stage, env), interp.eval(parcomp, {})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SEQUENCE, min_size=1, max_size=6), st.sampled_from(PROFILES))
def test_one_group_reduces_like_the_parallel_composition(seqs, profile):
    n = len(seqs)
    stage = _stage([(i, (i + 1) % n, s) for i, s in enumerate(seqs)])  # all on node 0: shm
    got, want = _both(stage, _parcomp([(SHM, s) for s in seqs]), Q, profile)
    assert _close(got, want), (got, want)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SEQUENCE, min_size=0, max_size=4), st.lists(SEQUENCE, min_size=0, max_size=4),
       st.sampled_from(PROFILES))
def test_shm_and_net_groups_reduce_like_the_parallel_composition(shm, net, profile):
    if not shm and not net:
        return
    # shm sequences inside node 0; net sequences from ranks of nodes 1, 2, … into rank 0 (node 0):
    # one network group (contention per destination node), as ParComp's one channel net
    seqs = [(i, (i + 1) % max(len(shm), 1), s) for i, s in enumerate(shm)]
    seqs += [(Q * (1 + j), 0, s) for j, s in enumerate(net)]
    P = Q * (1 + max(len(net), 1))
    got, want = _both(_stage(seqs), _parcomp([(SHM, s) for s in shm] + [(NET, s) for s in net]), P, profile)
    assert _close(got, want), (got, want)


def test_separate_groups_take_the_maximum_and_computations_add_per_rank():
    profile = PROFILES[0]
    interp = Interpreter(PROGRAM, profile, tlop.sequential(2))
    one = interp.eval(ir.ParComp(((ir.Xmit(N(1.0), "T", N(SHM), N(4096.0)),),)), {})
    two = interp.eval(ir.ParComp(((ir.Xmit(N(1.0), "T", N(SHM), N(65536.0)),),)), {})
    # node 0: 0 -> 1 (4 KiB); node 1: 2 -> 3 (64 KiB): two shm groups, A3 takes the larger
    stage = _stage([(0, 1, [(4096.0, 1.0)]), (2, 3, [(65536.0, 1.0)])])
    assert interp.eval(stage, {ir.RANKS: 4.0}) == max(one, two)
    # two computations of rank 0 in one phase add; rank 1's runs beside them
    comp = ir.Stage((ir.Compute(N(0.0), N(1e-6)), ir.Compute(N(0.0), N(2e-6)), ir.Compute(N(1.0), N(2.5e-6))))
    assert interp.eval(comp, {ir.RANKS: 4.0}) == 3e-6


def _rank_form(sizes, weights):
    """The reference A2 of one group written directly from 000 eq. 8 (sorted sizes)."""
    order = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    out, prev = [], 0.0
    for j, i in enumerate(order):
        d = sizes[i] - prev
        if d > 0:
            out.append((sum(weights[k] for k in order[j:]), d))
        prev = sizes[i]
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(SIZES, WEIGHTS), min_size=1, max_size=5), min_size=1, max_size=4))
def test_numeric_algebra_is_eq_8_per_group_and_the_max_across(groups):
    """NumericGroups with a transmission that records (carried, increment) gives, per group,
    exactly the sorted-size increments of 000 eq. 8 and the maximum across groups."""
    sizes, weights, starts = [], [], []
    for g in groups:
        g = sorted(g, key=lambda x: x[0])
        starts.append(len(sizes))
        sizes += [m for m, _ in g]
        weights += [w for _, w in g]

    def transmit(idx, carried, d):
        return carried * 1e-9 * d + 1e-6  # a linear "transmission" with a latency

    got = reduce_groups(NumericGroups(sizes, weights, starts, [0], transmit))
    want = max(sum(w * 1e-9 * d + 1e-6 for w, d in _rank_form([m for m, _ in g], [w for _, w in g]))
               for g in groups)
    assert len(got) == 1 and _close(float(got[0]), want)


def test_decided_expansion_uses_the_shared_rule():
    """A composition with numeral sizes is decided at expansion time: one sum per channel, a max
    across channels, no residual test — the IR instance of reduce_groups."""
    e = _parcomp([(SHM, [(1024.0, 1.0)]), (SHM, [(4096.0, 2.0)]), (NET, [(1024.0, 1.0)])])
    exp = expand_parcomp(e)
    assert exp.static
    assert isinstance(exp.expr, ir.Let) or isinstance(exp.expr, ir.Fn)
    assert not any(isinstance(n, ir.Cond) for n in ir.walk(exp.expr))
    # the same value as the rank form (the expansion with every order left to run time)
    interp = Interpreter(PROGRAM, PROFILES[0])
    sizes = [ir.Var("a"), ir.Var("b"), ir.Var("c")]
    symbolic = ir.ParComp(((ir.Xmit(N(1.0), "T", N(SHM), sizes[0]),), (ir.Xmit(N(2.0), "T", N(SHM), sizes[1]),),
                           (ir.Xmit(N(1.0), "T", N(NET), sizes[2]),)))
    assert not expand_parcomp(symbolic).static
    assert _close(interp.eval(e, {}), interp.eval(symbolic, {"a": 1024.0, "b": 4096.0, "c": 1024.0}))


def test_numeric_groups_handle_empty_input():
    out = reduce_groups(NumericGroups([], [], [], [], lambda *a: np.zeros(0)))
    assert len(out) == 0
