"""The collective trees of the stdlib in LogGP and pLogP (``loggp/<collective>``, ``plogp/<collective>``).

* Every schedule of ``taulop/<collective>`` exists under the same name in ``loggp/`` and ``plogp/``,
  and loggp and plogp hold the same text; it is also taulop's text, except where taulop models an
  exchange as the reference library does (one transfer of weight 2, reduced once: allreduce
  ``rda`` and ``rabenseifner``), which a dataflow must write as a send in each direction.
* Each schedule's LogGP cost equals a cost worked out here by hand from the LogGP definitions
  (2o + L + (m − 1)G per hop, gaps of max(o, g + (m − 1)G), γ(m) per combination) for parameter
  sets where the hand derivation holds, P a power of two up to 64 (and every P for the chains).
* pLogP's published rows: tests/test_schedule_closed_forms.py.
"""

import math

import numpy as np
import pytest

import tlop
from tlop import ir
from conftest import synthetic_profile

COLLECTIVES = ("bcast", "scatter", "gather", "reduce", "allgather", "allreduce", "alltoall")
#: taulop schedules whose dataflow text differs (an exchange written as two sends, both reducing)
EXCHANGES = {("allreduce", "rda"), ("allreduce", "rabenseifner")}

L_, O_, G_, GG_ = 5e-6, 1e-6, 2e-6, 1e-9
GAMMA0, GAMMA1 = 1e-6, 2e-10  # γ(m) = GAMMA0 + GAMMA1·m, linear on its grid
_GRID = [0.0, 1e9]
_GAMMA = {"gamma": {"*": {"m": _GRID, "values": [GAMMA0 + GAMMA1 * x for x in _GRID]}}}
LOGGP = synthetic_profile("loggp-collectives", tables=_GAMMA,
                          scalars={"L": {"*": L_}, "o": {"*": O_}, "g": {"*": G_}, "G": {"*": GG_}})


def hop(m):
    return 2 * O_ + L_ + (m - 1) * GG_


def gap(m):
    return max(O_, G_ + (m - 1) * GG_)


def gamma(m):
    return GAMMA0 + GAMMA1 * m


def _schedules(mod):
    return {a for a in mod.algorithms if mod[a].ir.over is not None}


def _stages(alg):
    return [ir.Stage(tuple(s.items)) for s in ir.walk(alg.ir.body) if isinstance(s, ir.Stage)]


@pytest.mark.parametrize("coll", COLLECTIVES)
def test_every_taulop_schedule_exists_in_loggp_and_plogp_with_the_same_text(coll):
    taulop, loggp, plogp = (tlop.load(f"{m}/{coll}") for m in ("taulop", "loggp", "plogp"))
    names = _schedules(taulop)
    assert names and names <= _schedules(loggp) and names <= _schedules(plogp), coll
    assert _schedules(loggp) == _schedules(plogp)
    for name in _schedules(loggp):
        assert _stages(loggp[name]) == _stages(plogp[name]), name
        assert [p.name for p in loggp[name].ir.params] == [p.name for p in plogp[name].ir.params]
    for name in names:
        same = _stages(loggp[name]) == _stages(taulop[name])
        assert same == ((coll, name) not in EXCHANGES), name


def _eval(coll, name, P, m, prof=LOGGP, **kw):
    return float(tlop.load(f"loggp/{coll}")[name].evaluate(prof, P=P, m=m, mapping=tlop.sequential(4), **kw))


POW2 = [2, 4, 8, 16, 32, 64]


