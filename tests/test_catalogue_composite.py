"""The catalogue's composites (tlop.decisions.composite): algorithms that call the library's own
collectives — Open MPI's allreduce nonoverlapping, allgather linear, reduce_scatter
non-overlapping and reduce_scatter_block basic_linear, MPICH's smp bcast/reduce/allreduce/barrier
over the node sub-communicators.  Each is priced exactly as the sum of what the library runs for
its calls (checked here call by call), follows a written Open MPI rules file where it has rules for
the called collective, and (marked mpi) sends on a real library the messages of those calls."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import tlop
from tlop.backends.binding import as_mapping
from tlop.decisions.catalogue import COLLECTIVES, catalogue, find
from tlop.decisions.composite import decision, openmpi_rule_decision, sub_communicators
from tlop.decisions.rules import Rule
from tlop.decisions.selection import Pricer
from test_catalogue_a import COLL  # the one rank script of the real-MPI message tests

PROFILE = "metropolis"
OMPI = [("allreduce", "nonoverlapping"), ("allgather", "linear"), ("reduce_scatter", "non-overlapping"),
        ("reduce_scatter_block", "basic_linear")]
MPICH = [("bcast", "smp"), ("reduce", "smp"), ("allreduce", "smp"), ("barrier", "smp")]


def _pricer(mapping="sequential(8)"):
    return Pricer(tlop.load_profile(PROFILE), as_mapping(mapping), "taulop")


def _inner_m(part, P, m):
    return {"m": m, "Pm": P * m}.get(part.m, part.m)


def test_the_composites_are_the_entries_that_were_not_expressible_but_are_priceable():
    composites = {(a.library, a.collective, a.name) for a in catalogue() if a.parts is not None}
    # MPICH's nb: one call of the nonblocking collective (tests/test_catalogue_nb.py)
    assert composites == {("openmpi", c, n) for c, n in OMPI} | {("mpich", c, n) for c, n in MPICH} | \
        {("mpich", c, "nb") for c in COLLECTIVES}
    for a in catalogue():
        if a.parts is not None:
            assert a.schedule is None and a.priceable and a.status.startswith("composite: "), a.key
            assert a.candidate == (a.library == "openmpi"), a.key  # MPICH's smp: a default, never a file's choice
    # nothing of the MPI libraries stays out (MPICH's nb entries are composites too)
    assert {a.key for a in catalogue() if not a.priceable} == set()


@pytest.mark.parametrize("collective, name", OMPI)
def test_an_open_mpi_composite_costs_exactly_the_fixed_decisions_of_its_calls(collective, name):
    from tlop.decisions.openmpi_defaults import decide

    pricer = _pricer()
    a = find("openmpi", collective, name)
    ms = [1, 1024, 65536, 1 << 20]
    for P in (2, 5, 8, 32):
        got = pricer.price(a, P, np.asarray(ms, dtype=float), {})
        for j, m in enumerate(ms):
            want = 0.0
            for part in a.parts(P, m):
                mi = _inner_m(part, P, m)
                if part.algorithm is not None:
                    inner, params = find("openmpi", part.collective, part.algorithm), {}
                else:
                    d = decide(part.collective, P, mi)
                    inner, params = d.algorithm(), d.params
                assert inner.schedule is not None
                want += float(pricer.price(inner, P, np.asarray([mi], dtype=float), params)[0])
            assert math.isfinite(got[j]) and got[j] == pytest.approx(want, rel=1e-12), (P, m)


def test_the_calls_are_the_sources():
    """What each composite calls, from the library's source (cited in the catalogue)."""
    def calls(lib, coll, name, P=8, m=4096):
        return [(p.collective, _inner_m(p, P, m), p.over, p.algorithm) for p in find(lib, coll, name).parts(P, m)]

    assert calls("openmpi", "allreduce", "nonoverlapping") == [("reduce", 4096, "comm", None),
                                                              ("bcast", 4096, "comm", None)]
    assert calls("openmpi", "allgather", "linear") == [("gather", 4096, "comm", None), ("bcast", 8 * 4096, "comm", None)]
    assert calls("openmpi", "reduce_scatter", "non-overlapping") == [("reduce", 8 * 4096, "comm", None),
                                                                   ("scatter", 4096, "comm", "basic_linear")]
    assert calls("openmpi", "reduce_scatter_block", "basic_linear") == [("reduce", 8 * 4096, "comm", None),
                                                                      ("scatter", 4096, "comm", None)]
    assert find("openmpi", "reduce_scatter_block", "basic_linear").parts(4, 2 ** 30) is None  # count > INT_MAX
    assert calls("mpich", "barrier", "smp") == [("barrier", 0, "node", None), ("barrier", 0, "node_roots", None),
                                               ("bcast", 1, "node", None)]
    assert calls("mpich", "allreduce", "smp") == [("reduce", 4096, "node", None),
                                                 ("allreduce", 4096, "node_roots", None), ("bcast", 4096, "node", None)]
    assert calls("mpich", "reduce", "smp") == [("reduce", 4096, "other_nodes", None),
                                              ("reduce", 4096, "node_roots", None), ("reduce", 4096, "root_node", None)]
    # MPIR_Bcast_intra_smp: nothing for 0 bytes; leaders then nodes for short (or P < 8) and medium
    # power-of-two; the whole communicator's scatter_ring_allgather otherwise
    assert calls("mpich", "bcast", "smp", m=0) == []
    assert calls("mpich", "bcast", "smp", P=12, m=12287) == [("bcast", 12287, "node_roots", None),
                                                             ("bcast", 12287, "node", None)]
    assert calls("mpich", "bcast", "smp", P=16, m=524287)[0][2] == "node_roots"
    assert calls("mpich", "bcast", "smp", P=12, m=12288) == [("bcast", 12288, "comm", "scatter_ring_allgather")]
    assert calls("mpich", "bcast", "smp", P=16, m=524288) == [("bcast", 524288, "comm", "scatter_ring_allgather")]
    assert calls("mpich", "bcast", "smp", P=7, m=1 << 20)[0][2] == "node_roots"


