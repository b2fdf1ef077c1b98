"""The libraries' catalogues for allgather, alltoall, gather, scatter, reduce_scatter and
reduce_scatter_block (compiler/decisions/catalogue/<collective>.py, stdlib/coll/<collective>.tlop).

What is checked: (1) the catalogue lists every algorithm of Open MPI 5.0's coll/tuned enum tables
and of MPICH 4.x's CVAR values, and every entry with a schedule evaluates to a finite positive
cost in τ-Lop (metropolis, ``sequential(4)``, P = 2 … 9, m = 1 B, 1 KiB, 1 MiB) and in LogGP and
pLogP (localhost-example, P = 3 and 8); (2) marked ``mpi``: the schedule's messages — (source,
destination) → (bytes, messages), an ``exchange`` counted as its two messages — equal what the
real library sends with that algorithm forced: Open MPI's pml ``monitoring`` counters
(``_openmpi_helpers``) and MPICH's transport trace (``_mpich_helpers``), every algorithm at P = 4
(P = 2 for two_proc) and at P = 3 where it handles P not a power of two; (3) where paper 004 gives
pLogP closed forms (the flat and binomial scatter, its model of the gather too), the schedules
priced in pLogP against them;
and the schedules that repeat an older stdlib schedule's messages cost what it costs.

Local copies are no messages and are not compared; the message sizes are in bytes of a 1-byte
type (uint8), the libraries' "count" is m.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import tlop
from tlop.decisions.catalogue import catalogue

MINE = ("allgather", "alltoall", "gather", "scatter", "reduce_scatter", "reduce_scatter_block")
ENTRIES = [a for c in MINE for a in catalogue(c)]
SCHEDULED = [a for a in ENTRIES if a.schedule]


def runs_at(a, P: int) -> bool:
    """Whether the library runs ``a`` itself at P (no fallback to another selection, no error)."""
    if a.pow2_only and P & (P - 1):
        return False
    return P == 2 if a.constraint.startswith("P = 2") else True


def arguments(a) -> dict:
    """The library's fixed arguments and the first value of each searched parameter."""
    args = dict(a.fixed)
    args.update({k: v[0] for k, v in a.searched.items()})
    return args


def handle(a, model="taulop"):
    mod, name = a.schedule.split(":")
    return tlop.load(mod, model=model)[name]


# ---------------------------------------------------------------- (1) the catalogue, and evaluation