@pytest.mark.parametrize("m", [1.0, 1000.0, 70000.0])
def test_loggp_costs_by_hand(m):
    """Every hop is gap-free here (g ≤ L + 2o and γ ≥ 0), so a tree costs its critical path."""
    for P in POW2:
        n = int(math.log2(P))
        case = lambda coll, name, want, **kw: pytest.approx(want, rel=1e-12) == _eval(coll, name, P, m, **kw)
        assert case("allgather", "ring", (P - 1) * hop(m))
        assert case("alltoall", "pairwise", (P - 1) * hop(m))
        assert case("gather", "linear", hop(m) + (P - 2) * gap(m))
        assert case("gather", "binomial", sum(hop(2 ** s * m) for s in range(n)))
        assert case("scatter", "binomial", sum(hop(2 ** s * m) for s in range(n)))
        assert case("scatter", "linear", (P - 2) * gap(m) + hop(m))
        assert case("reduce", "binomial_openmpi", n * (hop(m) + gamma(m)))
        assert case("allreduce", "rda", n * (hop(m) + gamma(m)))
        assert case("allreduce", "nonoverlap_openmpi", n * (hop(m) + gamma(m)) + _eval("bcast", "binomial_openmpi", P, m))
        b = m / P
        assert case("allreduce", "ring", (P - 1) * (hop(b) + gamma(b)) + (P - 1) * hop(b))
        # Rabenseifner: halving then doubling, each step an exchange of m/2^(s+1)
        want = sum(hop(m / 2 ** (s + 1)) + gamma(m / 2 ** (s + 1)) for s in range(n))
        want += sum(hop(m / 2 ** (s + 1)) for s in range(n))
        assert case("allreduce", "rabenseifner", want)


@pytest.mark.parametrize("P", [1, 2, 3, 5, 8, 13, 30])
def test_loggp_linear_reductions_alternate_receive_and_combine(P):
    """Open MPI's linear reduce to root P − 1: every other rank sends at 0; the root receives one
    message and combines it (γ), then needs its receive overhead o before the next one (or a gap
    after the previous receive, or the arrival).  With root 0 the first message is not combined
    (it is the accumulator) and the root's own contribution is combined last, with no receive."""
    m = 4096.0
    recv = -math.inf
    for k in range(P - 1):
        recv = hop(m) if k == 0 else max(hop(m), recv + gamma(m) + O_, recv + gap(m))
    want = recv + gamma(m) if P > 1 else 0.0
    assert _eval("reduce", "linear_openmpi", P, m, root=P - 1) == pytest.approx(want, rel=1e-12)
    if P > 1:
        assert _eval("allreduce", "linear_openmpi", P, m) == pytest.approx(want + (P - 2) * gap(m) + hop(m), rel=1e-12)
        recv = -math.inf
        for k in range(P - 1):
            recv = hop(m) if k == 0 else max(hop(m), recv + (gamma(m) if k > 1 else 0) + O_, recv + gap(m))
        want = recv + (gamma(m) if P > 2 else 0) + gamma(m)
        assert _eval("reduce", "linear_openmpi", P, m, root=0) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("P", [2, 3, 6, 11])
def test_loggp_chain_scatter_and_pipeline(P):
    m = 3000.0
    assert _eval("scatter", "chain", P, m) == pytest.approx(sum(hop(k * m) for k in range(1, P)), rel=1e-12)
    # the unsegmented pipeline is the chain of full messages
    assert _eval("bcast", "pipeline", P, m, seg=m) == pytest.approx((P - 1) * hop(m), rel=1e-12)


def test_loggp_segmented_ring_is_the_ring_when_one_segment_holds_a_block():
    for P in (2, 4, 7):
        for m in (1000.0, 4096.0 * P):
            assert _eval("allreduce", "ring_segm", P, m) == pytest.approx(_eval("allreduce", "ring", P, m), rel=1e-12)
    # several segments cost more than one (each pays its hop)
    assert _eval("allreduce", "ring_segm", 4, 4 * 16384.0) > _eval("allreduce", "ring", 4, 4 * 16384.0)


@pytest.mark.parametrize("coll", COLLECTIVES)
def test_every_dataflow_schedule_evaluates_for_every_P(coll):
    """P = 1 … 40 (from 2 where the algorithm needs two ranks; powers of two, their neighbours and
    primes), in both models; finite, ≥ 0, and non-decreasing in m."""
    plogp_prof = synthetic_profile("plogp-collectives", tables={
        **_GAMMA, "g": {"*": {"m": _GRID, "values": [3e-6, 3e-6 + 1e9 * 1e-9]}},
        "os": {"*": {"m": _GRID, "values": [1e-6, 1e-6 + 1e9 * 2e-10]}},
        "or_": {"*": {"m": _GRID, "values": [1e-6, 1e-6 + 1e9 * 2e-10]}}}, scalars={"L": {"*": 4e-6}})
    for model, prof in (("loggp", LOGGP), ("plogp", plogp_prof)):
        mod = tlop.load(f"{model}/{coll}")
        for name in sorted(_schedules(mod)):
            alg = mod[name]
            lo = int(alg.ir.params[0].constraint[1].value)
            kw = {"seg": 16000.0} if "seg" in [p.name for p in alg.ir.params] else {}
            P = np.array([p for p in (1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 40) if p >= lo], dtype=float)
            size = "counts" if "counts" in [p.name for p in alg.ir.params] else "m"  # gatherv: every rank's m
            small = alg.evaluate(prof, P=P, **{size: 1000.0}, mapping=tlop.sequential(4), **kw)
            big = alg.evaluate(prof, P=P, **{size: 64000.0}, mapping=tlop.sequential(4), **kw)
            assert np.all(np.isfinite(small)) and np.all(small >= 0), (model, name)
            assert np.all(big >= small), (model, name)


