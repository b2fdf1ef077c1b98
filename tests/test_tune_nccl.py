"""NCCL's algorithms (stdlib/nccl, catalogue/nccl.py) and ``tlop tune --library nccl``: the model
against NCCL's own numbers by hand (src/graph/tuning.cc constants), the table's winners against
an exhaustive pricing and against the written CSV, NVIDIA's example tuner plugin (compiled, no
GPU needed) reading the CSV and answering the table's algorithm and protocol (PAT too, with one
GPU per node), the printed table as a golden file, the catalogue listing NCCL, and the refusals.
No GPU is used: NCCL itself is never run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import tlop
from tlop.cli.main import main
from tlop.cli.tune import tune
from tlop.decisions.catalogue import catalogue
from tlop.decisions.catalogue.nccl import CHANNELS, PROTOCOLS
from tlop.decisions.library_size import compared_size
from tlop.runtime.profile import load_profile

PROFILE = "lassen"
MAPPING = "sequential(4)"
NCCL_COLLECTIVES = ("bcast", "reduce", "allreduce", "allgather", "reduce_scatter")
M = tlop.load("nccl/collectives")
US = 1e-6


def _beta(path):
    return load_profile(PROFILE).scalar("beta_rend", path)


# --- the model against NCCL's numbers, by hand ------------------------------------------------

def test_ring_allreduce_is_nccls_latency_plus_the_profiles_bandwidth():
    """P = 8 on sequential(4): N = 2 nodes, 2(P − 1) = 14 steps of which 2(N − 1) = 2 cross nodes
    (tuning.cc l. 404-413).  Simple: baseLat 8.4 + 12 · max(NVLink 3.4, 3 · net overhead 1.0)
    + 2 · NET 14.0 µs; bytes m · 14/8 at the off-node β.  LL: 6.6 + 12 · max(0.6, 1.0) + 2 · 2.7,
    bytes at half the bandwidth (no slower than llMaxBw = 39 GB/s on two nodes)."""
    m = 1 << 20
    simple = (8.4 + 12 * 3.4 + 2 * 14.0) * US + m * 14 / 8 * _beta("gpu_off_node")
    ll = (6.6 + 12 * 1.0 + 2 * 2.7) * US + m * 14 / 8 * max(_beta("gpu_off_node") / 0.5, 1e-9 / 39)
    ll128 = (14.0 + 12 * 1.9 + 2 * 4.0) * US + m * 14 / 8 * _beta("gpu_off_node") / 0.92
    for proto, want in ((2, simple), (0, ll), (1, ll128)):
        got = M["ring_allreduce"].evaluate(PROFILE, P=8, m=m, proto=proto, mapping=MAPPING)
        assert float(got) == pytest.approx(want, rel=1e-12), proto


def test_tree_allreduce_and_one_node():
    """One node (P = 4 on sequential(4)): NVLink latencies, gpu_on_socket's β.  Tree Simple:
    8.4 + 2 · (3 · 4.0 + 0 · NET) µs and 2m at β / 0.92, over treeCorrectionFactor[Simple][log2(m/64)
    = 10] = 0.6; ring LL128 on one node: 14.0 + 6 · 1.9 µs."""
    m = 65536
    tree = (8.4 + 2 * 3 * 4.0) * US + 2 * m * _beta("gpu_on_socket") / 0.92 / 0.6
    assert float(M["tree_allreduce"].evaluate(PROFILE, P=4, m=m, proto=2, mapping=MAPPING)) == \
        pytest.approx(tree, rel=1e-12)
    ring = (14.0 + 6 * 1.9) * US + m * 6 / 4 * _beta("gpu_on_socket") / 0.92
    assert float(M["ring_allreduce"].evaluate(PROFILE, P=4, m=m, proto=1, mapping=MAPPING)) == \
        pytest.approx(ring, rel=1e-12)
    # 16 GPUs on 4 nodes, tree LL: 6.8 + 2 · (3 · 0.6 + log2(4) · 5.0) µs; 2m at β/(0.92/3.8), capped
    # by llMaxBw = 20.4 GB/s beyond two nodes, over treeCorrectionFactor[LL][10] = 0.6
    t = (6.8 + 2 * (3 * 0.6 + 2 * 5.0)) * US + 2 * m * max(_beta("gpu_off_node") * 3.8 / 0.92, 1e-9 / 20.4) / 0.6
    assert float(M["tree_allreduce"].evaluate(PROFILE, P=16, m=m, proto=0, mapping=MAPPING)) == \
        pytest.approx(t, rel=1e-12)


def test_pat_is_nccls_formula_and_runs_only_with_one_gpu_per_node():
    """PAT allgather on 8 GPUs, one per node (tuning.cc l. 337, l. 429-434, l. 653): 8.0 + log2i(8)
    · 14/3.5 + 8 · 2.8 µs, and NCCL's nBytes = 8m at the off-node β over 0.75; the reduce-scatter
    alike.  Simple only (the schedule's ``where``), and on two GPUs per node the catalogue's
    pricer refuses it (ncclPatEnable)."""
    from tlop.backends.binding import as_mapping
    from tlop.decisions.catalogue import find
    from tlop.decisions.selection import Pricer

    m = 4096
    want = (8.0 + 3 * 14.0 / 3.5 + 8 * 2.8) * US + 8 * m * _beta("gpu_off_node") / 0.75
    for name in ("pat_allgather", "pat_reduce_scatter"):
        assert float(M[name].evaluate(PROFILE, P=8, m=m, mapping="sequential(1)")) == pytest.approx(want, rel=1e-12)
    with pytest.raises(Exception, match="where proto == 2"):
        M["pat_allgather"].evaluate(PROFILE, P=8, m=m, proto=1, mapping="sequential(1)")
    pat = find("nccl", "allgather", "pat")
    assert pat.one_per_node and pat.searched == {"proto": (2,)}
    ms = np.array([float(m)])
    assert Pricer(load_profile(PROFILE), as_mapping("sequential(1)"), "taulop").price(pat, 8, ms, {"proto": 2})[0] == \
        pytest.approx(want, rel=1e-12)
    assert np.isinf(Pricer(load_profile(PROFILE), as_mapping("sequential(2)"), "taulop").price(pat, 8, ms, {"proto": 2})[0])


def test_nccl_orders_rings_by_topology_so_only_the_node_count_matters():
    """round_robin(4) and sequential(4) put 16 ranks on the same 4 nodes: NCCL's ring visits each
    node's GPUs in a row either way, so the cost is the same; on one node it differs."""
    for name in ("ring_allreduce", "tree_allreduce", "ring_allgather", "ring_bcast"):
        a = M[name].evaluate(PROFILE, P=16, m=4096, proto=2, mapping="sequential(4)")
        b = M[name].evaluate(PROFILE, P=16, m=4096, proto=2, mapping="round_robin(4)")
        c = M[name].evaluate(PROFILE, P=16, m=4096, proto=2, mapping="sequential(16)")
        assert float(a) == float(b) and float(c) != float(a), name


def test_the_compiled_model_agrees_with_the_interpreter():
    from tlop.backends.binding import as_mapping

    ms = np.array([1.0, 1000.0, 65536.0, 1 << 26])
    for name in ("ring_allreduce", "tree_allreduce", "ring_allgather", "ring_reduce_scatter", "ring_bcast",
                 "ring_reduce"):
        for P in (2, 6, 16):
            ev = M[name].compile(PROFILE, mapping=as_mapping(MAPPING))
            for proto in (0, 1, 2):
                got = ev(P=np.full(4, float(P)), m=ms, proto=np.full(4, float(proto)))
                want = [float(M[name].evaluate(PROFILE, P=P, m=m, proto=proto, mapping=MAPPING)) for m in ms]
                assert np.allclose(got, want, rtol=1e-12, atol=0), (name, P, proto)
    for name in ("pat_allgather", "pat_reduce_scatter"):  # Simple only, one GPU per node
        ev = M[name].compile(PROFILE, mapping=as_mapping("sequential(1)"))
        for P in (2, 6, 16):
            got = ev(P=np.full(4, float(P)), m=ms, proto=np.full(4, 2.0))
            want = [float(M[name].evaluate(PROFILE, P=P, m=m, mapping="sequential(1)")) for m in ms]
            assert np.allclose(got, want, rtol=1e-12, atol=0), (name, P)


# --- tune: the table, its winners and the CSV -------------------------------------------------

def _tuned(collectives, Ps, ms, mapping=MAPPING):
    from tlop.backends.binding import as_mapping

    return tune(list(collectives), ["nccl"], load_profile(PROFILE), as_mapping(mapping), "taulop", Ps, ms)


@pytest.mark.parametrize("mapping", [MAPPING, "sequential(1)"])
def test_each_cell_is_the_cheapest_algorithm_and_protocol(mapping):
    """Every algorithm × protocol NCCL considers, priced one by one; PAT (Simple only) only where
    each GPU has a node of its own (``sequential(1)``: ncclPatEnable)."""
    Ps, ms = [4, 8, 32], [1024.0, 262144.0, 16 * 2.0 ** 20]
    result = _tuned(NCCL_COLLECTIVES, Ps, ms, mapping)
    assert set(result) == {("nccl", c) for c in NCCL_COLLECTIVES}
    for (_, coll), cells in result.items():
        for c in cells:
            every = {}
            for a in catalogue(coll, "nccl"):
                if a.schedule is None or (a.one_per_node and mapping != "sequential(1)"):
                    continue
                name = a.schedule.split(":")[1]
                for proto in a.searched["proto"]:
                    every[(a.name, proto)] = float(M[name].evaluate(PROFILE, P=c.P, m=c.m, proto=proto,
                                                                    mapping=mapping))
            best = min(every, key=every.get)
            assert c.chosen is c.best and c.default is None
            assert (c.chosen.algorithm.name, c.chosen.params["proto"]) == best, (coll, c.P, c.m)
            assert c.chosen.cost == pytest.approx(every[best], rel=1e-12)
            # the runner-up is the second-cheapest algorithm × protocol (ring/LL128 after ring/LL)
            second = sorted(every, key=every.get)[1]
            assert (c.runner_up.algorithm.name, c.runner_up.params["proto"]) == second, (coll, c.P, c.m)
            assert c.margin == pytest.approx(every[second] / every[best], rel=1e-12)
    # the model picks different things across the grid (the test would not notice a constant answer)
    chosen = {(c.chosen.algorithm.name, c.chosen.params["proto"]) for c in result[("nccl", "allreduce")]}
    assert len(chosen) >= 3 and {a for a, _ in chosen} == {"ring", "tree"}
    for coll in ("allgather", "reduce_scatter"):  # PAT wins somewhere exactly where it may run
        names = {c.chosen.algorithm.name for c in result[("nccl", coll)]}
        assert ("pat" in names) == (mapping == "sequential(1)") and "ring" in names, (coll, names)


def _csv_rows(text):
    return [line.split(",") for line in text.splitlines() if line and not line.startswith("#")]


def _lookup(rows, coll_type, P, nbytes):
    """The first row the example plugin matches (pluginGetCollInfo: collective, size range, nRanks)."""
    for r in rows:
        if r[0] == coll_type and int(r[1]) <= nbytes <= int(r[2]) and int(r[7]) in (-1, P):
            return r
    return None


def test_the_csv_rows_are_the_tables_winners(tmp_path, capsys):
    from tlop.decisions.files.nccl_csv import COLLECTIVES as CSV_NAMES

    out = tmp_path / "nccl.csv"
    assert main(["tune", "P=4,8,16", "m=1KiB..64MiB:x8", "--collective", ",".join(NCCL_COLLECTIVES), "--library",
                 "nccl", "--profile", PROFILE, "--mapping", MAPPING, "--nccl", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    rows = _csv_rows(out.read_text())
    result = _tuned(NCCL_COLLECTIVES, [4, 8, 16], [1024.0 * 8 ** i for i in range(6)])
    n = 0
    for (_, coll), cells in result.items():
        for c in cells:
            r = _lookup(rows, CSV_NAMES[coll], c.P, compared_size("nccl", coll, c.P, c.m))
            assert r is not None, (coll, c.P, c.m)
            assert (r[3], r[4]) == (c.chosen.algorithm.name, PROTOCOLS[c.chosen.params["proto"]]), (coll, c.P, c.m)
            assert r[5] == str(CHANNELS) and r[6] == str(tlop.sequential(4).nodes(c.P)) and r[7] == str(c.P)
            n += 1
    assert n == 5 * 3 * 6


def test_nvidias_example_plugin_answers_the_tables_algorithm_and_protocol(tmp_path, monkeypatch):
    """The example tuner plugin (tests/data/nccl_tuner_example, compiled as test_decisions_files
    does) reads the written CSV; for sample sizes it returns the table's algorithm and protocol and
    the CSV's channel count."""
    from test_decisions_files import build_plugin_driver

    build_plugin_driver(tmp_path)
    conf = tmp_path / "nccl.csv"
    assert main(["tune", "P=8,16", "m=1KiB..64MiB:x4", "--collective", "allreduce,allgather,bcast", "--library",
                 "nccl", "--profile", PROFILE, "--mapping", MAPPING, "--nccl", str(conf)]) == 0
    monkeypatch.setenv("NCCL_TUNER_CONFIG_FILE", str(conf))
    ms = [1024.0 * 4 ** i for i in range(9)]
    result = _tuned(["allreduce", "allgather", "bcast"], [8, 16], ms)
    # ncclFunc_t (nccl/tuner.h): 0 broadcast, 2 allgather, 4 allreduce; NCCL_ALGO_*: 0 tree, 1 ring;
    # NCCL_PROTO_*: 0 ll, 1 ll128, 2 simple
    func = {"bcast": 0, "allgather": 2, "allreduce": 4}
    algo = {"tree": 0, "ring": 1}
    for P in (8, 16):
        cells = [(coll, c) for (_, coll), cs in result.items() for c in cs if c.P == P]
        queries = "".join(f"{func[coll]} {compared_size('nccl', coll, P, c.m)}\n" for coll, c in cells)
        got = subprocess.run([str(tmp_path / "driver"), str(P), str(tlop.sequential(4).nodes(P))], input=queries,
                             capture_output=True, text=True, check=True).stdout.split()
        got = [tuple(int(x) for x in got[i:i + 3]) for i in range(0, len(got), 3)]
        want = [(algo[c.chosen.algorithm.name], c.chosen.params["proto"], CHANNELS) for _, c in cells]
        assert got == want
        assert len({g[:2] for g in got}) >= 3   # several algorithm/protocol pairs were asked for


def test_nvidias_example_plugin_answers_pat_with_one_gpu_per_node(tmp_path, monkeypatch):
    """With one GPU per node the table picks PAT (NCCL_ALGO_PAT = 6, Simple) for small allgathers
    and reduce-scatters and ring for large ones; the CSV names it and the example plugin, compiled
    and fed the CSV, answers it (no GPU here: the plugin's answer is checked, not NCCL running PAT)."""
    from test_decisions_files import build_plugin_driver

    build_plugin_driver(tmp_path)
    conf = tmp_path / "nccl.csv"
    assert main(["tune", "P=8,16", "m=1KiB..64MiB:x8", "--collective", "allgather,reduce_scatter", "--library",
                 "nccl", "--profile", PROFILE, "--mapping", "sequential(1)", "--nccl", str(conf)]) == 0
    assert ",pat,simple," in conf.read_text()
    monkeypatch.setenv("NCCL_TUNER_CONFIG_FILE", str(conf))
    ms = [1024.0 * 8 ** i for i in range(6)]
    result = _tuned(["allgather", "reduce_scatter"], [8, 16], ms, "sequential(1)")
    func = {"allgather": 2, "reduce_scatter": 3}   # ncclFunc_t (nccl/tuner.h)
    algo = {"ring": 1, "pat": 6}                   # NCCL_ALGO_RING, NCCL_ALGO_PAT
    for P in (8, 16):
        cells = [(coll, c) for (_, coll), cs in result.items() for c in cs if c.P == P]
        queries = "".join(f"{func[coll]} {compared_size('nccl', coll, P, c.m)}\n" for coll, c in cells)
        got = subprocess.run([str(tmp_path / "driver"), str(P), str(P)], input=queries,
                             capture_output=True, text=True, check=True).stdout.split()
        got = [tuple(int(x) for x in got[i:i + 3]) for i in range(0, len(got), 3)]
        want = [(algo[c.chosen.algorithm.name], c.chosen.params["proto"], CHANNELS) for _, c in cells]
        assert got == want
        assert (6, 2, CHANNELS) in got and any(g[0] == 1 for g in got)


def test_tune_nccl_table_golden(tmp_path, capsys, golden):
    out = tmp_path / "nccl.csv"
    assert main(["tune", "P=4,16", "m=1KiB,64KiB,4MiB", "--collective", "allreduce", "--library", "nccl",
                 "--profile", PROFILE, "--mapping", MAPPING, "--nccl", str(out)]) == 0
    text = capsys.readouterr().out.replace(str(out), "nccl.csv")
    here = Path(__file__).parent / "golden" / "cli"
    golden(here / "tune_allreduce_nccl.txt", text)
    golden(here / "tune_allreduce_nccl.csv", out.read_text())


# --- catalogue and refusals -------------------------------------------------------------------

def test_the_catalogue_lists_nccl(capsys):
    assert main(["catalogue", "--counts"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["collective", "openmpi", "mpich", "nccl"]
    row = {ln.split()[0]: ln.split() for ln in lines[2:]}
    assert row["allreduce"][3] == "2/6" and row["bcast"][3] == "1/1" and row["alltoall"][3] == "—"
    assert main(["catalogue", "--library", "nccl", "--why"]) == 0
    out = capsys.readouterr().out
    assert "nccl/collectives:tree_allreduce" in out and "NVLink SHARP" in out and "CollNet" in out
    from tlop.decisions.catalogue_table import check

    assert check() == []
    for a in catalogue(None, "nccl"):
        assert a.library == "nccl" and (a.schedule is None) == (a.status != "schedule"), a.key
        assert a.schedule or a.status.startswith(("not expressible: ", "not written: ")), a.key


@pytest.mark.parametrize("argv, message", [
    (["--profile", "metropolis", "--mapping", "sequential(4)"], "has no GPU paths"),
    (["--profile", "lassen"], "give the GPUs per node with --mapping"),
])
def test_tune_nccl_refuses_a_cpu_profile_and_a_missing_mapping(argv, message, capsys):
    assert main(["tune", "P=8", "m=1KiB", "--collective", "allreduce", "--library", "nccl", *argv]) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_tune_all_collectives_says_which_nccl_does_not_have(capsys):
    assert main(["tune", "P=8", "m=1KiB", "--collective", "all", "--library", "nccl", "--profile", PROFILE,
                 "--mapping", MAPPING]) == 0
    out = capsys.readouterr().out
    assert "NCCL has no alltoall, gather, scatter, reduce_scatter_block, barrier: not tuned for it" in out
    assert out.count("— NCCL") == 5


def test_nccl_channels_sets_every_rows_channel_count(tmp_path, capsys):
    out = tmp_path / "nccl.csv"
    assert main(["tune", "P=8", "m=1KiB,4MiB", "--collective", "allgather", "--library", "nccl", "--profile", PROFILE,
                 "--mapping", MAPPING, "--nccl", str(out), "--nccl-channels", "12"]) == 0
    rows = _csv_rows(out.read_text())
    assert rows and {r[5] for r in rows} == {"12"}
    capsys.readouterr()
    assert main(["tune", "P=8", "m=1KiB", "--collective", "allgather", "--library", "nccl", "--profile", PROFILE,
                 "--mapping", MAPPING, "--nccl", str(out), "--nccl-channels", "65"]) != 0
    assert "1 to 64 channels" in capsys.readouterr().err


@pytest.mark.parametrize("proto, m, factor", [(0, 63, 1.0), (0, 64, 1.0), (0, 64 << 12, 0.4), (1, 64 << 16, 0.8),
                                              (2, 64 << 8, 0.7), (2, 64 << 22, 0.9), (2, 64 << 23, 1.0)])
def test_the_tree_carries_nccls_correction_factor(proto, m, factor):
    """treeCorrectionFactor[proto][log2(m/64)] (tuning.cc l. 623-627) divides the tree's bytes term:
    none below 64 B and from log2(m/64) = 23 on."""
    src = 'import "nccl/model.tlop"\nalgorithm f(m: bytes, proto: int >= 0) = tree_corr(proto, m) * 1s\n'
    assert float(tlop.loads(src)["f"].evaluate(PROFILE, m=m, proto=proto)) == pytest.approx(factor, rel=1e-12)
