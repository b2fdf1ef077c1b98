"""MPICH's ``nb`` algorithms (compiler/decisions/catalogue/nonblocking.py): ``MPIR_<Coll>_allcomm_nb``
runs ``MPI_I<coll>`` and waits, so it is a composite over MPICH's ``collective=i<coll>`` selection,
whose ``MPIR_I<coll>_intra_sched_*`` algorithms are priced as the blocking schedules with the same
messages.

What is checked: (1) every ``sched`` algorithm the catalogue ties to a blocking schedule resolves
(its collective, the schedule, the blocking entry's parameters), the ``nb`` entries are composites
and priced finite where MPICH's tree reaches a listed algorithm — equal to that schedule's cost on
a one-rank-per-node mapping, and to the smp composite's parts on one node; (2) marked ``mpi``: with
``MPIR_CVAR_<COLL>_INTRA_ALGORITHM=nb`` and the nonblocking algorithm forced by
``MPIR_CVAR_I<COLL>_INTRA_ALGORITHM``, the messages MPICH's transport logs (libfabric's trace hook,
:mod:`tlop.runtime.measure.witness`) equal the schedule's, (source, destination) → (bytes,
messages); and with only ``nb`` forced (MPICH's own i<coll> selection on one node) they equal those
of the algorithm :func:`tlop.decisions.mpich_defaults.decide` reaches.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import tlop
from tlop.decisions.catalogue import COLLECTIVES, find
from tlop.decisions.catalogue.nonblocking import SCHED


def traffic(schedule: str, P: int, m: int, fixed: dict, token: bool) -> dict:
    """{(src, dst): (bytes, messages)} of the stdlib schedule ``module:name`` (τ-Lop) at (P, m):
    test_catalogue_b's reading of its stages (an exchange counted once each way), with only the
    parameters the schedule declares; ``token``: the barrier's 1-byte tokens count as the
    library's 0 bytes."""
    from test_catalogue_b import traffic as schedule_traffic

    mod, name = schedule.split(":")
    h = tlop.load(mod)[name]
    names = {p.name for p in h.ir.params}
    sent = schedule_traffic(h, P, m, **{k: v for k, v in fixed.items() if k in names})
    return {k: (0 if token else nbytes, n) for k, (nbytes, n) in sent.items()}


# ---------------------------------------------------------------- (1) the catalogue and prices

def test_every_nb_entry_is_a_composite_over_the_nonblocking_selection():
    for coll in COLLECTIVES:
        nb = find("mpich", coll, "nb")
        assert nb.status.startswith("composite: ") and nb.parts is not None and not nb.candidate
        assert nb.parts(4, 100)[0].collective == "i" + coll
        assert nb.source.endswith(f"MPIR_{coll.capitalize()}_allcomm_nb")


@pytest.mark.parametrize("name", sorted(SCHED))
def test_every_sched_algorithm_resolves(name):
    a = find("mpich", "i" + SCHED[name][0], name)
    assert a.id == name and a.collective == "i" + SCHED[name][0] and not a.candidate
    assert a.source.startswith("src/mpi/coll/i")
    if SCHED[name][1] is None:
        assert a.parts is not None and a.status.startswith("composite: ")
    elif SCHED[name][1].startswith("coll/"):  # a schedule of its own (ibcast's scatter differs)
        assert a.schedule == SCHED[name][1] and "MPII_Iscatter_for_bcast_sched" in a.source
    else:
        b = find("mpich", SCHED[name][0], SCHED[name][1])
        assert a.schedule == b.schedule and a.fixed == {**b.fixed, **SCHED[name][2]}
        assert b.source.split(": ")[-1] in a.source or "dissemination" in a.source
    with pytest.raises(KeyError):
        find("mpich", "ibcast", "MPIR_Ibcast_intra_tsp_tree")