def test_the_sub_communicators_of_a_mapping():
    seq3 = as_mapping("sequential(3)")  # P = 8: nodes of 3, 3, 2 ranks
    assert sub_communicators(seq3, 8, "node") == [(2, "sequential(2)"), (3, "sequential(3)")]
    assert sub_communicators(seq3, 8, "root_node") == [(3, "sequential(3)")]
    assert sub_communicators(seq3, 8, "other_nodes") == [(2, "sequential(2)"), (3, "sequential(3)")]
    assert sub_communicators(seq3, 8, "node_roots") == [(3, "sequential(1)")]
    assert sub_communicators(seq3, 3, "node_roots") == []          # one node: a 1-rank node_roots_comm
    assert sub_communicators(as_mapping("sequential(1)"), 4, "node") == []  # no node_comm at all
    assert sub_communicators(seq3, 8, "comm") == [(8, None)]


def test_mpich_barrier_smp_costs_its_three_calls_each_the_default_tree_for_its_sub_communicator():
    from tlop.decisions.mpich_defaults import decide

    pricer = _pricer("sequential(4)")
    a = find("mpich", "barrier", "smp")
    P = 8  # two nodes of four
    node = decide("barrier", 4, 0, parent_comm=False, nodes=1)
    roots = decide("barrier", 2, 0, parent_comm=False, nodes=2)
    release = decide("bcast", 4, 1, parent_comm=False, nodes=1)
    assert (node.name, node.params, roots.name, release.name) == ("k_dissemination", {"k": 2}, "k_dissemination",
                                                                 "binomial")
    one = np.asarray([0.0])
    want = (float(pricer.sub("sequential(4)").price(node.algorithm(), 4, one, node.params)[0])
            + float(pricer.sub("sequential(1)").price(roots.algorithm(), 2, one, roots.params)[0])
            + float(pricer.sub("sequential(4)").price(release.algorithm(), 4, np.asarray([1.0]), {})[0]))
    assert float(pricer.price(a, P, one, {})[0]) == pytest.approx(want, rel=1e-12)
    # every rank on its own node: MPICH builds no sub-communicators, runs no smp
    assert math.isinf(_pricer("sequential(1)").price(a, 4, one, {})[0])


def test_uneven_nodes_cost_their_slowest_node():
    pricer = _pricer("sequential(3)")
    a = find("mpich", "allreduce", "smp")
    m = np.asarray([4096.0])
    parts = {}
    for part in a.parts(8, 4096):
        worst = 0.0
        for n, sub in sub_communicators(pricer.mapping, 8, part.over):
            inner, params = decision(pricer, "mpich", part.collective, n, 4096, part.over)
            worst = max(worst, float(pricer.sub(sub).price(inner, n, m, params)[0]))
        parts[part.over + part.collective] = worst
    assert float(pricer.price(a, 8, m, {})[0]) == pytest.approx(sum(parts.values()), rel=1e-12)
    assert all(v > 0 for v in parts.values())


