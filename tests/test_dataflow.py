"""One schedule, every model: LogGP and pLogP price a schedule as a dataflow program.

The must-show of issue 9: the LogGP binomial-tree broadcast schedule (``loggp/bcast binomial``,
the same text as ``taulop/bcast binomial``) costs exactly what an independent event-by-event
simulation written here from the LogGP definition gives, for P = 2 … 1024 — P not a power of two
and g > L + 2o included — and equals the published closed form where that is exact (P a power of
two, g ≤ L + 2o).  The same for pLogP with a table-based g(m).  The simulation does not use the
compiler: it builds MPICH's binomial tree from each rank's lowest set bit, as MPICH's code does,
and runs the sends through a priority queue of arrivals.
"""

import heapq
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tlop
from conftest import synthetic_profile

LOGGP_BC = tlop.load("loggp/bcast")
PLOGP_BC = tlop.load("plogp/bcast")


def loggp_profile(L, o, g, G):
    return synthetic_profile("loggp-test", scalars={"L": {"*": L}, "o": {"*": o}, "g": {"*": g}, "G": {"*": G}})


#: a pLogP table: g(m), os(m), or(m) on a grid; g is not linear in m (a protocol switch at 64 KiB)
PLOGP_M = [1.0, 1024.0, 65536.0, 1048576.0]
PLOGP_G = [3e-6, 5e-6, 90e-6, 1.1e-3]
PLOGP_OS = [1e-6, 1.5e-6, 20e-6, 0.2e-3]
PLOGP_OR = [1.2e-6, 1.7e-6, 25e-6, 0.3e-3]


def plogp_profile(L):
    return synthetic_profile("plogp-dataflow", tables={
        "g": {"*": {"m": PLOGP_M, "values": PLOGP_G}},
        "os": {"*": {"m": PLOGP_M, "values": PLOGP_OS}},
        "or_": {"*": {"m": PLOGP_M, "values": PLOGP_OR}},
    }, scalars={"L": {"*": L}})


# ---------------------------------------------------------------- the independent simulation
def binomial_bcast_events(P, gap, delivery, send_overhead):
    """Event by event: the time the last rank finishes a binomial-tree broadcast (MPICH's tree).

    Relative rank r > 0 receives from r − lowbit(r); once its data has arrived it sends to
    r + mask for mask = lowbit(r)/2, lowbit(r)/4, …, 1 (the root: from the largest power of two
    below P), each send ``gap`` after the previous one; a message is received ``delivery``
    after its send started.  A rank is done when its last receive or send overhead is."""
    top = 1 << max(P - 1, 0).bit_length()  # the first power of two >= P
    queue = [(0.0, 0)]  # (the time rank r has its data, r)
    finish, received = 0.0, 0
    while queue:
        t, r = heapq.heappop(queue)
        received += 1
        finish = max(finish, t)
        mask = (r & -r if r else top) >> 1
        start = None
        while mask:
            if r + mask < P:
                start = t if start is None else start + gap
                finish = max(finish, start + send_overhead)
                heapq.heappush(queue, (start + delivery, r + mask))
            mask >>= 1
    assert received == P  # every rank got the data exactly once
    return finish


def loggp_events(P, m, L, o, g, G):
    return binomial_bcast_events(P, max(o, g + (m - 1) * G), o + L + (m - 1) * G + o, o)


def _mapping(P):
    return tlop.sequential(P)


def schedule(mod, name, profile, P, m, **kw):
    return float(mod[name].evaluate(profile, P=P, m=m, mapping=_mapping(P), **kw))


# ---------------------------------------------------------------- LogGP: the must-show
#: (L, o, g, G): g ≤ L + 2o, then g > L + 2o (the gap dominates), then o > g + (m − 1)G
LOGGP_SETS = [(5e-6, 1e-6, 2e-6, 1e-9), (1e-6, 0.5e-6, 9e-6, 2e-10), (2e-6, 4e-6, 1e-6, 1e-12)]


@pytest.mark.parametrize("params", LOGGP_SETS, ids=["g<=L+2o", "g>L+2o", "o>gap"])
def test_loggp_binomial_schedule_is_the_event_simulation(params):
    L, o, g, G = params
    prof = loggp_profile(*params)
    m = 1000.0
    # every P up to 1024 where the closed form is exact and where the gap dominates; a sample else
    P = np.arange(2, 1025, dtype=float) if params != LOGGP_SETS[2] else np.array([2, 3, 5, 6, 7, 9, 100, 511, 1000.])
    got = LOGGP_BC["binomial"].evaluate(prof, P=P, m=m, mapping=tlop.sequential(1))
    want = np.array([loggp_events(int(p), m, L, o, g, G) for p in P])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("params", LOGGP_SETS, ids=["g<=L+2o", "g>L+2o", "o>gap"])