#: the algorithm tables of the libraries' sources (Open MPI v5.0.x coll_tuned_<coll>_decision.c
#: <coll>_algorithms[]; MPICH v4.3.2 src/mpi/coll/cvars.txt MPIR_CVAR_<COLL>_INTRA_ALGORITHM)
OPENMPI = {
    "allgather": {1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring", 5: "neighbor", 6: "two_proc",
                  7: "sparbit"},
    "alltoall": {1: "linear", 2: "pairwise", 3: "modified_bruck", 4: "linear_sync", 5: "two_proc"},
    "gather": {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
    "scatter": {1: "basic_linear", 2: "binomial", 3: "linear_nb"},
    "reduce_scatter": {1: "non-overlapping", 2: "recursive_halving", 3: "ring", 4: "butterfly"},
    "reduce_scatter_block": {1: "basic_linear", 2: "recursive_doubling", 3: "recursive_halving", 4: "butterfly"},
}
MPICH = {
    "allgather": {"brucks", "k_brucks", "nb", "recursive_doubling", "ring", "recexch_doubling", "recexch_halving"},
    "alltoall": {"brucks", "k_brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered"},
    "gather": {"binomial", "nb"},
    "scatter": {"binomial", "nb"},
    "reduce_scatter": {"nb", "noncommutative", "pairwise", "recursive_doubling", "recursive_halving"},
    "reduce_scatter_block": {"noncommutative", "recursive_doubling", "pairwise", "recursive_halving", "nb"},
}


@pytest.mark.parametrize("coll", MINE)
def test_the_catalogue_lists_every_algorithm_of_both_libraries(coll):
    ompi = {a.id: a.name for a in catalogue(coll, "openmpi")}
    assert ompi == OPENMPI[coll]
    assert {a.name for a in catalogue(coll, "mpich")} == MPICH[coll]
    for a in catalogue(coll):
        assert a.collective == coll and a.source
        if a.library == "mpich":
            assert a.id.startswith(f"MPIR_{coll.capitalize()}_")
        # a schedule, or a status that says why not
        assert (a.schedule is not None) == (a.status == "schedule"), a.key
        assert a.schedule or a.status.startswith(("not expressible: ", "not written: ", "composite: ")), a.key
        assert (a.parts is not None) == a.status.startswith("composite: "), a.key
        if a.schedule:
            assert a.schedule.startswith(f"coll/{coll}:")


@pytest.mark.parametrize("a", SCHEDULED, ids=lambda a: a.key)
def test_every_schedule_evaluates_in_taulop(a):
    h = handle(a)
    ms = np.array([1, 1024, 1 << 20])
    for P in range(2, 10):
        if not runs_at(a, P):
            continue
        v = np.asarray(h.evaluate("metropolis", P=P, m=ms, mapping=tlop.sequential(4), **arguments(a)))
        assert v.shape == (3,) and np.all(np.isfinite(v)) and np.all(v > 0), (P, v)
        assert v[0] <= v[1] <= v[2], (P, v)  # more bytes never cost less on metropolis


@pytest.mark.parametrize("model", ["loggp", "plogp"])
def test_every_schedule_evaluates_in_loggp_and_plogp(model):
    ms = np.array([1, 1024, 1 << 20])
    for a in SCHEDULED:
        h = handle(a, model)
        for P in (2, 3, 8):
            if not runs_at(a, P) or (P == 2 and not a.constraint.startswith("P = 2")):
                continue
            v = np.asarray(h.evaluate("localhost-example", P=P, m=ms, mapping=tlop.sequential(4), **arguments(a)))
            assert np.all(np.isfinite(v)) and np.all(v > 0), (a.key, P, v)


def test_searched_parameters_change_the_schedule():
    """k of k_brucks and seg of Open MPI's linear_sync gather are real parameters of the schedules."""
    ag = tlop.load("coll/allgather")["mpich_k_brucks"]
    costs = {k: float(ag.evaluate("metropolis", P=9, m=1024, k=k, mapping="sequential(4)")) for k in (2, 3, 8)}
    assert len(set(costs.values())) == 3
    assert traffic(tlop.load("coll/allgather")["mpich_k_brucks"], 9, 10, k=3) != \
        traffic(tlop.load("coll/allgather")["mpich_k_brucks"], 9, 10, k=2)
    g = tlop.load("coll/gather")["ompi_linear_sync"]
    assert traffic(g, 3, 10, seg=4) == {(0, 1): (0, 1), (0, 2): (0, 1), (1, 0): (10, 2), (2, 0): (10, 2)}
    assert float(g.evaluate("metropolis", P=4, m=65536, seg=1024, mapping="sequential(4)")) != \
        float(g.evaluate("metropolis", P=4, m=65536, seg=0, mapping="sequential(4)"))


# ---------------------------------------------------------------- the schedules' own messages

def traffic(h, P: int, m: int, **args) -> dict:
    """{(src, dst): (bytes, messages)} of schedule ``h`` (loaded for τ-Lop) at (P, m), as its stages
    list them (the reference interpreter's sends, tlop.analysis.stages); an exchange — τ-Lop's one
    transfer of weight 2 — counts as its two messages, one each way."""
    from tlop.analysis.stages import explain_stages
    from tlop.backends.binding import bind_mapping
    from tlop.runtime.profile import load_profile

    names = {p.name for p in h.ir.params}  # a barrier has no m
    values = {k: v for k, v in {"P": P, "m": m, **args}.items() if k in names}
    env = h.bind({k: str(v) for k, v in values.items()}, strings=True)
    mapping = tlop.sequential(4)
    shown = {p.name: str(values.get(p.name, env[p.name])) for p in h.ir.params}
    e = explain_stages(h.module.program, h.ir, load_profile("metropolis"), mapping,
                       bind_mapping(h.ir, env, mapping), shown, shown)
    nbytes: Counter = Counter()
    count: Counter = Counter()
    for s in e.stages:
        for src, dst, size, w, _ch, _ph in s.sends:
            assert w in (1, 2)  # the catalogue writes no other weight: 2 is an exchange
            for pair in ([(src, dst), (dst, src)] if w == 2 else [(src, dst)]):
                pair = (int(pair[0]), int(pair[1]))
                nbytes[pair] += int(size)
                count[pair] += 1
    return {k: (nbytes[k], count[k]) for k in nbytes}


def test_schedule_messages_by_hand():
    """A few tables worked out from the sources, independent of any MPI run."""
    ag = tlop.load("coll/allgather")
    # Bruck on 3 ranks: 1 block to r − 1, then the remaining 1 block to r − 2
    assert traffic(ag["bruck"], 3, 10) == {(1, 0): (10, 1), (2, 1): (10, 1), (0, 2): (10, 1),
                                            (2, 0): (10, 1), (0, 1): (10, 1), (1, 2): (10, 1)}
    # Sparbit on 6 ranks (the example in coll_base_allgather.c): 1 block to r + 4, 1 to r + 2, 3 to r + 1
    sp = traffic(ag["ompi_sparbit"], 6, 10)
    assert all(sp[(r, (r + 4) % 6)] == (10, 1) and sp[(r, (r + 2) % 6)] == (10, 1) and sp[(r, (r + 1) % 6)] == (30, 3)
               for r in range(6))
    # reduce_scatter_block butterfly on 6 ranks (the example in coll_base_reduce_scatter_block.c)
    bf = traffic(tlop.load("coll/reduce_scatter_block")["ompi_butterfly"], 6, 10)
    assert bf[(0, 1)] == (60, 1) and bf[(1, 3)] == (20, 1) and bf[(3, 1)] == (40, 1)  # fold; round 1
    assert bf[(4, 2)] == (10, 1) and bf[(4, 3)] == (10, 1) and bf[(3, 4)] == (10, 1)  # 4: send 12 to 2, 18 to 3
    assert (5, 0) not in bf and (0, 5) not in bf


# ---------------------------------------------------------------- (2) the real libraries' messages

#: (collective, name, P) pairs run against the real library: each algorithm at P = 4 (P = 2 for
#: two_proc), and at P = 3 those with their own handling of P not a power of two
OMPI_NONPOW2 = {("allgather", "bruck"), ("allgather", "recursive_doubling"), ("allgather", "neighbor"),
                ("allgather", "sparbit"), ("alltoall", "modified_bruck"), ("gather", "binomial"),
                ("scatter", "binomial"), ("reduce_scatter", "recursive_halving"), ("reduce_scatter", "butterfly"),
                ("reduce_scatter_block", "recursive_doubling"), ("reduce_scatter_block", "recursive_halving"),
                ("reduce_scatter_block", "butterfly")}
MPICH_NONPOW2 = {("allgather", "brucks"), ("allgather", "k_brucks"), ("allgather", "recexch_doubling"),
                 ("allgather", "recexch_halving"), ("alltoall", "brucks"),
                 ("alltoall", "k_brucks"), ("alltoall", "pairwise"), ("gather", "binomial"), ("scatter", "binomial"),
                 ("reduce_scatter", "recursive_doubling"), ("reduce_scatter", "recursive_halving"),
                 ("reduce_scatter_block", "recursive_doubling"), ("reduce_scatter_block", "recursive_halving")}


def _cases(library, nonpow2):
    out = []
    for a in SCHEDULED:
        if a.library != library:
            continue
        for P in ((2,) if a.constraint.startswith("P = 2") else (4, 3) if (a.collective, a.name) in nonpow2 else (4,)):
            out.append(pytest.param(a, P, id=f"{a.collective}-{a.name}-P{P}"))
    return out


#: MPICH's CVAR for a radix the JSON selection would pass as "k=…"
MPICH_KVAL = {("allgather", "k_brucks"): "MPIR_CVAR_ALLGATHER_BRUCKS_KVAL",
              ("allgather", "recexch_doubling"): "MPIR_CVAR_ALLGATHER_RECEXCH_KVAL",
              ("allgather", "recexch_halving"): "MPIR_CVAR_ALLGATHER_RECEXCH_KVAL",
              ("alltoall", "k_brucks"): "MPIR_CVAR_ALLTOALL_BRUCKS_KVAL"}


@pytest.mark.mpi
@pytest.mark.parametrize("a, P", _cases("openmpi", OMPI_NONPOW2))
def test_open_mpi_sends_the_schedules_messages(a, P, openmpi, tmp_path):
    pytest.importorskip("mpi4py")
    from _openmpi_helpers import observed_env

    m = 10
    env = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
           f"OMPI_MCA_coll_tuned_{a.collective}_algorithm": str(a.id)}
    real = observed_env(openmpi, tmp_path, a.collective, m, env, P=P, kinds=("I", "E"))
    assert real, "Open MPI's monitoring counted no message"
    assert real == traffic(handle(a), P, m, **arguments(a))