def test_mpich_builds_a_parent_communicator_only_when_some_node_holds_two_ranks():
    from tlop.decisions.defaults import default_decision
    from tlop.decisions.mpich_defaults import decide

    assert decide("barrier", 8, 0, mapping=as_mapping("sequential(8)")).name == "smp"
    assert decide("barrier", 8, 0, mapping=as_mapping("sequential(4)")).name == "smp"
    assert decide("barrier", 4, 0, mapping=as_mapping("sequential(1)")).name == "k_dissemination"
    assert decide("barrier", 4, 0, mapping=as_mapping("round_robin(nodes=4)")).name == "k_dissemination"
    assert decide("barrier", 4, 0).name == "smp"  # no mapping: one node
    assert default_decision("mpich", "barrier", 4, 0, mapping=as_mapping("sequential(1)"))[0] == \
        "MPIR_Barrier_intra_k_dissemination"


def test_the_open_mpi_file_lookup_is_coll_tuned_s():
    binomial, linear = find("openmpi", "reduce", "binomial"), find("openmpi", "reduce", "linear")
    rules = [Rule("reduce", 8, 1024, binomial, {"seg": 0}), Rule("reduce", 8, 65536, linear, {}),
             Rule("reduce", 32, 1024, None, {})]
    assert openmpi_rule_decision(rules, "reduce", 4, 4096) is None            # below the smallest P: fixed
    assert openmpi_rule_decision(rules, "reduce", 8, 1)[0] == binomial        # the first rule is written from 0
    assert openmpi_rule_decision(rules, "reduce", 16, 65535)[0] == binomial   # P = 16 reads P = 8's rules
    assert openmpi_rule_decision(rules, "reduce", 16, 65536)[0] == linear
    assert openmpi_rule_decision(rules, "reduce", 64, 1 << 20) is None        # algorithm 0: fixed
    # gather's rules compare m·P: P = 16 with m = 4096 is 65536 B against P = 8's thresholds
    gl, gb = find("openmpi", "gather", "basic_linear"), find("openmpi", "gather", "binomial")
    g = [Rule("gather", 8, 1, gl, {}), Rule("gather", 8, 8192, gb, {})]    # thresholds 0 and 65536 B
    assert openmpi_rule_decision(g, "gather", 16, 4095)[0] == gl
    assert openmpi_rule_decision(g, "gather", 16, 4096)[0] == gb


def test_a_composite_follows_the_open_mpi_rules_of_the_collectives_it_calls():
    from tlop.decisions.openmpi_defaults import decide

    pricer = _pricer()
    a = find("openmpi", "allreduce", "nonoverlapping")
    linear = find("openmpi", "reduce", "linear")
    pricer.openmpi_rules["reduce"] = [Rule("reduce", 8, 0, linear, {})]
    m = np.asarray([1024.0, 1 << 20])
    for P in (8, 16):
        bcast = [decide("bcast", P, int(x)) for x in m]
        want = (pricer.price(linear, P, m, {})
                + np.asarray([pricer.price(d.algorithm(), P, np.asarray([x]), d.params)[0] for d, x in zip(bcast, m)]))
        assert pricer.price(a, P, m, {}) == pytest.approx(want, rel=1e-12)
    # below the file's smallest P the fixed reduce runs
    d = decide("reduce", 4, 1024)
    fixed = (pricer.price(d.algorithm(), 4, m[:1], d.params)[0]
             + pricer.price(decide("bcast", 4, 1024).algorithm(), 4, m[:1], decide("bcast", 4, 1024).params)[0])
    assert pricer.price(a, 4, m[:1], {})[0] == pytest.approx(fixed, rel=1e-12)