def test_loggp_binomial_closed_form_only_where_it_is_exact(params):
    L, o, g, G = params
    prof = loggp_profile(*params)
    for m in (1.0, 65536.0):
        for P in (2, 4, 8, 64, 1024, 3, 6, 100):
            got = schedule(LOGGP_BC, "binomial", prof, P, m)
            closed = float(LOGGP_BC["binomial_closed"].evaluate(prof, P=P, m=m))
            if P & (P - 1) == 0 and g <= L + 2 * o:
                assert math.isclose(got, closed, rel_tol=1e-12), (params, P, m)
            if P >= 4 and P & (P - 1) == 0 and g > L + 2 * o:
                assert got > closed * (1 + 1e-9), (params, P, m)  # the gap dominates: the formula is low
    # P not a power of two: the schedule is cheaper than ⌈log2 P⌉ full hops whenever the last
    # stage's receivers are served by ranks that received early
    if g <= L + 2 * o:
        assert schedule(LOGGP_BC, "binomial", prof, 3, 1.0) < float(LOGGP_BC["binomial_closed"].evaluate(prof, P=3, m=1.0))


@settings(max_examples=60, deadline=None)
@given(P=st.integers(1, 70), root=st.integers(0, 69), m=st.sampled_from([1.0, 8.0, 4096.0, 1e6]),
       L=st.floats(0, 1e-4), o=st.floats(0, 1e-4), g=st.floats(0, 1e-4), G=st.floats(0, 1e-8))
def test_loggp_binomial_any_parameters_any_root(P, root, m, L, o, g, G):
    root %= P
    got = schedule(LOGGP_BC, "binomial", loggp_profile(L, o, g, G), P, m, root=root)
    want = loggp_events(P, m, L, o, g, G) if P > 1 else 0.0
    assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-18), (got, want)


def test_loggp_linear_schedule_is_its_closed_form():
    for params in LOGGP_SETS:
        prof = loggp_profile(*params)
        for P in (2, 3, 7, 33):
            for m in (1.0, 70000.0):
                assert math.isclose(schedule(LOGGP_BC, "linear", prof, P, m),
                                    float(LOGGP_BC["linear_closed"].evaluate(prof, P=P, m=m)), rel_tol=1e-12)


def test_binomial_is_the_same_text_in_every_model():
    """One schedule, every model: the three stdlib binomials are the same stage, structurally."""
    from tlop import ir

    def stage_of(mod):
        (s,) = [n for n in ir.walk(mod["binomial"].ir.body) if isinstance(n, ir.Stage)]
        return ir.Stage(tuple(s.items))

    taulop = tlop.load("taulop/bcast")
    assert stage_of(LOGGP_BC) == stage_of(taulop) == stage_of(PLOGP_BC)


# ---------------------------------------------------------------- pLogP: table-based g(m)
def _table(values, m):
    return float(np.interp(m, PLOGP_M, values))


def plogp_events(P, m, L):
    g = _table(PLOGP_G, m)
    return binomial_bcast_events(P, g, g + L, _table(PLOGP_OS, m))


@pytest.mark.parametrize("L", [4e-6, 200e-6])
def test_plogp_binomial_schedule_is_the_event_simulation(L):
    prof = plogp_profile(L)
    P = np.unique(np.r_[np.arange(2, 130), np.arange(130, 1025, 37), 1023, 1024]).astype(float)
    for m in (1024.0, 65536.0):  # on the grid: g(m) is the measured value
        got = PLOGP_BC["binomial"].evaluate(prof, P=P, m=m, mapping=tlop.sequential(1))
        want = np.array([plogp_events(int(p), m, L) for p in P])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_plogp_binomial_is_table1_for_powers_of_two():
    prof = plogp_profile(7e-6)
    for m in PLOGP_M:
        for P in (2, 4, 8, 16, 256, 1024):
            assert math.isclose(schedule(PLOGP_BC, "binomial", prof, P, m),
                                float(PLOGP_BC["binomial_closed"].evaluate(prof, P=P, m=m)), rel_tol=1e-12)
    # and not for P = 3: the root's second send waits a gap, it does not cost a second latency
    g, L = PLOGP_G[1], 7e-6
    assert math.isclose(schedule(PLOGP_BC, "binomial", prof, 3, 1024.0), 2 * g + L, rel_tol=1e-12)
    assert math.isclose(float(PLOGP_BC["binomial_closed"].evaluate(prof, P=3, m=1024.0)), g + 2 * L, rel_tol=1e-12)


