"""tlop validate end to end with real mpiexec ranks (P = 2): the report, the CSV and the samples;
refusing to mix runs; --resume measures only what is missing; Ctrl-C keeps the samples."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys

import pytest

from tlop.cli.main import main
from tlop.runtime.measure.store import read_records

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")

FAST = ["--time-cap", "0.05", "--min-reps", "5", "--max-reps", "50", "--eps", "0.5", "--quiet"]


def test_validate_writes_the_report_and_resumes(tmp_path, capsys):
    out = tmp_path / "v"
    argv = ["validate", "taulop/bcast:binomial", "taulop/allgather:ring", "P=2", "m=1KiB,4KiB",
            "--profile", "metropolis", "--out", str(out), *FAST]
    assert main([*argv, "--library"]) == 0
    text = capsys.readouterr().out
    assert "µ̄ = " in text and f"wrote {out / 'report.html'}" in text
    rows = list(csv.DictReader(open(out / "validation.csv")))
    assert [(r["algorithm"], r["P"], r["m"]) for r in rows] == [
        ("taulop/bcast:binomial", "2", "1024"), ("taulop/bcast:binomial", "2", "4096"),
        ("taulop/allgather:ring", "2", "1024"), ("taulop/allgather:ring", "2", "4096")]
    for r in rows:
        meas, pred, mu = float(r["measured_median_s"]), float(r["predicted_s"]), float(r["mu"])
        assert meas > 0 and pred > 0 and mu == pytest.approx(max(meas, pred) / min(meas, pred))
    # --library: the library's own collective with the same algorithm forced (MPICH binomial, ring)
    assert [r["library_forced"] for r in rows] == ["bcast binomial"] * 2 + ["allgather ring"] * 2
    assert all(float(r["library_median_s"]) > 0 for r in rows)
    recs = [r for r in read_records(out / "samples.jsonl") if r["kind"] == "point"]
    assert len(recs) == 8 and all(len(r["samples"]) == r["stats"]["n"] >= 5 for r in recs)
    assert sum(r["key"].endswith(":library") for r in recs) == 4
    # each library run was timed over the same moments as its schedule: alternating batches, as many samples
    n = {r["key"]: r["stats"]["n"] for r in recs}
    assert all(n[k] == n[k[:-len(":library")]] for k in n if k.endswith(":library"))
    html = (out / "report.html").read_text()
    assert html.count("<svg") == 2 and "µ̄ = " in html
    for name in ("predicted_vs_measured", "mu_heatmap"):
        assert (out / f"{name}.png").read_bytes()[:4] == b"\x89PNG" and (out / f"{name}.svg").exists()
    assert not list(out.glob("job-*.json"))

    assert main([*argv, "--library"]) == 1  # an earlier run's samples are not mixed in silently
    assert "pass --resume to continue it or --overwrite" in capsys.readouterr().err

    # (not alltoall:pairwise: at P = 2 it is allgather:ring's single exchange, the same program, run once)
    more = ["validate", "taulop/bcast:binomial", "taulop/allgather:ring", "taulop/reduce:binomial_openmpi", "P=2",
            "m=1KiB,4KiB", "--profile", "metropolis", "--out", str(out), "--resume", "--format", "md",
            *[a for a in FAST if a != "--quiet"]]
    assert main(more) == 0
    captured = capsys.readouterr()
    assert "2 of 6 runs to measure" in captured.err
    assert len([r for r in read_records(out / "samples.jsonl") if r["kind"] == "point"]) == 10
    assert "µ̄ = " in (out / "report.md").read_text()


def test_bound_ranks_window_timing_and_identical_programs_run_once(tmp_path, capsys):
    """One launch at P = 2: the ranks are bound to distinct cores (MPICH -bind-to core) and the
    report says so with the affinity the ranks saw; the samples are window-timed; linear and
    binomial broadcasts (one send each at P = 2) run once and count once in µ̄."""
    out = tmp_path / "v"
    assert main(["validate", "taulop/bcast:binomial", "taulop/bcast:linear", "P=2", "m=1KiB", "--profile",
                 "metropolis", "--out", str(out), "--warmup", "4", *FAST]) == 0
    text = capsys.readouterr().out
    assert "over 1 distinct programs (2 cells; identical programs counted once)" in text
    recs = list(read_records(out / "samples.jsonl"))
    points = [r for r in recs if r["kind"] == "point"]
    assert [r["params"]["algorithm"] for r in points] == ["taulop/bcast:binomial"]
    assert points[0]["timing"]["method"] == "window" and points[0]["warmup"] == 4
    (run,) = [r for r in recs if r["kind"] == "run"]
    assert run["placement"]["binding"] == "mpiexec -bind-to core (MPICH Hydra)"
    a, b = run["placement"]["cpu_affinity_by_rank"]
    assert len(a) == len(b) == 1 and a != b           # each rank on a core of its own
    rows = list(csv.DictReader(open(out / "validation.csv")))
    assert rows[0]["measured_median_s"] == rows[1]["measured_median_s"] and rows[1]["same_run_as"]
    html = (out / "report.html").read_text()
    assert "binding: P=2: mpiexec -bind-to core (MPICH Hydra); observed: each rank on CPUs of its own" in html
    assert "ReproMPI&#x27;s window start" in html and "4 warm-up runs discarded" in html


def test_interrupted_validate_keeps_its_samples(tmp_path):
    out = tmp_path / "v"
    # every cell repeats for its whole time cap (an unreachable --eps): after the first cell is
    # reported, ten cells of 0.5 s remain, so the signal sent then cannot arrive after the last
    # one even on a loaded machine (before: cells ended as soon as their CI was narrow, and under
    # load all of them could finish before the SIGINT arrived)
    cmd = [sys.executable, "-m", "tlop.cli", "validate", "taulop/allgather:ring", "P=2", "m=1KiB..1MiB:x2",
           "--profile", "metropolis", "--out", str(out), "--time-cap", "0.5", "--min-reps", "5",
           "--max-reps", "1000000", "--eps", "1e-6"]
    code = "import sys; from tlop.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, *cmd[3:]], stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "[1/" in line:
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, "".join(seen) + rest
    assert "run the same command with --resume" in rest
    kept = [r for r in read_records(out / "samples.jsonl") if r["kind"] == "point"]
    assert 1 <= len(kept) < 11


def test_library_linear_broadcast_is_mpich_flat_tree(tmp_path, capsys):
    """taulop/bcast:linear against MPICH's tree broadcast forced to the flat tree (k = P − 1)."""
    out = tmp_path / "v"
    assert main(["validate", "taulop/bcast:linear", "P=3", "m=1KiB", "--profile", "metropolis", "--out", str(out),
                 "--library", *FAST]) == 0
    capsys.readouterr()
    (row,) = list(csv.DictReader(open(out / "validation.csv")))
    assert row["library_forced"] == "bcast tree (kary, k=2)" and float(row["library_median_s"]) > 0
