"""The collective schedules of taulop/bcast, scatter, gather and reduce.

* Each schedule equals the closed form it replaces on one node (every rank on one node, so every
  transfer of a stage shares the shared memory): ``binomial`` = ``binomial_bcast`` and
  ``binomial_scatter_node`` for P a power of two, ``linear`` = ``linear_bcast`` for every P — a
  hypothesis property over P ≤ 64, m and every bundled profile.
* With one rank per node (Q = 1: every transfer into a different node, τ = 1) each tree has the
  stage count and sizes of MPICH's / Open MPI's real tree for every P, including P not a power of
  two, where libtaulop's trees self-send or wrap (libtaulop-semantics §9 item 7).
* Agreement with libtaulop's "same mathematics" rows is tests/test_libtaulop_agreement.py.
* Today's names still exist (aliases of the closed forms).
"""

import math

import pytest
from hypothesis import given, settings, strategies as st

import tlop
from conftest import taulop_profiles

PROFILES = {n: tlop.load_profile(n) for n in sorted(taulop_profiles())}
BCAST, SCATTER = tlop.load("taulop/bcast"), tlop.load("taulop/scatter")
GATHER, REDUCE = tlop.load("taulop/gather"), tlop.load("taulop/reduce")
ONE_NODE = tlop.sequential(64)
sizes = st.sampled_from([1.0, 100.0, 1024.0, 3000.0, 65536.0, 200000.0, 1048576.0])
pow2 = st.sampled_from([1, 2, 4, 8, 16, 32, 64])


def _close(a, b):
    return a == pytest.approx(b, rel=1e-12, abs=0.0)


@settings(max_examples=60, deadline=None)
@given(P=pow2, m=sizes, profile=st.sampled_from(sorted(PROFILES)), root=st.integers(0, 63))
def test_binomial_trees_equal_their_closed_forms_on_one_node(P, m, profile, root):
    prof = PROFILES[profile]
    root %= P
    closed = BCAST["binomial_bcast"].evaluate(prof, P=P, m=m, c="shm")
    for alg in ("binomial", "binomial_openmpi"):
        assert _close(BCAST[alg].evaluate(prof, P=P, m=m, root=root, mapping=ONE_NODE), closed), alg
    assert _close(SCATTER["binomial"].evaluate(prof, P=P, m=m, root=root, mapping=ONE_NODE),
                  SCATTER["binomial_scatter_node"].evaluate(prof, P=P, m=m))


@settings(max_examples=40, deadline=None)
@given(P=st.integers(1, 64), m=sizes, profile=st.sampled_from(sorted(PROFILES)), root=st.integers(0, 63))
def test_linear_broadcast_equals_its_closed_form(P, m, profile, root):
    prof = PROFILES[profile]
    root %= P
    got = BCAST["linear"].evaluate(prof, P=P, m=m, root=root, mapping=ONE_NODE)
    assert _close(got, BCAST["linear_bcast"].evaluate(prof, P=P, m=m, c="shm"))
    # one rank per node: every send crosses the network, one after another
    got = BCAST["linear"].evaluate(prof, P=P, m=m, root=root, mapping=tlop.sequential(1))
    assert _close(got, BCAST["linear_bcast"].evaluate(prof, P=P, m=m, c="net"))


def _T(prof, ch, m):
    return BCAST["linear_bcast"].evaluate(prof, P=2, m=m, c=ch)


@pytest.mark.parametrize("P", [2, 3, 5, 6, 7, 9, 12, 13, 31, 33, 64])
def test_real_trees_for_every_P_one_rank_per_node(P):
    """Q = 1: a stage costs the largest of its transfers, each alone into its node (τ = 1).  A
    self-send or a second send into one node (the library's trees for P not a power of two)
    would show as a different cost."""
    prof, m, S = PROFILES["lusitania"], 3000.0, math.ceil(math.log2(P))
    net = tlop.sequential(1)
    for alg in ("binomial", "binomial_openmpi"):
        for root in (0, P - 1):
            assert _close(BCAST[alg].evaluate(prof, P=P, m=m, root=root, mapping=net), S * _T(prof, "net", m))
    # scatter: at stage s the root's send carries min(d, P − d) blocks, d = 2^(S−1−s)
    want = sum(_T(prof, "net", m * min(2 ** (S - 1 - s), P - 2 ** (S - 1 - s))) for s in range(S))
    assert _close(SCATTER["binomial"].evaluate(prof, P=P, m=m, mapping=net), want)
    # gather: at mask 2^s the root receives min(2^s, P − 2^s) blocks
    want = sum(_T(prof, "net", m * min(2 ** s, P - 2 ** s)) for s in range(S))
    assert _close(GATHER["binomial"].evaluate(prof, P=P, m=m, root=1 % P, mapping=net), want)
    gamma = float(prof.table("gamma").lookup(m))
    assert _close(REDUCE["binomial_openmpi"].evaluate(prof, P=P, m=m, mapping=net),
                  S * (_T(prof, "net", m) + gamma))
    assert _close(REDUCE["linear_openmpi"].evaluate(prof, P=P, m=m, root=P // 2, mapping=net),
                  (P - 1) * (_T(prof, "net", m) + gamma))


def test_gatherv_is_one_linear_stage():
    """P − 1 transfers into the root at once: τ = P − 1 on one node."""
    prof, m = PROFILES["metropolis"], 1024.0
    one = GATHER["gatherv"].evaluate(prof, P=8, counts=m, mapping=ONE_NODE)  # every rank m
    assert _close(one, GATHER["linear"].evaluate(prof, P=8, m=m, mapping=ONE_NODE))
    assert _close(one, float(prof.table("o", "shm").lookup(m) + 2 * prof.table("L", "shm").lookup(m, 7)))


def test_scatter_sends_the_subtree_share_not_the_library_reversed_sizes():
    prof, m = PROFILES["lusitania"], 1024.0
    net = tlop.sequential(1)
    got = SCATTER["binomial"].evaluate(prof, P=8, m=m, mapping=net)
    assert _close(got, sum(_T(prof, "net", m * k) for k in (4, 2, 1)))


def test_todays_names_still_exist():
    assert {"binomial_bcast", "linear_bcast", "binomial", "linear", "binomial_openmpi"} <= set(BCAST.algorithms)
    assert {"binomial_scatter", "binomial_scatter_bound", "binomial"} <= set(SCATTER.algorithms)
    coll = tlop.load("taulop/collectives")
    assert {"binomial_bcast", "linear_bcast", "binomial_scatter", "binomial_scatter_bound",
            "rd_allgather", "scatter_allgather_bcast"} <= set(coll.algorithms)
