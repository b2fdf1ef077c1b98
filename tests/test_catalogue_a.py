"""The libraries' catalogues for bcast, reduce, allreduce and barrier (compiler/decisions/catalogue/
{bcast,reduce,allreduce,barrier}.py, stdlib/coll/{bcast,reduce,allreduce,barrier}.tlop).

(1) Every entry with a schedule loads and prices to a finite positive cost on the metropolis
τ-Lop profile over ``sequential(4)`` at P = 2 … 9 and m in {1 B, 1 KiB, 1 MiB}, and in LogGP and
pLogP (the localhost-example profile) at P = 2, 3, 5, 8, 9; entries without one say why.  (2) The schedule's messages are the real library's: the library runs with that algorithm
forced and its own counters (Open MPI's pml ``monitoring``, per pair of ranks: bytes and messages)
or its transport's trace (MPICH over libfabric's ``trace`` hook, see tests/_mpich_helpers.py) list
who sent how many bytes to whom in how many messages; the schedule's sends, with every
``exchange`` (τ-Lop lists it as one send of weight 2) counted in both directions,
must give the same table.  Barrier schedules send 1-byte tokens where the libraries send 0 bytes:
the comparison counts those as 0 bytes.  (3) The published closed forms: paper 004's pLogP
broadcast rows (Table 1: flat, chain, segmented chain, binomial) on random profiles that meet the
rows' assumption, and the LogGP binomial row ⌈log2 P⌉·(2o + L + (m − 1)G) (P a power of two,
g ≤ L + 2o) on the bundled localhost-example profile, against the libraries' schedules priced as
dataflow programs.  Not compared: allreduce/reduce/barrier closed forms (Thakur et al. 2005 is
not among the project's papers).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter

import pytest

from tlop.decisions.catalogue import LibraryAlgorithm, catalogue

MINE = ("bcast", "reduce", "allreduce", "barrier")


def _entries():
    return [a for c in MINE for a in catalogue(c)]


def _handle(ref, model="taulop"):
    from tlop.api import load

    f, a = ref.split(":")
    return load(f, model=model)[a]


def _point(a: LibraryAlgorithm, P: int, m: int, seg=8192, k=None) -> dict:
    """The schedule's arguments for ``a`` at (P, m): the library's fixed values, else ``seg`` and
    ``k`` (default: the first value tune would search)."""
    names = [p.name for p in _handle(a.schedule).params]
    out = {"P": P}
    if "m" in names:
        out["m"] = m
    if "seg" in names:
        out["seg"] = a.fixed.get("seg", seg)
    if "k" in names:
        out["k"] = a.fixed.get("k", k if k is not None else (a.searched.get("k") or (4,))[0])
    return out


def _runs_at(a: LibraryAlgorithm, P: int) -> bool:
    if a.pow2_only and P & (P - 1):
        return False
    return not (a.name == "two_proc" and P != 2)


# ---------------------------------------------------------------------------------------------
# (1) the catalogue and its schedules


def test_the_catalogue_lists_every_algorithm_of_both_libraries_for_my_collectives():
    names = {(a.library, a.collective): {a.name for a in catalogue(a.collective, a.library)} for a in _entries()}
    assert names[("openmpi", "bcast")] == {"basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree",
                                           "binomial", "knomial", "scatter_allgather", "scatter_allgather_ring"}
    assert names[("openmpi", "reduce")] == {"linear", "chain", "pipeline", "binary", "binomial", "in-order_binary",
                                            "rabenseifner"}
    assert names[("openmpi", "allreduce")] == {"basic_linear", "nonoverlapping", "recursive_doubling", "ring",
                                               "segmented_ring", "rabenseifner"}
    assert names[("openmpi", "barrier")] == {"linear", "double_ring", "recursive_doubling", "bruck", "two_proc", "tree"}
    assert names[("mpich", "bcast")] == {"binomial", "scatter_recursive_doubling_allgather", "scatter_ring_allgather",
                                         "tree", "pipelined_tree", "smp", "nb"}
    assert names[("mpich", "reduce")] == {"binomial", "reduce_scatter_gather", "smp", "nb"}
    assert names[("mpich", "allreduce")] == {"recursive_doubling", "recursive_multiplying", "reduce_scatter_allgather",
                                             "tree", "recexch", "ring", "k_reduce_scatter_allgather", "smp", "nb"}
    assert names[("mpich", "barrier")] == {"k_dissemination", "recexch", "smp", "nb"}
    for a in _entries():
        if a.library == "openmpi":
            assert isinstance(a.id, int) and a.id >= 1, a.key
        else:
            assert a.id.startswith(f"MPIR_{a.collective.capitalize()}_"), a.key
        assert (a.schedule is None) == (a.status != "schedule"), a.key
        assert a.schedule is not None or len(a.status) > 40, a.key  # a reason, not a word
        assert a.source.split(":")[0].endswith(".c") and a.source.split(": ")[1], a.key


def _distinct():
    """One entry per (schedule, fixed arguments): entries of both libraries that run the same
    messages point at one schedule."""
    seen, out = set(), []
    for a in _entries():
        key = (a.schedule, tuple(sorted(a.fixed.items())))
        if a.schedule and key not in seen:
            seen.add(key)
            out.append(a)
    return out


@pytest.mark.parametrize("model, profile", [("taulop", "metropolis"), ("loggp", "localhost-example"),
                                            ("plogp", "localhost-example")])
@pytest.mark.parametrize("a", _distinct(), ids=lambda a: a.key)
def test_every_schedule_prices_to_a_finite_positive_cost(a, model, profile):
    h = _handle(a.schedule, model)
    # τ-Lop at every P = 2 … 9; the dataflow models (slower to evaluate) at P = 2, 3, 5, 8, 9
    for P in range(2, 10) if model == "taulop" else (2, 3, 5, 8, 9):
        if not _runs_at(a, P):
            continue
        for m in (1, 1024, 1 << 20):
            args = _point(a, P, m, seg=262144)
            t = float(h.evaluate(profile, mapping="sequential(4)", **args))
            assert math.isfinite(t) and t > 0, (a.key, model, args, t)


def test_a_larger_message_costs_more_and_segments_change_the_cost():
    bc = _handle("coll/bcast:ompi_binomial")
    small = bc.evaluate("metropolis", P=8, m=1024, seg=0, mapping="sequential(4)")
    large = bc.evaluate("metropolis", P=8, m=1 << 20, seg=0, mapping="sequential(4)")
    seg = bc.evaluate("metropolis", P=8, m=1 << 20, seg=65536, mapping="sequential(4)")
    assert large > small and seg != large
    # the barrier's tokens cost a message each: never zero
    assert _handle("coll/barrier:ompi_double_ring").evaluate("metropolis", P=4, mapping="sequential(4)") > \
        _handle("coll/barrier:dissemination").evaluate("metropolis", P=4, k=2, mapping="sequential(4)") > 0


# ---------------------------------------------------------------------------------------------
# (2) the schedule's messages against the library's


def schedule_traffic(ref: str, values: dict, token: bool = False) -> dict:
    """{(src, dst): (bytes, messages)} of the schedule at ``values``: every send, a ``weight 2``
    send counted once each way (the sendrecv it stands for); ``token``: 1-byte sends count as 0
    bytes (the barrier's)."""
    from tlop.analysis.stages import explain_stages
    from tlop.backends.binding import as_mapping, bind_mapping
    from tlop.runtime.profile import load_profile

    h = _handle(ref)
    mapping = as_mapping("sequential(4)")
    env = h.bind({k: str(v) for k, v in values.items()}, strings=True)
    bound = bind_mapping(h.ir, env, mapping)
    shown = {p.name: str(values.get(p.name, env[p.name])) for p in h.ir.params}
    e = explain_stages(h.module.program, h.ir, load_profile("metropolis"), mapping, bound, shown, shown)
    nbytes, count = Counter(), Counter()
    for s in e.stages:
        for src, dst, size, w, _ch, _ph in s.sends:
            for pair in ([(src, dst)] if w == 1 else [(src, dst), (dst, src)]):
                nbytes[pair] += 0 if token else int(size)
                count[pair] += 1
    return {p: (nbytes[p], count[p]) for p in count}


#: the rank script of every real-MPI message test (here and tests/test_catalogue_composite.py):
#: ``coll.py COLL M [TRACE_DIR]`` runs one collective of M bytes per rank and checks its result
COLL = """
import os, sys
coll, m = sys.argv[1], int(sys.argv[2])
trace = sys.argv[3] if len(sys.argv) > 3 else None
if trace:
    os.dup2(os.open(os.path.join(trace, "trace." + os.environ["PMI_RANK"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
from mpi4py import MPI
import numpy as np
c = MPI.COMM_WORLD
r, P = c.Get_rank(), c.Get_size()
if trace:  # MPICH's trace: mark where the collective starts (Open MPI counts the collective alone)
    c.Barrier()
    os.write(2, b"TLOP-BEGIN\\n")
if coll == "allreduce":
    out = np.zeros(m, dtype=np.uint8)
    c.Allreduce(np.ones(m, dtype=np.uint8), out, op=MPI.SUM)
    ok = (out == P).all()
elif coll == "reduce":
    out = np.zeros(m, dtype=np.uint8)
    c.Reduce(np.ones(m, dtype=np.uint8), out, op=MPI.SUM, root=0)
    ok = r != 0 or (out == P).all()
elif coll == "allgather":
    out = np.zeros(P * m, dtype=np.uint8)
    c.Allgather(np.full(m, r, dtype=np.uint8), out)
    ok = (out.reshape(P, m) == np.arange(P, dtype=np.uint8)[:, None]).all()
elif coll == "reduce_scatter_block":
    out = np.zeros(m, dtype=np.uint8)
    c.Reduce_scatter_block(np.ones(P * m, dtype=np.uint8), out, op=MPI.SUM)
    ok = (out == P).all()
elif coll == "reduce_scatter":
    out = np.zeros(m, dtype=np.uint8)
    c.Reduce_scatter(np.ones(P * m, dtype=np.uint8), out, recvcounts=[m] * P, op=MPI.SUM)
    ok = (out == P).all()
elif coll == "bcast":
    b = np.full(m, 7 if r == 0 else 0, dtype=np.uint8)
    c.Bcast(b, root=0)
    ok = (b == 7).all()
else:
    c.Barrier()
    ok = True
if trace:
    os.write(2, b"TLOP-END\\n" + (b"TLOP-CORRECT\\n" if ok else b"TLOP-WRONG\\n"))
elif not ok:
    sys.exit(3)
"""


def openmpi_traffic(prefix, tmp_path, coll, m, P, forcing):
    """{(src, dst): (bytes, messages)} of Open MPI's collective with ``forcing`` (MCA variables of
    coll/tuned, without the OMPI_MCA_coll_tuned_ prefix), from its pml monitoring counters."""
    from tlop.runtime.measure.openmpi import openmpi_env, openmpi_mpiexec

    script = tmp_path / "coll.py"
    script.write_text(COLL)
    env = dict(os.environ, **openmpi_env(prefix), OMPI_MCA_coll_tuned_priority="100",
               OMPI_MCA_coll_tuned_use_dynamic_rules="1",
               OMPI_MCA_pml_monitoring_enable="2", OMPI_MCA_pml_monitoring_enable_output="1",
               **{f"OMPI_MCA_coll_tuned_{k}": str(v) for k, v in forcing.items()})
    r = subprocess.run([openmpi_mpiexec(prefix), "-n", str(P), sys.executable, str(script), coll, str(m)],
                       capture_output=True, env=env, timeout=180)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0, out[-2000:] + r.stderr.decode(errors="replace")[-2000:]
    pairs = {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "I" and len(f) >= 5:  # internal (collective) messages of this rank
            pairs[(int(f[1]), int(f[2]))] = (int(f[3].split()[0]), int(f[4].split()[0]))
    return pairs




@pytest.fixture(scope="module")
def openmpi():
    pytest.importorskip("mpi4py")
    from tlop.runtime.diagnostics import TlopError
    from tlop.runtime.measure.openmpi import ensure_openmpi

    try:
        return ensure_openmpi()
    except TlopError as err:
        pytest.skip(str(err))


#: (collective, algorithm name, P, m, schedule arguments, coll/tuned forcing beyond the algorithm id)
OMPI_CASES = [
    ("bcast", "basic_linear", 4, 4096, {}, {}),
    ("bcast", "chain", 4, 65536, {"seg": 16384, "k": 2}, {"bcast_algorithm_segmentsize": 16384,
                                                          "bcast_algorithm_chain_fanout": 2}),
    ("bcast", "pipeline", 4, 65536, {"seg": 16384}, {"bcast_algorithm_segmentsize": 16384}),
    ("bcast", "split_binary_tree", 4, 65536, {"seg": 16384}, {"bcast_algorithm_segmentsize": 16384}),
    ("bcast", "split_binary_tree", 5, 4096, {"seg": 0}, {}),
    ("bcast", "binary_tree", 4, 65536, {"seg": 32768}, {"bcast_algorithm_segmentsize": 32768}),
    ("bcast", "binomial", 3, 4096, {"seg": 0}, {}),
    ("bcast", "binomial", 4, 65536, {"seg": 16384}, {"bcast_algorithm_segmentsize": 16384}),
    ("bcast", "knomial", 4, 4096, {"seg": 0, "k": 4}, {}),
    ("bcast", "scatter_allgather", 4, 4096, {}, {}),
    ("bcast", "scatter_allgather", 3, 4096, {}, {}),
    ("bcast", "scatter_allgather_ring", 3, 4096, {}, {}),
    ("reduce", "linear", 4, 4096, {}, {}),
    ("reduce", "chain", 4, 65536, {"seg": 32768, "k": 2}, {"reduce_algorithm_segmentsize": 32768,
                                                           "reduce_algorithm_chain_fanout": 2}),
    ("reduce", "pipeline", 3, 65536, {"seg": 32768}, {"reduce_algorithm_segmentsize": 32768}),
    ("reduce", "binary", 4, 4096, {"seg": 0}, {}),
    ("reduce", "binomial", 3, 4096, {"seg": 0}, {}),
    ("reduce", "in-order_binary", 4, 4096, {"seg": 0}, {}),
    ("reduce", "in-order_binary", 6, 65536, {"seg": 32768}, {"reduce_algorithm_segmentsize": 32768}),
    ("reduce", "rabenseifner", 3, 4096, {}, {}),
    ("allreduce", "basic_linear", 4, 4096, {}, {}),
    ("allreduce", "recursive_doubling", 3, 4096, {}, {}),
    ("allreduce", "ring", 3, 4096, {}, {}),
    ("allreduce", "segmented_ring", 4, 65536, {"seg": 4096}, {"allreduce_algorithm_segmentsize": 4096}),
    ("allreduce", "rabenseifner", 3, 4096, {}, {}),
    ("barrier", "linear", 4, 0, {}, {}),
    ("barrier", "double_ring", 3, 0, {}, {}),
    ("barrier", "recursive_doubling", 3, 0, {}, {}),
    ("barrier", "bruck", 3, 0, {}, {}),
    ("barrier", "tree", 3, 0, {}, {}),
]


@pytest.mark.mpi
@pytest.mark.parametrize("coll, name, P, m, args, forcing", OMPI_CASES,
                         ids=[f"{c[0]}-{c[1]}-P{c[2]}" for c in OMPI_CASES])
def test_open_mpi_sends_the_messages_of_the_schedule(openmpi, tmp_path, coll, name, P, m, args, forcing):
    from tlop.decisions.catalogue import find

    a = find("openmpi", coll, name)
    values = {"P": P, **({"m": m} if coll != "barrier" else {}), **a.fixed, **args}
    expected = schedule_traffic(a.schedule, values, token=coll == "barrier")
    got = openmpi_traffic(openmpi, tmp_path, coll, m, P, {f"{coll}_algorithm": a.id, **forcing})
    assert got == expected


#: MPICH's tags (mpir_tags.h) of the messages of each collective: the ring allreduce's allgather
#: phase is an allgatherv, the recexch barrier an allreduce
MPICH_TAGS = {"bcast": {2}, "reduce": {11}, "allreduce": {14, 8}, "barrier": {1, 14}}


def mpich_traffic(tmp_path, coll, m, P, forcing):
    """{(src, dst): (bytes, messages)} of MPICH's collective with ``forcing`` (CVARs), from the
    libfabric trace of each rank's receives between the markers (as tests/_mpich_helpers.py)."""
    from _mpich_helpers import _COMPLETION, _FI_RECV, TRACED

    from tlop.runtime.measure.launch import find_mpiexec

    script = tmp_path / "traced.py"
    script.write_text(COLL)
    out = tmp_path / f"trace-{coll}-{m}-{P}-{'-'.join(map(str, forcing.values()))}"
    out.mkdir(exist_ok=True)
    env = dict(os.environ, **TRACED, **forcing)
    env.pop("MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", None)
    r = subprocess.run([find_mpiexec(), "-n", str(P), sys.executable, str(script), coll, str(m), str(out)],
                       capture_output=True, env=env, timeout=300)
    logs = {k: (out / f"trace.{k}").read_text(errors="replace") if (out / f"trace.{k}").exists() else ""
            for k in range(P)}
    assert r.returncode == 0 and all("TLOP-CORRECT\n" in log for log in logs.values()), \
        r.stderr.decode(errors="replace")[-1000:] + "".join(log[-1000:] for log in logs.values())
    nbytes, count = Counter(), Counter()
    for dst, log in logs.items():
        assert log.count("TLOP-BEGIN\n") == 1 and log.count("TLOP-END\n") == 1, log[-2000:]
        inside = log.split("TLOP-BEGIN\n", 1)[1].split("TLOP-END\n", 1)[0]
        for line in inside.splitlines():
            hit = _COMPLETION.search(line)
            if hit and int(hit.group(1), 16) & _FI_RECV:
                assert int(hit.group(4), 16) & 0xFF in MPICH_TAGS[coll], line  # a message of this collective
                nbytes[(int(hit.group(3)), dst)] += int(hit.group(2))
                count[(int(hit.group(3)), dst)] += 1
    return {k: (nbytes[k], count[k]) for k in count}


@pytest.fixture(scope="module")
def mpich():
    pytest.importorskip("mpi4py")
    from tlop.decisions.tuning_files import mpich_default_selection

    if mpich_default_selection() is None:
        pytest.skip("MPICH's library (the mpich wheel) is not beside this Python")


#: (collective, CVAR algorithm name, P, m, schedule arguments, CVARs beyond the algorithm's)
MPICH_CASES = [
    ("bcast", "binomial", 3, 4096, {}, {}),
    ("bcast", "scatter_recursive_doubling_allgather", 4, 4096, {}, {}),
    ("bcast", "scatter_recursive_doubling_allgather", 3, 4096, {}, {}),
    ("bcast", "scatter_ring_allgather", 3, 4096, {}, {}),
    ("bcast", "tree", 4, 4096, {"k": 2}, {"MPIR_CVAR_BCAST_TREE_TYPE": "kary", "MPIR_CVAR_BCAST_TREE_KVAL": "2"}),
    ("bcast", "pipelined_tree", 4, 40000, {"k": 2, "seg": 16384},
     {"MPIR_CVAR_BCAST_TREE_TYPE": "kary", "MPIR_CVAR_BCAST_TREE_KVAL": "2",
      "MPIR_CVAR_BCAST_TREE_PIPELINE_CHUNK_SIZE": "16384"}),
    ("reduce", "binomial", 3, 4096, {}, {}),
    ("reduce", "reduce_scatter_gather", 3, 4096, {}, {}),
    ("allreduce", "recursive_doubling", 3, 4096, {}, {}),
    ("allreduce", "reduce_scatter_allgather", 3, 4096, {}, {}),
    ("allreduce", "ring", 3, 4096, {}, {}),
    ("allreduce", "recursive_multiplying", 4, 4096, {"k": 3},
     {"MPIR_CVAR_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL": "3"}),
    ("allreduce", "tree", 4, 40000, {"k": 2, "seg": 16384},
     {"MPIR_CVAR_ALLREDUCE_TREE_TYPE": "knomial_1", "MPIR_CVAR_ALLREDUCE_TREE_KVAL": "2",
      "MPIR_CVAR_ALLREDUCE_TREE_PIPELINE_CHUNK_SIZE": "16384"}),
    ("allreduce", "tree", 4, 4096, {"k": 3, "seg": 0},
     {"MPIR_CVAR_ALLREDUCE_TREE_TYPE": "knomial_1", "MPIR_CVAR_ALLREDUCE_TREE_KVAL": "3"}),
    ("allreduce", "recexch", 4, 4096, {"k": 3}, {"MPIR_CVAR_ALLREDUCE_RECEXCH_KVAL": "3"}),
    ("allreduce", "recexch", 3, 4096, {"k": 2}, {"MPIR_CVAR_ALLREDUCE_RECEXCH_KVAL": "2"}),
    ("allreduce", "k_reduce_scatter_allgather", 4, 4096, {"k": 2}, {"MPIR_CVAR_ALLREDUCE_RECEXCH_KVAL": "2"}),
    ("allreduce", "k_reduce_scatter_allgather", 4, 4095, {"k": 3}, {"MPIR_CVAR_ALLREDUCE_RECEXCH_KVAL": "3"}),
    ("barrier", "recexch", 3, 0, {"k": 2}, {"MPIR_CVAR_BARRIER_RECEXCH_KVAL": "2"}),
    ("barrier", "k_dissemination", 3, 0, {"k": 2}, {"MPIR_CVAR_BARRIER_DISSEM_KVAL": "2"}),
    ("barrier", "k_dissemination", 4, 0, {"k": 3}, {"MPIR_CVAR_BARRIER_DISSEM_KVAL": "3"}),
]


@pytest.mark.mpi
@pytest.mark.parametrize("coll, name, P, m, args, forcing", MPICH_CASES,
                         ids=[f"{c[0]}-{c[1]}-P{c[2]}" for c in MPICH_CASES])
def test_mpich_sends_the_messages_of_the_schedule(mpich, tmp_path, coll, name, P, m, args, forcing):
    from tlop.decisions.catalogue import find

    a = find("mpich", coll, name)
    values = {"P": P, **({"m": m} if coll != "barrier" else {}), **a.fixed, **args}
    expected = schedule_traffic(a.schedule, values, token=coll == "barrier")
    got = mpich_traffic(tmp_path, coll, m, P, {f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM": name, **forcing})
    assert got == expected


# ---------------------------------------------------------------------------------------------
# (3) the published closed forms: pLogP's broadcast rows (paper 004, Table 1), under the rows' own
# assumption that a send's overheads fit in its gap (the random profiles of
# tests/test_schedule_closed_forms.py), priced as the same schedules' dataflow programs


def _plogp_bcast(name):
    return _handle(f"coll/bcast:{name}", "plogp")


try:
    from hypothesis import given, settings, strategies as st
    from test_schedule_closed_forms import plogp_profiles, row, run, same
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    given = None

if given is not None:
    @settings(max_examples=8, deadline=None)
    @given(prof=plogp_profiles(), P=st.integers(2, 12), m=st.sampled_from([1.0, 100.0, 4096.0, 50000.0]),
           k=st.integers(1, 4))
    def test_the_libraries_flat_and_chain_broadcasts_are_the_plogp_rows(prof, P, m, k):
        from tlop.api import load

        PB = load("plogp/bcast")
        assert same(run(_plogp_bcast("ompi_basic_linear"), prof, P=P, m=m), row(PB["flat"], prof, P=P, m=m))
        assert same(run(_plogp_bcast("ompi_pipeline"), prof, P=P, m=m, seg=0), row(PB["chain"], prof, P=P, m=m))
        assert same(run(_plogp_bcast("ompi_chain"), prof, P=P, m=m, seg=0, k=1), row(PB["chain"], prof, P=P, m=m))
        assert same(run(_plogp_bcast("ompi_pipeline"), prof, P=P, m=k * m, seg=m),
                    row(PB["chain_segmented"], prof, P=P, m=k * m, s=m))

    @settings(max_examples=8, deadline=None)
    @given(prof=plogp_profiles(), n=st.integers(1, 4), m=st.sampled_from([1.0, 100.0, 4096.0, 50000.0]))
    def test_both_libraries_binomial_broadcasts_are_the_plogp_row_for_powers_of_two(prof, n, m):
        from tlop.api import load

        PB = load("plogp/bcast")
        P = 2 ** n
        want = row(PB["binomial_closed"], prof, P=P, m=m)
        assert same(run(_plogp_bcast("mpich_binomial"), prof, P=P, m=m), want)
        assert same(run(_plogp_bcast("ompi_binomial"), prof, P=P, m=m, seg=0), want)
        assert same(run(_plogp_bcast("ompi_knomial"), prof, P=P, m=m, seg=0, k=2), want)


def test_both_libraries_binomial_broadcasts_are_the_loggp_row_for_powers_of_two():
    from tlop.api import load

    closed = load("loggp/bcast")["binomial_closed"]
    mpich, ompi = _handle("coll/bcast:mpich_binomial", "loggp"), _handle("coll/bcast:ompi_binomial", "loggp")
    for P in (2, 4, 8, 16):
        for m in (1, 1024, 1 << 20):
            want = float(closed.evaluate("localhost-example", P=P, m=m))
            assert math.isclose(float(mpich.evaluate("localhost-example", mapping="sequential(4)", P=P, m=m)), want,
                                rel_tol=1e-12)
            assert math.isclose(float(ompi.evaluate("localhost-example", mapping="sequential(4)", P=P, m=m, seg=0)),
                                want, rel_tol=1e-12)