@pytest.mark.mpi
@pytest.mark.parametrize("a, P", _cases("mpich", MPICH_NONPOW2))
def test_mpich_sends_the_schedules_messages(a, P, mpich, tmp_path):
    pytest.importorskip("mpi4py")
    from _mpich_helpers import observed

    m = 10
    forcing = {f"MPIR_CVAR_{a.collective.upper()}_INTRA_ALGORITHM": a.name}
    args = arguments(a)
    if "k" in a.searched:
        args["k"] = 3  # a radix other than the default 2
        forcing[MPICH_KVAL[(a.collective, a.name)]] = "3"
    real = observed(tmp_path, a.collective, m, P=P, forcing=forcing)
    assert real == traffic(handle(a), P, m, **args)


@pytest.fixture(scope="module")
def openmpi():
    from tlop.runtime.diagnostics import TlopError
    from tlop.runtime.measure.openmpi import ensure_openmpi

    try:
        return ensure_openmpi()
    except TlopError as err:
        pytest.skip(str(err))


@pytest.fixture(scope="module")
def mpich():
    from tlop.decisions.tuning_files import mpich_default_selection

    if mpich_default_selection() is None:
        pytest.skip("MPICH's library (the mpich wheel) is not beside this Python")


# ---------------------------------------------------------------- (3) closed forms and older schedules

