"""`tlop best`: polyalgorithm selection over a grid, checked against each algorithm's own cost."""

import csv
import io

import numpy as np
import pytest

import tlop
from tlop.cli.main import main


def run_csv(argv, capsys):
    assert main(argv + ["--csv", "-"]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_best_is_the_argmin_of_every_algorithms_cost(capsys):
    rows = run_csv(["best", "plogp/bcast", "P=1..64:x4", "m=1KiB..4MiB:x16", "seg=16KiB",
                    "--profile", "localhost-example"], capsys)
    mod = tlop.load("plogp/bcast")
    prof = tlop.load_profile("localhost-example")
    # the schedules run over a process mapping: without --mapping best leaves them out
    schedules = {"binomial", "linear", "binomial_openmpi", "linear_segm", "binomial_segm", "pipeline"}
    algs = [a for a in mod.own_algorithms if mod[a].ir.over is None]
    assert set(mod.own_algorithms) - set(algs) == schedules
    assert len(rows) == 4 * 4 and len(algs) == 11 and all(a not in rows[0] for a in schedules)
    for r in rows:
        P, m = float(r["P"]), float(r["m"])
        if P < 2:  # every pLogP broadcast requires P >= 2: nothing can be priced there
            assert r["best"] == "-" and all(r[a] == "inf" for a in algs)
            continue
        costs = {}
        for a in algs:
            h = mod[a]
            args = {"P": P, "m": m, **({"seg": 16384.0} if any(p.name == "seg" for p in h.params) else {})}
            costs[a] = h.evaluate(prof, **args)
            assert float(r[a]) == pytest.approx(costs[a], rel=1e-12)
        assert r["best"] == min(costs, key=costs.get)
        assert float(r["seconds"]) == pytest.approx(min(costs.values()), rel=1e-12)


def test_best_broadcasts_across_modules(capsys):
    """The three broadcasts of taulop/collectives (two imported), on metropolis shared memory."""
    argv = ["best", "taulop/collectives", "P=2..32:x4", "m=1KiB,1MiB", "seg=8KiB", "--engine", "interp"]
    for alg in ("binomial_bcast", "linear_bcast", "scatter_allgather_bcast"):
        argv += ["--only", alg]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "cheapest of 3 algorithms of taulop/collectives on metropolis (interp)"
    assert out[2].split()[:3] == ["P", "\\", "m"]
    mod = tlop.load("taulop/collectives")
    prof = tlop.load_profile("metropolis")
    for line, P in zip(out[3:], (2, 8, 32)):
        costs = {a: mod[a].evaluate(prof, **{k: v for k, v in {"P": P, "m": 1024.0, "seg": 8192.0}.items()
                                               if any(p.name == k for p in mod[a].params)})
                 for a in ("binomial_bcast", "linear_bcast", "scatter_allgather_bcast")}
        assert line.split()[1] == min(costs, key=costs.get)


def test_best_reports_what_it_cannot_price(capsys):
    assert main(["best", "taulop/allgather", "P=8", "m=1KiB", "seg=8KiB", "--engine", "interp"]) == 0
    out = capsys.readouterr().out
    assert "  not compared: ring_allgather_seq: needs Q, which the grid does not give\n" in out
    assert "  not compared: ring_allgather_rr: needs Q, which the grid does not give\n" in out


def test_best_errors(capsys):
    assert main(["best", "taulop/bcast", "P=2", "m=1KiB", "Q=3"]) == 1
    assert "no candidate algorithm has a parameter 'Q'" in capsys.readouterr().err
    assert main(["best", "plogp/bcast", "P=2", "m=1KiB"]) == 1  # metropolis has no pLogP tables
    assert "no algorithm can be priced" in capsys.readouterr().err


def test_best_of_a_file_that_only_imports_compares_every_algorithm_in_scope(tmp_path, capsys):
    f = tmp_path / "both.tlop"
    f.write_text('model taulop\nimport "taulop/scatter"\nimport "taulop/allgather"\n')
    assert main(["best", str(f), "P=2..8:x4", "m=1KiB", "seg=8KiB", "--engine", "interp"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"cheapest of 5 algorithms of {f} on metropolis (interp)"
    # every algorithm left out is named with its reason
    assert out[1:6] == ["  not compared: binomial: runs over a process mapping: give --mapping",
                        "  not compared: ring_allgather_seq: needs Q, which the grid does not give",
                        "  not compared: ring_allgather_rr: needs Q, which the grid does not give",
                        "  not compared: ring: runs over a process mapping: give --mapping",
                        "  not compared: rda: runs over a process mapping: give --mapping"]


def test_best_of_nothing_says_so(tmp_path, capsys):
    f = tmp_path / "empty.tlop"
    f.write_text("model taulop\n")
    assert main(["best", str(f), "P=2"]) == 1
    assert "no algorithm to compare (the file declare and import none)" in capsys.readouterr().err


def test_best_across_files_labels_clashing_names(capsys):
    argv = ["best", "taulop/bcast", "plogp/bcast", "P=8", "m=1KiB", "seg=8KiB", "--profile", "localhost-example"]
    assert main(argv + ["--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    assert "binomial_bcast" in out["algorithms"] and "flat" in out["algorithms"]
    assert {"algorithm": "taulop/bcast:binomial", "reason": "runs over a process mapping: give --mapping"} \
        in out["excluded"]
    (p,) = out["points"]
    assert p["best"] == min(p["costs"], key=lambda a: p["costs"][a] if p["costs"][a] is not None else 1e300)


def test_best_says_which_tables_a_profile_lacks(capsys):
    assert main(["best", "loggp/bcast", "P=8", "m=1KiB", "--json"]) == 1
    import json
    d = json.loads(capsys.readouterr().out)["diagnostics"][0]["message"]
    assert "profile 'metropolis' lacks" in d and "G" in d
