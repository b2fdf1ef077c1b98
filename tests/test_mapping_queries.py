"""Mapping queries in the language (issue 25): a node's leader, a rank's local rank, the ranks on
its node and the number of nodes, from the builtin node(p) of a schedule over a mapping
(stdlib/taulop/smp.tlop), and the two-level allreduce that needs no ranks-per-node parameter."""

import json

import pytest

import tlop
from tlop.cli.main import main

#: the same two-level allreduce written the old way, for sequential(Q) only: Q is a parameter
#: (which can contradict --mapping), leaders are the multiples of Q
WITH_Q = """model taulop
import "taulop/platform"
algorithm allreduce_q(P: int >= 1, m: bytes, Q: int >= 1) over map: mapping =
    let M = ceil(P / Q) in
    stage { par p in 0 .. P - 1 where p % Q != 0: send p -> p - p % Q : m } +
    stage { par n in 0 .. M - 1 where min(Q, P - n * Q) > 1:
                seq k in 1 .. min(Q, P - n * Q) - 1: reduce n * Q : m } +
    stage { par n in 1 .. M - 1: send n * Q -> 0 : m } +
    stage { seq n in 1 .. M - 1: reduce 0 : m } +
    stage { par n in 1 .. M - 1: send 0 -> n * Q : m } +
    stage { par p in 0 .. P - 1 where p % Q != 0: send p - p % Q -> p : m }
"""


@pytest.mark.parametrize("P, Q", [(8, 4), (8, 2), (12, 4), (10, 4), (6, 6), (5, 1), (1, 1)])
def test_the_two_level_allreduce_reads_its_structure_from_the_mapping(P, Q):
    smp = tlop.load("taulop/smp")["allreduce_smp"]
    old = tlop.loads(WITH_Q)["allreduce_q"]
    for m in (8.0, 65536.0):
        got = smp.evaluate("metropolis", P=P, m=m, mapping=tlop.sequential(Q))
        assert got == pytest.approx(old.evaluate("metropolis", P=P, m=m, Q=Q, mapping=tlop.sequential(Q)),
                                    rel=1e-12)


def _explain(argv, capsys):
    assert main(["explain", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_round_robin_and_an_uneven_host_file(tmp_path, capsys):
    # round_robin(4) on 8 ranks: nodes {0, 2, 4, 6} and {1, 3, 5, 7}; leaders 0 and 1
    e = _explain(["taulop/smp", "allreduce_smp", "P=8", "m=1KiB", "--mapping", "round_robin(4)"], capsys)
    first = e["stages"][0]["sends"]
    assert sorted((s["src"], s["dst"]) for s in first) == [(2, 0), (3, 1), (4, 0), (5, 1), (6, 0), (7, 1)]
    # a host file of uneven nodes: 3 ranks on a, 5 on b, 1 on c; leaders 0, 3, 8
    hosts = tmp_path / "hosts"
    hosts.write_text("a:3\nb:5\nc:1\n")
    e = _explain(["taulop/smp", "allreduce_smp", "m=1KiB", "--mapping", str(hosts)], capsys)
    stages = e["stages"]
    assert sorted({s["dst"] for s in stages[0]["sends"]}) == [0, 3] and len(stages[0]["sends"]) == 9 - 3
    assert sorted((s["src"], s["dst"]) for s in stages[2]["sends"]) == [(3, 0), (8, 0)]
    # the leaders combine ranks_on_node − 1 contributions each: 2 on a, 4 on b, none on c
    reductions = [c["rank"] for c in stages[1]["computations"]]
    assert sorted(reductions) == [0, 0, 3, 3, 3, 3]


def test_each_query_on_a_layout(tmp_path, capsys):
    """Every query, exposed as the sends of a one-stage schedule (rank p sends query(p) bytes to
    itself), on a layout whose nodes are not contiguous."""
    f = tmp_path / "q.tlop"
    f.write_text('model taulop\nimport "taulop/smp"\n'
                 "algorithm show(P: int >= 1, which: int) over map: mapping =\n"
                 "    stage { par p in 0 .. P - 1: send p -> leader(P, p) : (if which == 0 then local_rank(P, p)\n"
                 "        else if which == 1 then ranks_on_node(P, p) else node_count(P)) * 1B + 1B }\n")
    layout = tmp_path / "l.csv"
    layout.write_text("rank,node\n0,x\n1,y\n2,x\n3,z\n4,y\n5,x\n")  # x: 0, 2, 5; y: 1, 4; z: 3
    sends = {}
    for which in (0, 1, 2):
        e = _explain([str(f), "show", f"which={which}", "--mapping", str(layout)], capsys)
        sends[which] = {s["src"]: (s["dst"], s["size"] - 1) for s in e["stages"][0]["sends"]}
    assert {p: d for p, (d, _) in sends[0].items()} == {0: 0, 1: 1, 2: 0, 3: 3, 4: 1, 5: 0}  # leaders
    assert {p: n for p, (_, n) in sends[0].items()} == {0: 0, 1: 0, 2: 1, 3: 0, 4: 1, 5: 2}  # local rank
    assert {p: n for p, (_, n) in sends[1].items()} == {0: 3, 1: 2, 2: 3, 3: 1, 4: 2, 5: 3}  # ranks on node
    assert {n for _, n in sends[2].values()} == {3}  # nodes
