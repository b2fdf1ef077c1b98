"""tlop tune-check: reading what a tuning file names (MPICH JSON, Open MPI rules), the verdicts,
and end to end with the mpich wheel (P = 2): a file that forces another broadcast than the
default at one size, confirmed from MPICH's own message log, both timings reported; an
interrupted run keeps its samples and --resume finishes it."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys

import pytest

import tlop.runtime.measure.witness as witness
from tlop.cli.main import main
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.measure.selection import forcing_env, mpich_named, named_algorithm, openmpi_named
from tlop.runtime.measure.store import read_records

FAST = ["--time-cap", "0.05", "--min-reps", "5", "--max-reps", "60", "--eps", "0.5"]

TREE = {"comm_type=intra": {
    "comm_size<4": {"avg_msg_size<=8191": {"algorithm=MPIR_Bcast_intra_binomial": {}},
                    "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_scatter_recursive_doubling_allgather": {}}},
    "comm_size=any": {"algorithm=MPIR_Bcast_intra_tree": {"tree_type=kary": {}, "k=2": {}, "is_non_blocking=0": {},
                                                         "topo_overhead=0": {}}}}}


def test_mpich_tree_is_walked_as_mpich_does():
    assert str(mpich_named(TREE, "bcast", 2, 8191)[0]) == "binomial"
    assert str(mpich_named(TREE, "bcast", 2, 8192)[0]) == "scatter_recursive_doubling_allgather"
    # comm_size<N is strict, as MPICH's prune_tree decides it (tlop tune writes comm_size<2 before
    # comm_size=any: the run at P = 2 took the second branch, by MPICH's own message log)
    assert str(mpich_named(TREE, "bcast", 3, 1)[0]) == "binomial"
    tree = mpich_named(TREE, "bcast", 4, 1)[0]
    assert str(tree) == "tree (tree_type=kary, k=2, is_non_blocking=0)"
    env, why = forcing_env(tree, "bcast")
    assert why == "" and env["MPIR_CVAR_BCAST_INTRA_ALGORITHM"] == "tree" and env["MPIR_CVAR_BCAST_TREE_KVAL"] == "2"
    # a key whose truth only the library knows is reported, not guessed
    named, why = mpich_named({"comm_hierarchy=parent": {"algorithm=MPIR_Bcast_intra_smp": {}}}, "bcast", 2, 1)
    assert named is None and "comm_hierarchy=parent" in why
    # allreduce: count<pow2 compares elements (float64) with the largest power of two <= P
    ar = {"comm_type=intra": {"count<pow2": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
                              "count=any": {"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather": {}}}}
    assert str(mpich_named(ar, "allreduce", 4, 8)[0]) == "recursive_doubling"       # 1 element < 4
    assert str(mpich_named(ar, "allreduce", 4, 32)[0]) == "reduce_scatter_allgather"  # 4 elements


RULES = """1            # number of collectives
7            # bcast
2            # communicator sizes
2
2            # message sizes
0 6 0 0      # binomial
65536 8 0 0  # scatter_allgather
8
1
0 5 2 8192   # binary tree, segmented
"""


def test_openmpi_rules_are_applied_as_coll_tuned_does(tmp_path):
    assert str(openmpi_named(RULES, "bcast", 2, 65535)[0]) == "binomial"
    assert str(openmpi_named(RULES, "bcast", 3, 65536)[0]) == "scatter_allgather"   # largest comm size <= 3 is 2
    seg = openmpi_named(RULES, "bcast", 16, 1)[0]
    assert str(seg) == "binary_tree (fan 2, segment 8192 B)"
    env, _ = forcing_env(seg, "bcast")
    assert env["OMPI_MCA_coll_tuned_bcast_algorithm"] == "5"
    assert env["OMPI_MCA_coll_tuned_bcast_algorithm_segmentsize"] == "8192"
    assert openmpi_named(RULES, "allreduce", 2, 8)[0] is None                       # no allreduce rules
    bad = tmp_path / "bad.rules"
    bad.write_text(RULES.replace("0 6 0 0", "16 6 0 0"))
    with pytest.raises(TlopError, match="Open MPI requires 0"):
        named_algorithm("openmpi", bad, "bcast", 2, 1)


def test_verdicts_and_what_ran():
    from tlop.cli.tune_check_report import cells, ran

    a, b = {(0, 1): (1024, 1)}, {(0, 1): (512, 2), (1, 0): (512, 1)}
    assert ran({"named": "x", "file": b, "default": a, "forced_traffic": b}) == ("confirmed", True)
    assert ran({"named": "x", "file": a, "default": a, "forced_traffic": a})[0].startswith("confirmed (same")
    assert ran({"named": "x", "file": a, "default": a, "forced_traffic": b})[0].startswith("NOT confirmed")
    assert ran({"named": None, "why": "no rule"})[0].endswith("no rule")

    def rec(config, rnd, samples):
        return {"kind": "point", "bench": "tune-check", "samples": samples,
                "params": {"P": 2, "m": 8, "config": config, "round": rnd, "collective": "bcast"}}
    fast, slow = [1e-6 + i * 1e-9 for i in range(40)], [2e-6 + i * 1e-9 for i in range(40)]
    [c] = cells([rec("default", 0, slow), rec("file", 0, fast)], {2: {8: {"named": "x", "file": b,
                                                                              "default": a, "forced_traffic": b}}},
                [2], [8])
    assert c.verdict == "file faster" and c.ratio == pytest.approx(0.5, rel=0.02) and c.confirmed
    # rounds that disagree: no clear difference, however narrow the pooled interval
    [c] = cells([rec("default", 0, slow), rec("file", 0, fast), rec("default", 1, fast), rec("file", 1, slow),
                 rec("default", 2, slow), rec("file", 2, fast)], {}, [2], [8])
    assert c.ratio_ci[1] < 1 and c.spread == (pytest.approx(0.5, rel=0.05), pytest.approx(2, rel=0.05))
    assert c.verdict == "no clear difference"
    [c] = cells([rec("default", 0, fast), rec("file", 0, fast)], {}, [2], [8])
    assert c.verdict == "no clear difference" and c.ran == "not checked"


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    assert main(["tune-check", "bcast", str(tmp_path / "missing.json")]) == 1
    assert "missing.json: no such file" in capsys.readouterr().err
    f = tmp_path / "x.json"
    f.write_text("{}")
    assert main(["tune-check", "allreduce", str(f), "m=12"]) == 1
    assert "multiple of 8" in capsys.readouterr().err
    assert main(["tune-check", "bcast", str(f), "Q=2"]) == 1
    assert "P=RANGE and m=RANGE" in capsys.readouterr().err
    rules = tmp_path / "bcast.rules"
    rules.write_text(RULES)
    with pytest.raises(TlopError, match="not JSON .*MPICH reads a JSON selection"):
        named_algorithm("mpich", rules, "bcast", 2, 1)
    with pytest.raises(TlopError, match="x.json: line 1: '{}' is not a number"):
        named_algorithm("openmpi", f, "bcast", 2, 1)


def _bcast_file(tmp_path, base) -> str:
    """MPICH's whole default selection with bcast replaced: binomial to 8 KiB, then
    scatter_recursive_doubling_allgather (MPICH's default at P = 2 is binomial at every size)."""
    whole = dict(base)
    whole["collective=bcast"] = {
        "comm_type=intra": {"comm_size=any": {
            "avg_msg_size<=8191": {"algorithm=MPIR_Bcast_intra_binomial": {}},
            "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_scatter_recursive_doubling_allgather": {}}}},
        "comm_type=inter": base["collective=bcast"]["comm_type=inter"]}
    path = tmp_path / "bcast.json"
    path.write_text(json.dumps(whole))
    return str(path)