def test_tune_prices_a_composite_with_the_rules_it_writes_for_the_called_collectives():
    from tlop.cli.tune import tune
    from tlop.decisions.write import rules_of

    mapping = as_mapping("sequential(4)")
    Ps, ms = [4, 8], [1024.0, 262144.0]
    result = tune(["reduce_scatter_block", "reduce", "scatter"], ["openmpi"], tlop.load_profile(PROFILE), mapping,
                  "taulop", Ps, ms)
    assert list(result) == [("openmpi", "reduce_scatter_block"), ("openmpi", "reduce"), ("openmpi", "scatter")]
    rules = {c: rules_of({("openmpi", c): result[("openmpi", c)]}, "openmpi") for c in ("reduce", "scatter")}
    pricer = _pricer("sequential(4)")
    a = find("openmpi", "reduce_scatter_block", "basic_linear")
    seen = 0
    for c in result[("openmpi", "reduce_scatter_block")]:
        priced = [p for p in c.ranking if p.algorithm == a]
        if not priced:
            continue
        want = 0.0
        for part in a.parts(c.P, c.m):
            mi = _inner_m(part, c.P, c.m)
            hit = openmpi_rule_decision(rules[part.collective], part.collective, c.P, mi)
            if hit is None:
                from tlop.decisions.openmpi_defaults import decide

                d = decide(part.collective, c.P, mi)
                hit = (d.algorithm(), d.params)
            want += float(pricer.price(hit[0], c.P, np.asarray([float(mi)]), hit[1])[0])
        assert priced[0].cost == pytest.approx(want, rel=1e-12)
        seen += 1
    assert seen == len(Ps) * len(ms)


def test_mpich_smp_is_priced_as_a_default_but_never_written():
    from tlop.cli.tune import tune

    result = tune(["barrier"], ["mpich"], tlop.load_profile(PROFILE), as_mapping("sequential(4)"), "taulop",
                  [2, 8], [1.0])
    for c in result[("mpich", "barrier")]:
        assert c.default.algorithm.name == "smp" and math.isfinite(c.default.cost)
        assert all(p.algorithm.name != "smp" for p in c.ranking)
        assert "not priced" not in c.note


def test_the_audit_prices_mpich_s_default_barrier():
    from tlop.cli.audit import audit_tables

    tables = audit_tables(["barrier"], ["mpich"], tlop.load_profile(PROFILE), as_mapping("sequential(8)"), "taulop",
                          [2, 8, 16], [1])
    cells = tables[("mpich", "barrier")]
    assert all(c.default.name == "smp" and c.default_cost is not None and c.ratio >= 1 - 1e-12 for c in cells)


# ---------------------------------------------------------------------------------------------
# real libraries (P <= 4, one node): the composite's calls send what the library sends

def _part_pairs(lib, part, P, m, Q):
    """{(src, dst): (bytes, messages)} of one call of a composite at P ranks placed
    ``sequential(Q)`` (Q ranks per node), in the communicator's ranks."""
    from _traffic import schedule_pairs

    pricer = _pricer(f"sequential({Q})")
    mi = _inner_m(part, P, m)
    sizes = [min(Q, P - first) for first in range(0, P, Q)]
    if part.over == "comm":
        groups = [list(range(P))]
    elif part.over == "node_roots":
        groups = [list(range(0, P, Q))] if len(sizes) > 1 else []
    else:
        nodes = {"node": range(len(sizes)), "root_node": [0], "other_nodes": range(1, len(sizes))}[part.over]
        groups = [list(range(i * Q, i * Q + sizes[i])) for i in nodes if sizes[i] > 1]
    nbytes, count = Counter(), Counter()
    for ranks in groups:
        n = len(ranks)
        if part.algorithm is not None:
            inner, params = find(lib, part.collective, part.algorithm), {}
        else:
            inner, params = decision(pricer, lib, part.collective, n, mi, part.over)
        values = {**inner.fixed, **{k: v for k, v in params.items() if isinstance(v, int)}}
        sub = "sequential(1)" if part.over == "node_roots" else f"sequential({n})"
        for (a, b), (nb, c) in schedule_pairs(inner.schedule, n, mi, values, mapping=sub).items():
            nbytes[(ranks[a], ranks[b])] += 0 if part.collective == "barrier" else nb  # barrier tokens: 0 bytes
            count[(ranks[a], ranks[b])] += c
    return nbytes, count


def composite_pairs(lib, coll, name, P, m, Q=None):
    """{(src, dst): (bytes, messages)} of a composite at P ranks, Q per node (default: one node)."""
    nbytes, count = Counter(), Counter()
    for part in find(lib, coll, name).parts(P, m):
        b, c = _part_pairs(lib, part, P, m, Q or P)
        nbytes.update(b)
        count.update(c)
    return {k: (nbytes[k], count[k]) for k in count}


