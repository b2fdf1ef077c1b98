"""An ``exchange a <-> b`` runs both ways in ``tlop validate``'s plan and costs what it did.

τ-Lop prices an exchange as one transfer of weight 2 (and, with ``combine``, one reduction); the
IR marks that send and that reduction (``ir.Send.exchange``, ``ir.Compute.exchange``) so the
execution plan runs the sendrecv it stands for — a → b and b → a in one phase, both ranks
combining — while a plain ``send … weight 2`` (libtaulop's alltoall) stays one message."""

from __future__ import annotations

from collections import Counter

import pytest

import tlop
from tlop import ir
from tlop.analysis.plan import execution_plan
from tlop.backends.binding import as_mapping

SRC = """
import "taulop/platform.tlop"

algorithm pairs_exchange(P: int >= 2, m: bytes) over map: mapping =
    stage {
        par q in 0 .. P div 2 - 1:
            exchange 2 * q <-> 2 * q + 1 : m combine
    }

algorithm pairs_weight2(P: int >= 2, m: bytes) over map: mapping =
    stage {
        par q in 0 .. P div 2 - 1: {
            send 2 * q -> 2 * q + 1 : m weight 2
            reduce 2 * q : m
        }
    }
"""


def _items(e, out):
    if isinstance(e, (ir.Send, ir.Compute)):
        out.append(e)
    for k in ir.children(e):
        _items(k, out)
    return out


def test_the_ir_marks_the_exchange_and_costs_stay_identical():
    mod = tlop.loads(SRC)
    ex, w2 = mod["pairs_exchange"], mod["pairs_weight2"]
    sends = [i for i in _items(ex.ir.body, []) if isinstance(i, ir.Send)]
    computes = [i for i in _items(ex.ir.body, []) if isinstance(i, ir.Compute)]
    assert [s.exchange for s in sends] == [True] and [c.exchange for c in computes] == [True]
    assert not any(i.exchange for i in _items(w2.ir.body, []))
    for P in (2, 4, 8):
        for m in (1.0, 4096.0, 1 << 20):
            a = ex.evaluate("metropolis", mapping="sequential(2)", P=P, m=m)
            b = w2.evaluate("metropolis", mapping="sequential(2)", P=P, m=m)
            assert float(a) == float(b)  # the marker changes nothing a cost reads
            jit = ex.compile("metropolis", mapping="sequential(2)")(P=float(P), m=m)
            assert float(jit) == pytest.approx(float(a), rel=1e-12)


def test_the_plan_runs_an_exchange_both_ways_and_a_weight_2_send_once():
    mod = tlop.loads(SRC)
    mapping = as_mapping("sequential(2)")
    metropolis = tlop.load_profile("metropolis")
    ex = execution_plan(mod["pairs_exchange"], metropolis, mapping, {"P": 4, "m": "1KiB"})
    w2 = execution_plan(mod["pairs_weight2"], metropolis, mapping, {"P": 4, "m": "1KiB"})
    (phases,) = ex.stages
    assert sorted(tuple(s) for s in phases[0]["sends"]) == [(0, 1, 1024), (1, 0, 1024), (2, 3, 1024), (3, 2, 1024)]
    assert sorted(tuple(r) for ph in phases for r in ph["reduces"]) == [(0, 1024), (1, 1024), (2, 1024), (3, 1024)]
    (phases,) = w2.stages
    assert sorted(tuple(s) for s in phases[0]["sends"]) == [(0, 1, 1024), (2, 3, 1024)]
    assert sorted(tuple(r) for ph in phases for r in ph["reduces"]) == [(0, 1024), (2, 1024)]
    assert ex.predicted == w2.predicted


@pytest.mark.parametrize("ref, P", [("coll/allreduce:recursive_doubling", 4), ("coll/allreduce:recursive_doubling", 6),
                                    ("coll/allreduce:mpich_reduce_scatter_allgather", 4),
                                    ("coll/allgather:recursive_doubling", 4),
                                    ("coll/reduce_scatter_block:recursive_halving", 4)])
def test_the_plan_of_a_library_schedule_sends_its_sendrecvs_both_ways(ref, P):
    """The τ-Lop plan's messages are the schedule's as tests/_traffic.py counts them (a weight-2
    send both ways — the count tests/test_catalogue_a.py checks against the real libraries'
    messages for these algorithms)."""
    from _traffic import schedule_pairs

    module, _, name = ref.partition(":")
    h = tlop.load(module, model="taulop")[name]
    plan = execution_plan(h, tlop.load_profile("metropolis"), as_mapping(f"sequential({P})"), {"P": P, "m": "4KiB"})
    nbytes, count = Counter(), Counter()
    for st in plan.stages:
        for ph in st:
            for s, d, n in ph["sends"]:
                nbytes[(s, d)] += n
                count[(s, d)] += 1
    got = {k: (nbytes[k], count[k]) for k in count}
    assert got == schedule_pairs(ref, P, 4096, mapping=f"sequential({P})")
    assert any(got.get((d, s)) == v for (s, d), v in got.items() if s != d)  # some pair speaks both ways


@pytest.mark.mpi
def test_an_exchange_plan_runs_under_mpi(tmp_path, monkeypatch):
    """The plan of coll/allreduce recursive_doubling (exchanges both ways, both ranks combining)
    runs under mpiexec on 3 ranks, every message checked against the plan by schedrun."""
    pytest.importorskip("mpi4py")
    import test_schedrun_mpi as S

    monkeypatch.setattr(S, "CASES", [("coll/allreduce", "recursive_doubling")])
    job, cells = S._job(tmp_path, 3, ["4KiB"])
    assert any(len(ph["sends"]) > 1 and any(s[:2][::-1] == t[:2] for s in ph["sends"] for t in ph["sends"])
               for c in cells for st in c["plan"]["stages"] for ph in st)  # a pair sending both ways
    events = []
    assert S._run(job, 3, events) == len(cells)
    assert [e["event"] for e in events].count("done") == len(cells)