def test_the_nonblocking_bcast_scatter_by_hand():
    """MPII_Iscatter_for_bcast_sched on 8 ranks, 7 bytes (blocks of 1): the root sends 3, 2, 1 bytes
    to 4, 2, 1 and rank 4 sends 1 to 6 and 1 to 5, as the blocking scatter does; but rank 2 takes
    curr_size = 7 − 2 = 5 and sends 5 − 1 = 4 bytes to rank 3 (the blocking one: 1), and rank 6
    holds 1 byte, not more than its own block, so it sends nothing to 7."""
    sent = traffic("coll/bcast:mpich_ibinomial_scatter", 8, 7, {}, token=False)
    assert sent == {(0, 4): (3, 1), (0, 2): (2, 1), (0, 1): (1, 1), (4, 6): (1, 1), (4, 5): (1, 1), (2, 3): (4, 1)}
    blocking = traffic("coll/bcast:binomial_scatter", 8, 7, {}, token=False)
    assert blocking == {**sent, (2, 3): (1, 1)}


def test_the_nonblocking_calls_sizes_are_csels():
    """csel.c's sizes for MPIR_CSEL_COLL_TYPE__I<COLL> are the blocking call's, except that
    ireduce_scatter_block's total omits the type size and ibcast has no count (get_count)."""
    from tlop.decisions.library_size import mpich_sizes

    assert mpich_sizes("iallreduce", 4, 1000) == mpich_sizes("allreduce", 4, 1000)
    assert mpich_sizes("ialltoall", 4, 1000) == mpich_sizes("alltoall", 4, 1000)
    assert mpich_sizes("ibcast", 4, 1000) == {"avg_msg_size": 1000, "total_msg_size": 4000}
    assert mpich_sizes("ireduce_scatter_block", 4, 1000, dtype_size=8)["total_msg_size"] == 500
    assert mpich_sizes("reduce_scatter_block", 4, 1000, dtype_size=8)["total_msg_size"] == 4000


def _pricer(mapping):
    from tlop.backends.binding import as_mapping
    from tlop.decisions.selection import Pricer
    from tlop.runtime.profile import load_profile

    return Pricer(load_profile("metropolis"), as_mapping(mapping), "taulop")


@pytest.mark.parametrize("coll", COLLECTIVES)
def test_nb_costs_what_the_reached_schedule_costs(coll):
    """One rank per node (``sequential(1)``: not a parent communicator, so no smp): nb costs
    exactly the schedule of the sched algorithm MPICH's i<coll> tree reaches, at every (P, m)."""
    from tlop.decisions.mpich_defaults import decide

    pricer = _pricer("sequential(1)")
    nb = find("mpich", coll, "nb")
    ms = np.array([0.0] if coll == "barrier" else [8.0, 4096.0, 1 << 20])
    for P in (2, 3, 4, 8, 9):
        got = pricer.price(nb, P, ms, {})
        for j, m in enumerate(ms):
            d = decide("i" + coll, P, int(m), mapping=tlop.sequential(1))
            a = d.algorithm()
            assert a.schedule, (coll, P, m, d.id)
            want = float(pricer.price(a, P, np.array([m]), {})[0])
            assert math.isfinite(got[j]) and got[j] > 0 and got[j] == pytest.approx(want, rel=1e-12), (coll, P, m)


@pytest.mark.parametrize("coll", ["bcast", "reduce"])
def test_nb_on_nodes_is_the_smp_schedule_of_its_sub_communicators(coll):
    """A parent communicator (4 nodes of 2): MPICH's i<coll> tree picks sched_smp, whose calls
    on the node leaders and on the nodes are priced with the non-parent branch; on one node the
    leaders' call sends nothing and the cost is the node's own i<coll>."""
    from tlop.decisions.mpich_defaults import decide

    nb = find("mpich", coll, "nb")
    assert decide("i" + coll, 8, 100, mapping=tlop.sequential(2)).id == f"MPIR_I{coll}_intra_sched_smp"
    two = _pricer("sequential(2)")
    got = float(two.price(nb, 8, np.array([100.0]), {})[0])
    assert math.isfinite(got) and got > 0
    one = _pricer("sequential(4)")
    inner = decide("i" + coll, 4, 100, parent_comm=False, nodes=1, node_consecutive=True).algorithm()
    assert float(one.price(nb, 4, np.array([100.0]), {})[0]) == pytest.approx(
        float(one.price(inner, 4, np.array([100.0]), {})[0]), rel=1e-12)