@pytest.mark.parametrize("model", ["loggp", "plogp"])
def test_the_simplifier_keeps_the_order_of_dataflow_stages(model):
    """In a dataflow model ``a + b`` of schedules runs a then b: the simplifier must not reorder
    the fold, the recursive doubling and the unfold of ``rda`` (for P = 3 the order changes the cost)."""
    from tlop.analysis.simplify import simplify
    from tlop.backends.interp import Interpreter

    mod = tlop.load(f"{model}/allreduce")
    alg = mod["rda"].ir
    out = simplify(alg.body, mod.program).expr
    assert _stages_in(out) == _stages_in(alg.body)
    if model == "loggp":
        env = {"P": 3.0, "m": 4096.0, ir.RANKS: 3.0}
        run = lambda e: float(Interpreter(mod.program, LOGGP, mapping=tlop.sequential(4)).eval(e, env))
        assert run(out) == pytest.approx(run(alg.body), rel=1e-12)


def _stages_in(e):
    return [ir.Stage(tuple(s.items)) for s in ir.walk(e) if isinstance(s, ir.Stage)]


GATHERV_USER = """
import "{model}/platform.tlop"
/// The bytes rank r contributes: 1 KiB for the first four ranks, 64 KiB for the others.
def count(r: int) -> bytes = if r < 4 then 1KiB else 64KiB
/// A linear gatherv with per-rank sizes: every rank sends its count(r) bytes to the root at once.
algorithm gatherv_sized(P: int >= 1, root: int >= 0 = 0) over map: mapping =
    stage {{ par r in 0 .. P - 1 where r != root: send r -> root : count(r) }}
"""


@pytest.mark.parametrize("model", ["taulop", "loggp"])
def test_the_stdlib_gatherv_takes_per_rank_sizes_like_a_user_schedule(model, tmp_path):
    """The stdlib's gatherv takes a per-rank counts vector; it equals a user schedule whose
    size is a def of the rank, and (LogGP) the root receiving in order of arrival."""
    src = tmp_path / "gv.tlop"
    src.write_text(GATHERV_USER.format(model=model))
    mod = tlop.load(str(src))
    gatherv = tlop.load(f"{model}/gather")["gatherv"]
    prof = LOGGP if model == "loggp" else tlop.load_profile("lusitania")
    for P, mapping in ((2, tlop.sequential(4)), (5, tlop.sequential(4)), (9, tlop.round_robin(4))):
        counts = [1024.0 if r < 4 else 65536.0 for r in range(P)]
        user = float(mod["gatherv_sized"].evaluate(prof, P=P, mapping=mapping))
        assert float(gatherv.evaluate(prof, P=P, counts=counts, mapping=mapping)) == user
        if model == "loggp":
            sizes = sorted(counts[1:])
            # all send at 0; the root receives in order of arrival (the small ones first), a gap apart
            t = -math.inf
            for k, x in enumerate(sizes):
                t = max(hop(x), t + gap(x)) if k else hop(x)
            assert user == pytest.approx(t, rel=1e-12)
    if model == "taulop":
        one = tlop.sequential(64)
        got = float(mod["gatherv_sized"].evaluate(prof, P=8, mapping=one))
        big = float(tlop.load("taulop/gather")["linear"].evaluate(prof, P=8, m=65536.0, mapping=one))
        small = float(tlop.load("taulop/gather")["linear"].evaluate(prof, P=8, m=1024.0, mapping=one))
        assert small < got < big