@pytest.fixture(scope="module")
def mpich_base():
    pytest.importorskip("mpi4py")
    from tlop.runtime.tuning_files import mpich_default_selection

    base = mpich_default_selection()
    if base is None:
        pytest.skip("MPICH's library (the mpich wheel) is not beside this Python")
    return base


@pytest.mark.mpi
def test_tune_check_confirms_the_files_algorithm_with_mpich(tmp_path, capsys, mpich_base):
    out = tmp_path / "tc"
    argv = ["tune-check", "bcast", _bcast_file(tmp_path, mpich_base), "P=2", "m=1KiB,64KiB", "--rounds", "1",
            "--out", str(out), "--quiet", *FAST]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "the library ran the file's algorithm (confirmed) in 2 of 2" in text
    rows = list(csv.DictReader(open(out / "tune-check.csv")))
    assert [(r["P"], r["m"], r["file_names"]) for r in rows] == [
        ("2", "1024", "binomial"), ("2", "65536", "scatter_recursive_doubling_allgather")]
    assert rows[0]["library_ran"] == "confirmed (same messages as the default)"
    assert rows[1]["library_ran"] == "confirmed" and rows[1]["confirmed"] == "1"
    for r in rows:
        assert float(r["default_median_s"]) > 0 and float(r["file_median_s"]) > 0
        assert float(r["ratio"]) == pytest.approx(float(r["file_median_s"]) / float(r["default_median_s"]))
        assert float(r["ratio_ci_low"]) <= float(r["ratio"]) <= float(r["ratio_ci_high"])
    w = json.loads((out / "witness.json").read_text())["2"]["65536"]
    assert w["file"] == w["forced_traffic"] != w["default"]
    assert w["forced_env"]["MPIR_CVAR_BCAST_INTRA_ALGORITHM"] == "scatter_recursive_doubling_allgather"
    md = (out / "report.md").read_text()
    assert "library: MPICH Version: 5" in md and "HYDRA build details" not in md
    assert "-bind-to core" in md and "observed CPU affinity: rank 0: CPU" in md
    assert "| 2 | 64KiB | scatter_recursive_doubling_allgather | confirmed |" in md
    recs = [r for r in read_records(out / "samples.jsonl") if r["kind"] == "point"]
    assert sorted((r["params"]["config"], r["params"]["m"]) for r in recs) == [
        ("default", 1024), ("default", 65536), ("file", 1024), ("file", 65536)]
    assert all(len(r["samples"]) == r["stats"]["n"] >= 5 and r["timing"]["method"] == "batch" for r in recs)
    assert not list(out.glob("job-*.json"))