# ---------------------------------------------------------------- (2) MPICH's messages

@pytest.fixture(scope="module")
def mpich():
    pytest.importorskip("mpi4py")
    from tlop.decisions.tuning_files import mpich_default_selection

    if mpich_default_selection() is None:
        pytest.skip("MPICH's library (the mpich wheel) is not beside this Python")


#: one rank's calls of a collective, one per size, between the markers the witness reader knows
#: (tlop.runtime.measure.witness.mpich_received); each call's result is checked
SCRIPT = """
import os, sys
out, coll, sizes = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
os.dup2(os.open(os.path.join(out, "trace." + os.environ["PMI_RANK"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
from mpi4py import MPI
import numpy as np
c = MPI.COMM_WORLD
r, P = c.Get_rank(), c.Get_size()
bad = []
for m in sizes:
    ones, blocks = np.ones(m, dtype=np.uint8), np.repeat(np.arange(1, P + 1, dtype=np.uint8), m)
    got = np.zeros(m * P, dtype=np.uint8)
    c.Barrier()
    os.write(2, b"TLOP-BEGIN %d\\n" % m)
    if coll == "barrier":
        c.Barrier(); ok = True
    elif coll == "bcast":
        b = np.full(m, 7 if r == 0 else 0, dtype=np.uint8); c.Bcast(b, root=0); ok = (b == 7).all()
    elif coll == "reduce":
        b = np.zeros(m, dtype=np.uint8); c.Reduce(ones, b, op=MPI.SUM, root=0); ok = r != 0 or (b == P).all()
    elif coll == "allreduce":
        b = np.zeros(m, dtype=np.uint8); c.Allreduce(ones, b, op=MPI.SUM); ok = (b == P).all()
    elif coll == "allgather":
        c.Allgather(np.full(m, r, dtype=np.uint8), got)
        ok = (got.reshape(P, m) == np.arange(P, dtype=np.uint8)[:, None]).all()
    elif coll == "gather":
        c.Gather(np.full(m, r, dtype=np.uint8), got, root=0)
        ok = r != 0 or (got.reshape(P, m) == np.arange(P, dtype=np.uint8)[:, None]).all()
    elif coll == "scatter":
        b = np.zeros(m, dtype=np.uint8); c.Scatter(blocks, b, root=0); ok = (b == r + 1).all()
    elif coll == "alltoall":
        c.Alltoall(np.repeat(np.arange(r * P, r * P + P, dtype=np.uint8), m), got)
        ok = (got.reshape(P, m) == (np.arange(P) * P + r).astype(np.uint8)[:, None]).all()
    else:
        b = np.zeros(m, dtype=np.uint8)
        if coll == "reduce_scatter":
            c.Reduce_scatter(blocks, b, recvcounts=[m] * P, op=MPI.SUM)
        else:
            c.Reduce_scatter_block(blocks, b, op=MPI.SUM)
        ok = (b == np.uint8(P * (r + 1))).all()
    os.write(2, b"TLOP-END %d\\n" % m)
    if not ok:
        bad.append(m)
os.write(2, b"TLOP-DONE\\n" if not bad else b"TLOP-WRONG %r\\n" % bad)
"""


