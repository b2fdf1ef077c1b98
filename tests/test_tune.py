"""tlop tune without MPI: the selection against tlop best's pricing, the segment size against an
exhaustive search, and the Open MPI and MPICH files' structure."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tlop
from tlop.cli.main import main
from tlop.cli.tune import _candidates, select
from tlop.runtime.profile import load_profile
from tlop.runtime.tuning_files import Rule, mpich_default_selection, mpich_forcing, mpich_json, mpich_leaf, openmpi_rules


def test_selection_is_the_cheapest_candidate_with_the_best_segment():
    prof = load_profile("localhost-example")
    cands = _candidates(["plogp/bcast"], "bcast", None)
    assert [k for k, _ in cands] == ["plogp/bcast:flat", "plogp/bcast:chain", "plogp/bcast:chain_segmented",
                                     "plogp/bcast:binary", "plogp/bcast:binomial_closed",
                                     "plogp/bcast:binomial_segmented"]
    sel = select(cands, "bcast", prof, [4, 8], [4096.0, 262144.0])
    for (P, m), priced in sel.items():
        for v, key, s in priced:
            h = tlop.load("plogp/bcast")[key.split(":")[1]]
            if s:
                every = h.evaluate(prof, P=float(P), m=m, s=np.arange(1.0, m + 1))
                assert v == pytest.approx(float(every.min()), rel=1e-12)
            else:
                assert v == pytest.approx(h.evaluate(prof, P=float(P), m=m), rel=1e-12)
        assert [x[0] for x in priced] == sorted(x[0] for x in priced)
    assert sel[(4, 262144.0)][0][1:] == ("plogp/bcast:chain_segmented", 16384)


def test_openmpi_rules_file_layout():
    text = openmpi_rules("bcast", [Rule(4, 1, "plogp/bcast:binomial_closed"), Rule(4, 4096, "plogp/bcast:binomial_closed"),
                                   Rule(4, 65536, "plogp/bcast:chain_segmented", 16384),
                                   Rule(8, 1, "plogp/bcast:flat")])
    lines = [l.split("#")[0].split() for l in text.splitlines() if not l.startswith("#")]
    # communicators below 4 ranks: algorithm 0, Open MPI's fixed decision (tlop.decisions.files.openmpi_classic)
    assert lines == [["1"], ["7"], ["3"], ["1"], ["1"], ["0", "0", "0", "0"], ["4"], ["2"], ["0", "6", "0", "0"],
                     ["65536", "2", "1", "16384"], ["8"], ["1"], ["0", "1", "0", "0"]]


def test_mpich_json_layout():
    base = mpich_default_selection()
    if base is None:
        pytest.skip("no mpich wheel beside this Python")
    doc = json.loads(mpich_json("allgather", [Rule(4, 16, "taulop/allgather:rda"),
                                              Rule(4, 65536, "taulop/allgather:ring"),
                                              Rule(8, 16, "taulop/allgather:ring")]))
    intra = base["collective=allgather"]["comm_type=intra"]
    # below 4 ranks MPICH's own subtree; 4..7 ranks the rules for 4 (the nearest smaller tuned size)
    assert doc == {"collective=allgather": {"comm_type=intra": {
        "comm_size<4": intra,
        "comm_size<=7": {"total_msg_size<=262143": {"algorithm=MPIR_Allgather_intra_recursive_doubling": {}},
                         "total_msg_size=any": {"algorithm=MPIR_Allgather_intra_ring": {}}},
        "comm_size=any": {"total_msg_size=any": {"algorithm=MPIR_Allgather_intra_ring": {}}}},
        "comm_type=inter": base["collective=allgather"]["comm_type=inter"]}}


def test_tune_cli_writes_both_files_and_skips_what_a_library_lacks(tmp_path, capsys):
    rules, js = tmp_path / "b.rules", tmp_path / "b.json"
    assert main(["tune", "taulop/bcast", "P=4,6", "m=1KiB,1MiB", "--collective", "bcast", "--only", "linear",
                 "--only", "binomial", "--openmpi", str(rules), "--mpich", str(js)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {rules} (openmpi)" in out and f"wrote {js} (mpich)" in out
    # Open MPI's binomial is binomial_openmpi (not a candidate here): its file holds the linear broadcast;
    # MPICH has both and gets the cheaper, the binomial tree, at every point
    rows = [l.split("#")[0].split() for l in rules.read_text().splitlines() if l[0].isdigit()]
    rows = [r for r in rows if len(r) == 4]
    assert rows[0][1] == "0" and rows[1:] and all(r[1] == "1" for r in rows[1:])  # 0: below 4 ranks, the default
    mine = json.loads(js.read_text())["collective=bcast"]["comm_type=intra"]
    assert "MPIR_Bcast_intra_binomial" in json.dumps(mine) and "MPIR_Bcast_intra_tree" not in json.dumps(mine)


def test_mpich_trees_carry_the_parameters_that_make_them_the_stdlib_algorithm():
    topo = {"topo_overhead=0": {}, "topo_diff_groups=0": {}, "topo_diff_switches=0": {}, "topo_same_switches=0": {}}
    assert mpich_leaf("bcast", Rule(6, 1, "plogp/bcast:flat")) == {"algorithm=MPIR_Bcast_intra_tree": {
        "tree_type=kary": {}, "k=5": {}, "is_non_blocking=1": {}, **topo}}
    assert mpich_leaf("bcast", Rule(6, 1, "plogp/bcast:chain")) == {"algorithm=MPIR_Bcast_intra_tree": {
        "tree_type=kary": {}, "k=1": {}, "is_non_blocking=0": {}, **topo}}
    assert mpich_leaf("bcast", Rule(4, 1, "plogp/bcast:chain_segmented", 8192)) == {
        "algorithm=MPIR_Bcast_intra_pipelined_tree": {"tree_type=kary": {}, "k=1": {}, "is_non_blocking=1": {},
                                                      "chunk_size=8192": {}, "recv_pre_posted=0": {}}}
    assert mpich_leaf("allgather", Rule(4, 1, "taulop/allgather:ring")) == {"algorithm=MPIR_Allgather_intra_ring": {}}
    # the same algorithm with another segment size is another leaf: the rules are not merged
    doc = json.loads(mpich_json("bcast", [Rule(4, 1024, "plogp/bcast:chain_segmented", 512),
                                          Rule(4, 65536, "plogp/bcast:chain_segmented", 16384)]))
    sizes = doc["collective=bcast"]["comm_type=intra"]["comm_size=any"]
    assert list(sizes) == ["avg_msg_size<=65535", "avg_msg_size=any"]
    assert "chunk_size=512" in json.dumps(sizes["avg_msg_size<=65535"])
    assert "chunk_size=16384" in json.dumps(sizes["avg_msg_size=any"])


@pytest.mark.parametrize("argv, message", [
    (["tune", "taulop/scatter", "P=4", "m=1KiB", "--collective", "bcast"], "no algorithm of taulop/scatter is a library bcast"),
    (["tune", "taulop/bcast", "P=4", "--collective", "bcast"], "give the ranges to tune over"),
    (["tune", "taulop/bcast", "P=4", "m=1KiB", "s=4KiB", "--collective", "bcast"], "the segment size is searched"),
])
def test_tune_refusals(capsys, argv, message):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_mpich_forcing_names_the_algorithm_and_its_tree():
    assert mpich_forcing("allgather", "taulop/allgather:ring", 4) == {"MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM": "ring"}
    assert mpich_forcing("bcast", "taulop/bcast:linear", 6) == {
        "MPIR_CVAR_BCAST_INTRA_ALGORITHM": "tree", "MPIR_CVAR_BCAST_TREE_TYPE": "kary",
        "MPIR_CVAR_BCAST_TREE_KVAL": "5", "MPIR_CVAR_BCAST_IS_NON_BLOCKING": "1"}
    # the pipelined tree's segment is per message size: only a selection file sets it
    assert mpich_forcing("bcast", "plogp/bcast:chain_segmented", 4) is None
    assert mpich_forcing("bcast", "taulop/bcast:binomial_openmpi", 4) is None  # not an MPICH algorithm