def test_plogp_linear_schedule_is_the_flat_tree_row():
    prof = plogp_profile(7e-6)
    for m in PLOGP_M:
        for P in (2, 3, 9, 64):
            assert math.isclose(schedule(PLOGP_BC, "linear", prof, P, m),
                                float(PLOGP_BC["flat"].evaluate(prof, P=P, m=m)), rel_tol=1e-12)


# ---------------------------------------------------------------- the rules of the dataflow
def _module(body, tmp_path, model="loggp"):
    src = tmp_path / "m.tlop"
    src.write_text(f'import "{model}/platform.tlop"\n{body}\n')
    return tlop.load(str(src))


PROF = loggp_profile(5e-6, 1e-6, 2e-6, 1e-9)
L_, O_, G_, GG_ = 5e-6, 1e-6, 2e-6, 1e-9


def _gap(m):
    return max(O_, G_ + (m - 1) * GG_)


def _hop(m):
    return 2 * O_ + L_ + (m - 1) * GG_


def test_a_rank_forwards_when_its_data_arrives_not_at_a_barrier(tmp_path):
    """Stage 0: 0 → 1 and 2 → 3 (m = 1 B and m = 1 MB); stage 1: 1 → 0.  Rank 1 forwards at
    the end of its own (short) receive; τ-Lop's lock step would wait for the long one."""
    mod = _module("algorithm a(P: int >= 4, m: bytes) over map: mapping =\n"
                  "    stage { send 0 -> 1 : 1B  send 2 -> 3 : m } + stage { send 1 -> 0 : 1B }", tmp_path)
    got = float(mod["a"].evaluate(PROF, P=4, m=1e6, mapping=tlop.sequential(4)))
    assert math.isclose(got, max(2 * _hop(1.0), _hop(1e6)), rel_tol=1e-12)


def test_sends_of_a_rank_in_one_stage_go_one_after_another(tmp_path):
    mod = _module("algorithm a(P: int >= 2, m: bytes) over map: mapping =\n"
                  "    stage { send 0 -> 1 : m  send 0 -> 1 : m  send 0 -> 1 : m }", tmp_path)
    got = float(mod["a"].evaluate(PROF, P=2, m=4096.0, mapping=tlop.sequential(2)))
    # the receiver also needs a gap between consecutive receives
    assert math.isclose(got, 2 * _gap(4096.0) + _hop(4096.0), rel_tol=1e-12)


def test_computation_occupies_the_rank(tmp_path):
    mod = _module("algorithm a(P: int >= 2, m: bytes) over map: mapping =\n"
                  "    stage { send 0 -> 1 : m } + stage { compute 1 : 10us } + stage { send 1 -> 0 : m }", tmp_path)
    got = float(mod["a"].evaluate(PROF, P=2, m=1.0, mapping=tlop.sequential(2)))
    assert math.isclose(got, _hop(1.0) + 10e-6 + _hop(1.0), rel_tol=1e-12)


def test_gather_receives_are_a_gap_apart(tmp_path):
    mod = _module("algorithm a(P: int >= 2, m: bytes) over map: mapping =\n"
                  "    stage { par p in 1 .. P - 1: send p -> 0 : m }", tmp_path)
    for P in (2, 5, 17):
        got = float(mod["a"].evaluate(PROF, P=P, m=2048.0, mapping=tlop.sequential(4)))
        assert math.isclose(got, _hop(2048.0) + (P - 2) * _gap(2048.0), rel_tol=1e-12)


def test_plain_cost_terms_add_to_a_schedule(tmp_path):
    mod = _module("algorithm a(P: int >= 2, m: bytes) over map: mapping =\n"
                  "    3us + stage { send 0 -> 1 : m } + (let k = 2 in if k > 1 then stage { send 1 -> 0 : m } "
                  "else 0s)", tmp_path)
    got = float(mod["a"].evaluate(PROF, P=2, m=1.0, mapping=tlop.sequential(2)))
    assert math.isclose(got, 3e-6 + 2 * _hop(1.0), rel_tol=1e-12)


def test_the_mapping_does_not_change_a_loggp_cost():
    for mapping in (tlop.sequential(1), tlop.sequential(8), tlop.round_robin(4)):
        got = float(LOGGP_BC["binomial"].evaluate(PROF, P=24, m=512.0, mapping=mapping))
        assert math.isclose(got, loggp_events(24, 512.0, L_, O_, G_, GG_), rel_tol=1e-12)


@pytest.mark.parametrize("body,what", [
    ("stage { send 0 -> 1 : m } / 2", "under '/'"),
    ("max(stage { send 0 -> 1 : m }, 1us)", "under 'max(…)'"),
    ("max k in 0 .. 2: stage { send 0 -> 1 : m }", "under 'max'"),
    ("let x = stage { send 0 -> 1 : m } in x + x", "under a 'let' binding"),
])
def test_compositions_loggp_cannot_price(body, what, tmp_path):
    mod = _module(f"algorithm a(P: int >= 2, m: bytes) over map: mapping =\n    {body}", tmp_path)
    with pytest.raises(tlop.TlopError, match="loggp cannot price a schedule " + what.replace("(", r"\(")
                       .replace(")", r"\)").replace("*", r"\*")):
        mod["a"].evaluate(PROF, P=2, m=1.0, mapping=tlop.sequential(2))


