"""The CLI in-process: golden outputs for printed results, exit statuses, usage errors."""

import csv
import io
import json
from pathlib import Path

import pytest

from tlop.cli.main import main

GOLDEN = Path(__file__).parent / "golden" / "cli"

CASES = {
    "eval_binomial": ["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", "--engine", "interp"],
    "eval_ring_tcp": ["eval", "taulop/allgather", "ring_allgather_seq", "P=32", "m=64KiB", "Q=8",
                      "--bind", "net=tcp", "--engine", "interp"],
    "sweep_matrix": ["sweep", "taulop/bcast", "binomial_bcast", "P=2..64:x2", "m=1KiB..4MiB:x4",
                     "--engine", "interp"],
    "sweep_rows": ["sweep", "taulop/bcast", "binomial_bcast", "P=2,8", "m=1KiB", "c=shm,net",
                   "--engine", "interp"],
    "sweep_lusitania": ["sweep", "taulop/allgather", "ring_allgather_node", "P=2..20:+6", "m=4KiB,1MiB",
                        "--profile", "lusitania", "--engine", "interp"],
    "show_allgather_verified": ["show", "taulop/allgather", "--verify"],
    "show_scatter_raw": ["show", "taulop/scatter", "--raw"],
    "show_ring_sequential": ["show", "taulop/allgather", "ring", "--mapping", "sequential"],
    "show_ring_round_robin": ["show", "taulop/allgather", "ring", "--mapping", "round_robin"],
    "show_ring_sequential8_tcp": ["show", "taulop/allgather", "ring", "--mapping", "sequential(8)",
                                  "--profile", "metropolis", "--bind", "net=tcp"],
    "show_binomial_round_robin": ["show", "taulop/bcast", "binomial", "--mapping", "round_robin"],
    "show_rda_sequential": ["show", "taulop/allgather", "rda", "--mapping", "sequential"],
    "show_plogp_latex": ["show", "plogp/bcast", "binomial_segmented", "--latex"],
    "check_stdlib": ["check", "taulop/bcast", "taulop/allgather", "plogp/bcast", "loggp/p2p"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_output(name, capsys, golden):
    assert main(CASES[name]) == 0
    golden(GOLDEN / f"{name}.txt", capsys.readouterr().out)


@pytest.mark.parametrize("name", sorted(n for n, argv in CASES.items() if "--engine" in argv))
def test_golden_output_with_the_default_engine(name, capsys):
    """The same goldens without ``--engine interp``: the default path (the JIT for grids) prints
    the same numbers (to the 4 significant digits shown)."""
    argv = list(CASES[name])
    i = argv.index("--engine")
    del argv[i:i + 2]
    assert main(argv) == 0
    out = capsys.readouterr().out.replace("(jit)", "(interp)")
    assert out == (GOLDEN / f"{name}.txt").read_text()


def test_sweep_csv_round_trips(capsys):
    assert main(["sweep", "taulop/bcast", "binomial_bcast", "P=2..16:x2", "m=1KiB,64KiB", "--csv", "-",
                 "--engine", "interp"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 8 and set(rows[0]) == {"P", "m", "seconds"}
    assert main(["eval", "taulop/bcast", "binomial_bcast", "P=8", "m=64KiB", "--json", "--engine", "interp"]) == 0
    single = json.loads(capsys.readouterr().out)["seconds"]
    (row,) = [r for r in rows if float(r["P"]) == 8 and float(r["m"]) == 65536]
    assert float(row["seconds"]) == single


def test_sweep_csv_to_file(tmp_path, capsys):
    out = tmp_path / "grid.csv"
    assert main(["sweep", "taulop/bcast", "linear_bcast", "P=2..4", "m=1KiB", "--csv", str(out),
                 "--engine", "interp"]) == 0
    assert out.read_text().count("\n") == 4


def test_demo_runs(capsys):
    assert main(["demo", "--engine", "interp"]) == 0
    out = capsys.readouterr().out
    assert "binomial_bcast" in out and "ring_allgather_rr" in out


def test_profiles_lists_provenance(capsys):
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    assert "metropolis (default)" in out and "libtaulop" in out and "lusitania" in out


@pytest.mark.parametrize("argv, status, message", [
    ([], 2, ""),
    (["eval"], 2, "required"),
    (["eval", "taulop/bcast", "binomial_bcast", "P16"], 1, "arguments are NAME=VALUE"),
    (["eval", "nowhere/nothing", "x"], 1, "no such file or stdlib module"),
    (["eval", "taulop/bcast", "binomial_bcast", "P=4", "m=1KiB", "--profile", "nope"], 1, "nope"),
    (["eval", "taulop/bcast", "binomial_bcast", "P=4", "m=1KiB", "--bind", "net"], 1, "--bind"),
    (["sweep", "taulop/bcast", "binomial_bcast", "P=8..2", "m=1KiB"], 1, "range is empty"),
    (["sweep", "taulop/bcast", "binomial_bcast", "P=2..8:x1", "m=1KiB"], 1, "factor > 1"),
    (["eval", "taulop/bcast", "binomial_bcast", "P=4", "m=1KiB", "c=gpu"], 1, "unknown channel"),
])
def test_errors(argv, status, message, capsys):
    assert main(argv) == status
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_out_of_grid_warning_is_one_clean_line(capsys):
    assert main(["eval", "taulop/bcast", "binomial_bcast", "P=4", "m=1GiB", "--out-of-grid", "warn"]) == 0
    err = capsys.readouterr().err
    assert "tlop: warning: table 'o' on channel 'shm': m = 1073741824 B is outside the measured grid" in err
    assert ".py:" not in err