@pytest.mark.mpi
def test_window_timing_and_an_unreadable_message_log(tmp_path, capsys, mpich_base, monkeypatch):
    # the message log needs MPICH's OFI netmod; a libfabric provider that does not exist makes the
    # traced run fail: the timings still come, and the report says why nothing is confirmed
    monkeypatch.setitem(witness.MPICH_TRACED, "FI_PROVIDER", "no-such-provider")
    out = tmp_path / "tc"
    assert main(["tune-check", "bcast", _bcast_file(tmp_path, mpich_base), "P=2", "m=64KiB", "--rounds", "1",
                 "--timing", "window", "--out", str(out), "--quiet", *FAST]) == 0
    [row] = list(csv.DictReader(open(out / "tune-check.csv")))
    assert row["library_ran"].startswith("not checked: the library's message log could not be read")
    assert float(row["default_median_s"]) > 0 and float(row["file_median_s"]) > 0
    recs = [r for r in read_records(out / "samples.jsonl") if r["kind"] == "point"]
    assert all(r["timing"]["method"] == "window" and r["timing"]["windows"] >= r["stats"]["n"] > 0 for r in recs)


@pytest.mark.mpi
def test_interrupted_tune_check_keeps_its_samples(tmp_path, mpich_base):
    out = tmp_path / "tc"
    args = ["tune-check", "bcast", _bcast_file(tmp_path, mpich_base), "P=2", "m=1KiB,4KiB", "--out", str(out),
            "--no-witness", "--time-cap", "0.3", "--min-reps", "5", "--eps", "0.0001"]
    code = "import sys; from tlop.cli.main import main; sys.exit(main(sys.argv[1:]))"
    # 40 rounds: far more work than can finish between the first finished cell and the signal
    proc = subprocess.Popen([sys.executable, "-c", code, *args, "--rounds", "40"], stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    seen = []
    for line in proc.stderr:            # the handshake: a cell is on disk once its progress line is out
        seen.append(line)
        if "[1/" in line:
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, "".join(seen) + rest
    assert "run the same command with --resume" in rest
    kept = [r for r in read_records(out / "samples.jsonl") if r["kind"] == "point"]
    assert kept and all(r["samples"] for r in kept)
    # --resume keeps them and measures the rest of (here) one round
    assert main([*args, "--rounds", "1", "--resume", "--quiet", "--time-cap", "0.05"]) == 0
    after = [r for r in read_records(out / "samples.jsonl") if r["kind"] == "point"]
    assert all(r in after for r in kept)
    assert len([r for r in after if r["params"]["round"] == 0]) == 4


OPENMPI_RULES = """1            # number of collectives
7            # collective: bcast
1            # number of communicator sizes
2            # communicator size
2            # number of message sizes
0 6 0 0      # binomial
16384 8 0 0  # scatter_allgather from 16 KiB
"""


@pytest.mark.mpi
def test_tune_check_confirms_the_files_algorithm_with_openmpi(tmp_path, capsys):
    pytest.importorskip("mpi4py")
    from tlop.runtime.measure.openmpi import ensure_openmpi

    try:
        ensure_openmpi()
    except TlopError as err:
        pytest.skip(str(err))
    rules = tmp_path / "bcast.rules"
    rules.write_text(OPENMPI_RULES)
    out = tmp_path / "tc"
    assert main(["tune-check", "bcast", str(rules), "P=2", "m=1KiB,64KiB", "--mpi", "openmpi", "--rounds", "1",
                 "--out", str(out), "--quiet", *FAST]) == 0
    rows = list(csv.DictReader(open(out / "tune-check.csv")))
    assert [(r["file_names"], r["library_ran"]) for r in rows] == [
        ("binomial", "confirmed (same messages as the default)"), ("scatter_allgather", "confirmed")]
    assert all(float(r["default_median_s"]) > 0 and float(r["file_median_s"]) > 0 for r in rows)
    w = json.loads((out / "witness.json").read_text())["2"]["65536"]
    assert w["file"] == w["forced_traffic"] != w["default"]        # Open MPI's pml/monitoring counters
    md = (out / "report.md").read_text()
    assert "library: Open MPI v5" in md and "--bind-to core (Open MPI)" in md


def test_binding_and_the_notes_on_sharing_the_machine():
    from tlop.cli.tune_check import launcher_binding
    from tlop.cli.tune_check_report import record_notices

    assert launcher_binding("/x/mpiexec", "mpich", 2, 2, True) == (["-bind-to", "core"],
                                                                    "mpiexec -bind-to core (MPICH Hydra)")
    assert launcher_binding("/x/mpiexec", "openmpi", 2, 2, True)[0] == ["--bind-to", "core"]
    assert launcher_binding("/usr/bin/srun", "unknown", 64, 2, False)[0] == ["--cpu-bind=cores"]
    args, why = launcher_binding("/x/mpiexec", "mpich", 4, 2, True)
    assert args == [] and "oversubscribed" in why
    runs = [{"np": 4, "cpus": 2, "hosts_by_rank": ["a"] * 4, "load": [3.0]},
            {"np": 4, "cpus": 2, "hosts_by_rank": ["a", "b", "a", "b"], "load": [1.0]}]
    notes = record_notices(runs)
    assert len(notes) == 2 and "4 ranks shared a host with 2 CPUs (oversubscribed)" in notes[0]
    assert "1 of 2 launches" in notes[1]
    assert record_notices([{"np": 4, "cpus": 2, "hosts_by_rank": ["a", "b", "a", "b"], "load": [1.0]}]) == []