def observed(coll: str, P: int, sizes: list, env: dict, tmp_path) -> dict:
    """{m: {(src, dst): (bytes, messages)}}: what MPICH's transport logged for one call per size
    (the network path with libfabric's trace hook, tlop.runtime.measure.witness.MPICH_TRACED)."""
    import os
    import subprocess
    import sys

    from tlop.runtime.measure.launch import find_mpiexec
    from tlop.runtime.measure.witness import MPICH_TRACED, mpich_received

    script = tmp_path / "nb.py"
    script.write_text(SCRIPT)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("MPIR_CVAR_", "FI_"))}
    full.update(MPICH_TRACED, **env)
    r = subprocess.run([find_mpiexec(), "-n", str(P), sys.executable, str(script), str(tmp_path), coll,
                        ",".join(map(str, sizes))], capture_output=True, env=full, timeout=300)
    logs = [(tmp_path / f"trace.{k}").read_text(errors="replace") for k in range(P)]
    assert r.returncode == 0 and all("TLOP-DONE\n" in log for log in logs), \
        r.stderr.decode(errors="replace")[-800:] + "".join(log[-300:] for log in logs)
    out = {}
    for m in sizes:
        nbytes: Counter = Counter()
        count: Counter = Counter()
        for dst, log in enumerate(logs):
            for src, n in mpich_received(log, str(m)):
                nbytes[(src, dst)] += n
                count[(src, dst)] += 1
        out[m] = {k: (nbytes[k], count[k]) for k in count}
    return out


def _size(coll: str) -> int:
    # per-rank buffer of the call: a whole buffer (count ≥ P for the scatter-based and
    # reduce-scatter-based ones), one block for the others
    return 4096 if coll in ("bcast", "reduce", "allreduce") else 0 if coll == "barrier" else 10


#: each sched algorithm at P = 3 (P = 4 where MPICH runs it only on a power of two)
FORCED = [pytest.param(name, 4 if find("mpich", "i" + SCHED[name][0], name).pow2_only
                       or name.endswith("scatter_recursive_doubling_allgather") else 3, id=name)
          for name in sorted(SCHED) if SCHED[name][1] is not None] + [
    # two launches beyond P = 4, where what is checked cannot show on fewer ranks: the nonblocking
    # scatter of ibcast sends more than the blocking one only from a non-root rank whose subtree is
    # not the last (P = 5: rank 2 sends 1636 B to rank 3, the blocking scatter 820 B), and the fold
    # of two ranks (P = 6) before the reduce-scatter (exact when 2^⌊log2 P⌋ divides m = 4096)
    pytest.param("MPIR_Ibcast_intra_sched_scatter_ring_allgather", 5, id="ibcast-sra-P5"),
    pytest.param("MPIR_Iallreduce_intra_sched_reduce_scatter_allgather", 6, id="iallreduce-rsag-P6")]


@pytest.mark.mpi
@pytest.mark.parametrize("name, P", FORCED)
def test_mpich_nb_with_the_sched_algorithm_forced_sends_the_schedules_messages(mpich, name, P, tmp_path):
    coll = SCHED[name][0]
    a = find("mpich", "i" + coll, name)
    m = _size(coll)
    env = {f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM": "nb",
           f"MPIR_CVAR_I{coll.upper()}_INTRA_ALGORITHM": a.name}
    got = observed(coll, P, [m], env, tmp_path)[m]
    assert got, "MPICH's transport logged no message"
    assert got == traffic(a.schedule, P, m, a.fixed, token=coll == "barrier")


#: MPICH's own i<coll> selection (only nb forced), on this one node: a parent communicator, so
#: ibcast/ireduce go through sched_smp to the node's own call
DEFAULT = [("barrier", 3, [0]), ("bcast", 4, [10, 4096]), ("reduce", 4, [10, 4096]), ("allreduce", 4, [10, 4096]),
           ("alltoall", 3, [10]), ("reduce_scatter_block", 4, [10])]


@pytest.mark.mpi
@pytest.mark.parametrize("coll, P, sizes", DEFAULT, ids=[c[0] for c in DEFAULT])
def test_mpich_nb_sends_what_the_default_selection_reaches(mpich, coll, P, sizes, tmp_path):
    from tlop.decisions.mpich_defaults import decide

    got = observed(coll, P, sizes, {f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM": "nb"}, tmp_path)
    for m in sizes:
        a = decide("i" + coll, P, m, mapping=tlop.sequential(P)).algorithm()
        if a.parts is not None:  # sched_smp on one node: the node's own call
            a = decide("i" + coll, P, m, parent_comm=False, nodes=1, node_consecutive=True).algorithm()
        assert got[m] == traffic(a.schedule, P, m, a.fixed, token=coll == "barrier"), (m, a.id)