def test_a_repetition_runs_the_program_n_times_in_a_row(tmp_path):
    """``n * stage`` is the stage n times, the clocks carrying over (not n times its cost: here the
    second round's sends of rank 0 wait for its gap, not for a barrier)."""
    mod = _module("algorithm a(P: int >= 2, m: bytes, n: int >= 0) over map: mapping =\n"
                  "    n * stage { send 0 -> 1 : m }\n"
                  "algorithm b(P: int >= 2, m: bytes, n: int >= 0) over map: mapping =\n"
                  "    stages k in 1 .. n { send 0 -> 1 : m }\n"
                  "algorithm c(P: int >= 2, m: bytes, n: int >= 0) over map: mapping =\n"
                  "    (stage { send 0 -> 1 : m } + stage { send 1 -> 0 : m }) * n", tmp_path)
    for n in (0, 1, 2, 5):
        got = float(mod["a"].evaluate(PROF, P=2, m=4096.0, n=n, mapping=tlop.sequential(2)))
        assert math.isclose(got, float(mod["b"].evaluate(PROF, P=2, m=4096.0, n=n, mapping=tlop.sequential(2))),
                            rel_tol=1e-12)
        assert math.isclose(got, 0.0 if n == 0 else (n - 1) * _gap(4096.0) + _hop(4096.0), rel_tol=1e-12)
        got = float(mod["c"].evaluate(PROF, P=2, m=1.0, n=n, mapping=tlop.sequential(2)))
        assert math.isclose(got, 2 * n * _hop(1.0), rel_tol=1e-12)


def test_a_repetition_count_must_be_a_whole_number(tmp_path):
    mod = _module("algorithm a(P: int >= 2, m: bytes, x: real) over map: mapping =\n"
                  "    x * stage { send 0 -> 1 : m }", tmp_path)
    with pytest.raises(tlop.TlopError, match="repeated 1.5 times"):
        mod["a"].evaluate(PROF, P=2, m=1.0, x=1.5, mapping=tlop.sequential(2))


def test_a_computation_waits_for_the_receives_before_it(tmp_path):
    """``{ send q -> r ; reduce r }``: r combines after the message arrives (its own send of the
    same stage does not wait); ``seq`` at one rank alternates receiving and combining."""
    gamma = 7e-6
    prof = synthetic_profile("loggp-gamma", tables={"gamma": {"*": {"m": [1.0, 1e9], "values": [gamma, gamma]}}},
                             scalars={"L": {"*": L_}, "o": {"*": O_}, "g": {"*": G_}, "G": {"*": GG_}})
    mod = _module("algorithm pair(P: int >= 2, m: bytes) over map: mapping =\n"
                  "    stage { par p in 0 .. 1: { send p -> 1 - p : m  reduce 1 - p : m } }\n"
                  "algorithm chain(P: int >= 2, m: bytes) over map: mapping =\n"
                  "    stage { seq k in 1 .. P - 1: { send k -> 0 : m  reduce 0 : m } }\n"
                  "algorithm early(P: int >= 2, m: bytes) over map: mapping =\n"
                  "    stage { { reduce 0 : m  send 1 -> 0 : m } }", tmp_path)
    one = tlop.sequential(64)
    m = 1.0
    # both send at 0, receive at hop, then combine
    assert math.isclose(float(mod["pair"].evaluate(prof, P=2, m=m, mapping=one)), _hop(m) + gamma, rel_tol=1e-12)
    # rank 0: receive (all arrive at hop), combine, then the next receive needs its overhead o
    for P in (2, 3, 6):
        recv = _hop(m)
        for _ in range(P - 2):
            recv = max(_hop(m), recv + gamma + O_, recv + _gap(m))
        assert math.isclose(float(mod["chain"].evaluate(prof, P=P, m=m, mapping=one)), recv + gamma,
                            rel_tol=1e-12), P
    # a computation before the receive does not wait for it
    assert math.isclose(float(mod["early"].evaluate(prof, P=2, m=m, mapping=one)),
                        max(gamma + O_, _hop(m)), rel_tol=1e-12)


def test_a_schedule_needs_a_mapping_in_loggp_too():
    with pytest.raises(tlop.TlopError, match="mapping"):
        LOGGP_BC["binomial"].evaluate(PROF, P=4, m=1.0)