@pytest.mark.parametrize("coll, linear", [("scatter", ("ompi_basic_linear", "ompi_linear_nb")),
                                          ("gather", ("ompi_basic_linear",))])
def test_scatter_and_gather_in_plogp_against_paper_004(coll, linear):
    """Paper 004 (Barchet-Steffenel & Mounié) Table 2: flat tree (P − 1)·g(m) + L, binomial tree
    Σ_j g(2^j·m) + ⌈log2 P⌉·L, for the scatter and, by its §4, as the model of the gather too.  On
    localhost-example at 1 KiB (where g(m) is at least the overheads, as the closed forms assume)
    the schedules priced in pLogP are exactly these — the binomial ones for P a power of two (for
    other P the library's last subtree is smaller than the closed form's 2^j blocks); at other
    sizes the dataflow adds what the closed forms leave out and is never below them."""
    sc = tlop.load(f"coll/{coll}", model="plogp")
    cf = tlop.load("plogp/scatter")
    for P in (2, 3, 4, 5, 8):
        for m in (1, 1024, 1 << 20):
            flat = float(cf["flat_scatter"].evaluate("localhost-example", P=P, m=m))
            for alg in linear:
                mine = float(sc[alg].evaluate("localhost-example", P=P, m=m, mapping="sequential(4)"))
                assert mine == pytest.approx(flat, rel=1e-12) if m == 1024 else mine >= flat * (1 - 1e-12)
            if P & (P - 1) == 0:
                binom = float(cf["binomial_scatter"].evaluate("localhost-example", P=P, m=m))
                mine = float(sc["binomial"].evaluate("localhost-example", P=P, m=m, mapping="sequential(4)"))
                assert mine == pytest.approx(binom, rel=1e-12) if m == 1024 else mine >= binom * (1 - 1e-12)


@pytest.mark.parametrize("model, profile", [("taulop", "metropolis"), ("plogp", "localhost-example")])
def test_schedules_that_repeat_older_stdlib_schedules_cost_the_same(model, profile):
    """The same messages in the same stages cost the same: the ring allgather, the pairwise
    all-to-all (Open MPI's) and the binomial gather and scatter (root 0) of stdlib/<model>."""
    pairs = [("coll/allgather", "ring", "allgather", "ring"), ("coll/alltoall", "ompi_pairwise", "alltoall", "pairwise"),
             ("coll/gather", "binomial", "gather", "binomial"), ("coll/scatter", "binomial", "scatter", "binomial")]
    for mod, alg, old_mod, old_alg in pairs:
        mine = tlop.load(mod, model=model)[alg]
        old = tlop.load(f"{model}/{old_mod}")[old_alg]
        for P in (2, 3, 5, 8):
            for m in (1, 65536):
                a = float(mine.evaluate(profile, P=P, m=m, mapping="sequential(4)"))
                b = float(old.evaluate(profile, P=P, m=m, mapping="sequential(4)"))
                assert a == pytest.approx(b, rel=1e-12), (mod, alg, P, m)
        assert math.isfinite(a)