@pytest.fixture(scope="module")
def openmpi():
    pytest.importorskip("mpi4py")
    from tlop.runtime.diagnostics import TlopError
    from tlop.runtime.measure.openmpi import ensure_openmpi

    try:
        return ensure_openmpi()
    except TlopError as err:
        pytest.skip(str(err))


@pytest.mark.mpi
@pytest.mark.parametrize("coll, name, P, m", [("allreduce", "nonoverlapping", 4, 4096),
                                             ("allgather", "linear", 4, 1024),
                                             ("reduce_scatter_block", "basic_linear", 4, 1024),
                                             ("reduce_scatter", "non-overlapping", 3, 1024)])
def test_open_mpi_sends_the_messages_of_the_composite(openmpi, tmp_path, coll, name, P, m):
    """Forced (coll_tuned_<coll>_algorithm), with dynamic rules on and no file: the calls run
    coll/tuned's fixed decisions (and coll/basic's scatterv), as the composite prices them."""
    from tlop.runtime.measure.openmpi import openmpi_env, openmpi_mpiexec

    a = find("openmpi", coll, name)
    script = tmp_path / "coll.py"
    script.write_text(COLL)
    env = dict(os.environ, **openmpi_env(openmpi), OMPI_MCA_coll_tuned_priority="100",
               OMPI_MCA_coll_tuned_use_dynamic_rules="1", OMPI_MCA_pml_monitoring_enable="2",
               OMPI_MCA_pml_monitoring_enable_output="1", **{f"OMPI_MCA_coll_tuned_{coll}_algorithm": str(a.id)})
    r = subprocess.run([openmpi_mpiexec(openmpi), "-n", str(P), sys.executable, str(script), coll, str(m)],
                       capture_output=True, env=env, timeout=180)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0, out[-2000:] + r.stderr.decode(errors="replace")[-2000:]
    got = {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "I" and len(f) >= 5:
            got[(int(f[1]), int(f[2]))] = (int(f[3].split()[0]), int(f[4].split()[0]))
    assert got == composite_pairs("openmpi", coll, name, P, m)


@pytest.mark.mpi
@pytest.mark.parametrize("coll, name, P, m", [("barrier", "smp", 4, 0), ("allreduce", "smp", 4, 4096),
                                             ("reduce", "smp", 4, 4096), ("bcast", "smp", 4, 4096)])
def test_mpich_sends_the_messages_of_the_composite_between_nodes(tmp_path, monkeypatch, coll, name, P, m):
    """Forced (MPIR_CVAR_<COLL>_INTRA_ALGORITHM=smp) on two 'nodes' of two ranks (MPICH's own
    debugging split of one machine: MPIR_CVAR_NUM_CLIQUES=2 by block, src/util/mpir_nodemap.c).
    The trace sees the network path only (messages within a clique go through shared memory), so
    the messages between the nodes — node_roots_comm's call, each what MPICH's selection picks
    for a 2-rank communicator — are compared; a fallback to a flat algorithm would send others."""
    pytest.importorskip("mpi4py")
    import test_catalogue_a as A

    from tlop.decisions.tuning_files import mpich_default_selection

    if mpich_default_selection() is None:
        pytest.skip("MPICH's library (the mpich wheel) is not beside this Python")
    monkeypatch.setitem(A.MPICH_TAGS, coll, {1, 2, 11, 14})  # barrier, bcast, reduce, allreduce (mpir_tags.h)
    import _mpich_helpers

    monkeypatch.setattr(_mpich_helpers, "TRACED", {k: v for k, v in _mpich_helpers.TRACED.items()
                                                   if k != "MPIR_CVAR_NOLOCAL"})
    got = A.mpich_traffic(tmp_path, coll, m, P, {f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM": name,
                                                 "MPIR_CVAR_NUM_CLIQUES": "2", "MPIR_CVAR_CLIQUES_BY_BLOCK": "1"})
    # between nodes only the leaders (ranks 0 and 2) speak, on node_roots_comm; the trace names the
    # sender by its rank in the communicator of the message (the immediate data MPICH sends), so
    # leader 2 appears as node_roots_comm's rank 1 — and a flat fallback would show other pairs
    expected = {(k[0] // 2, k[1]): v for k, v in composite_pairs("mpich", coll, name, P, m, Q=2).items()
                if k[0] // 2 != k[1] // 2}
    assert expected and got == expected
