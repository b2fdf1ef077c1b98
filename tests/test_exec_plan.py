"""Execution plans of schedules (tlop.apps.plan): who sends what to whom per stage and phase,
against the schedule's own definition and the interpreter's prediction."""

from __future__ import annotations

import json

import pytest

import tlop
from tlop.apps.plan import ExecPlan, execution_plan, rank_program
from tlop.backends.binding import as_mapping
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.profile import load_profile


def _plan(f, a, P, m, mapping=None, profile="metropolis"):
    h = tlop.load(f)[a]
    return execution_plan(h, load_profile(profile), as_mapping(mapping or f"sequential({P})"), {"P": P, "m": m})


@pytest.mark.parametrize("P", [2, 3, 5, 8, 13])
def test_binomial_bcast_reaches_every_rank_once_from_a_rank_that_has_the_data(P):
    plan = _plan("taulop/bcast", "binomial", P, "1KiB")
    have = {0}
    received = []
    for stage in plan.stages:
        (phase,) = stage
        for src, dst, n in phase["sends"]:
            assert src in have and n == 1024
            received.append(dst)
        have |= {d for _, d, _ in phase["sends"]}
    assert sorted(received) == list(range(1, P))
    assert len(plan.stages) == (P - 1).bit_length()


def test_the_prediction_is_the_interpreters_cost_of_the_same_point():
    for f, a in [("taulop/bcast", "binomial"), ("taulop/allgather", "ring"), ("taulop/alltoall", "pairwise")]:
        plan = _plan(f, a, 8, "64KiB", "sequential(4)")
        want = tlop.load(f)[a].evaluate("metropolis", P=8, m=65536.0, mapping="sequential(4)")
        assert plan.predicted == pytest.approx(want, rel=1e-12)
        assert plan.mapping == "sequential(4)"


def test_ring_allgather_and_alltoall_shapes():
    ring = _plan("taulop/allgather", "ring", 4, "4KiB")
    assert len(ring.stages) == 3 and ring.sends == 12 and ring.bytes_sent == 12 * 4096
    for (phase,) in ring.stages:
        assert sorted((s, d) for s, d, _ in phase["sends"]) == [(0, 1), (1, 2), (2, 3), (3, 0)]
    basic = _plan("taulop/alltoall", "basic", 4, "1KiB")
    (stage,) = basic.stages
    assert len(stage) == 3  # the seq positions of every rank's receives are the phases
    pairs = sorted((s, d) for ph in stage for s, d, _ in ph["sends"])
    assert pairs == [(s, d) for s in range(4) for d in range(4) if s != d]  # weight 2 is cost, not a second send


def test_linear_bcast_is_one_sequence_at_the_root():
    plan = _plan("taulop/bcast", "linear", 4, "1KiB")
    (stage,) = plan.stages
    assert [ph["sends"] for ph in stage] == [[[0, 1, 1024]], [[0, 2, 1024]], [[0, 3, 1024]]]
    assert rank_program(plan, 0) == [([(1, 1024)], [], []), ([(2, 1024)], [], []), ([(3, 1024)], [], [])]
    assert rank_program(plan, 2) == [([], [(0, 1024)], [])]


def test_reductions_combine_what_the_rank_received():
    plan = _plan("taulop/reduce", "binomial_openmpi", 4, "8KiB")
    reduces = [r for st in plan.stages for ph in st for r in ph["reduces"]]
    assert sorted(reduces) == [[0, 8192], [0, 8192], [1, 8192]]
    prog = rank_program(plan, 0)  # receive, then combine (a sequence: the next phase)
    assert [(len(recvs), red) for _, recvs, red in prog] == [(1, []), (0, [8192]), (1, []), (0, [8192])]


def test_json_round_trip():
    plan = _plan("taulop/allgather", "ring", 4, "1KiB")
    again = ExecPlan.from_json(json.loads(json.dumps(plan.as_json())))
    assert again == plan


@pytest.mark.parametrize("f, a, values, message", [
    ("taulop/bcast", "binomial_bcast", {"P": 4, "m": "1KiB"}, "is not a schedule over a process mapping"),
    ("taulop/bcast", "binomial", {"P": 4, "m": "1.5"}, "a run needs whole bytes"),
])
def test_refusals(f, a, values, message):
    h = tlop.load(f)[a]
    with pytest.raises(TlopError, match=message):
        execution_plan(h, load_profile("metropolis"), as_mapping("sequential(4)"), values)
