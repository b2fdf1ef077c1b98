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
    rows = run_csv(["best", "plogp/bcast", "P=1..64:x4", "m=1KiB..4MiB:x16", "s=16KiB",
                    "--profile", "localhost-example"], capsys)
    mod = tlop.load("plogp/bcast")
    prof = tlop.load_profile("localhost-example")
    # the schedules (binomial, linear) run over a process mapping: without --mapping best leaves them out
    algs = [a for a in mod.own_algorithms if mod[a].ir.over is None]
    assert set(mod.own_algorithms) - set(algs) == {"binomial", "linear"}
    assert len(rows) == 4 * 4 and len(algs) == 11 and all(a not in rows[0] for a in ("binomial", "linear"))
    for r in rows:
        P, m = float(r["P"]), float(r["m"])
        if P < 2:  # every pLogP broadcast requires P >= 2: nothing can be priced there
            assert r["best"] == "-" and all(r[a] == "inf" for a in algs)
            continue
        costs = {}
        for a in algs:
            h = mod[a]
            args = {"P": P, "m": m, **({"s": 16384.0} if any(p.name == "s" for p in h.params) else {})}
            costs[a] = h.evaluate(prof, **args)
            assert float(r[a]) == pytest.approx(costs[a], rel=1e-12)
        assert r["best"] == min(costs, key=costs.get)
        assert float(r["seconds"]) == pytest.approx(min(costs.values()), rel=1e-12)


def test_best_broadcasts_across_modules(capsys):
    """The three broadcasts of taulop/collectives (two imported), on metropolis shared memory."""
    argv = ["best", "taulop/collectives", "P=2..32:x4", "m=1KiB,1MiB", "S=8KiB", "--engine", "interp"]
    for alg in ("binomial_bcast", "linear_bcast", "scatter_allgather_bcast"):
        argv += ["--only", alg]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "cheapest of 3 algorithms of taulop/collectives on metropolis (interp)"
    assert out[2].split()[:3] == ["P", "\\", "m"]
    mod = tlop.load("taulop/collectives")
    prof = tlop.load_profile("metropolis")
    for line, P in zip(out[3:], (2, 8, 32)):
        costs = {a: mod[a].evaluate(prof, **{k: v for k, v in {"P": P, "m": 1024.0, "S": 8192.0}.items()
                                               if any(p.name == k for p in mod[a].params)})
                 for a in ("binomial_bcast", "linear_bcast", "scatter_allgather_bcast")}
        assert line.split()[1] == min(costs, key=costs.get)


def test_best_reports_what_it_cannot_price(capsys):
    assert main(["best", "taulop/allgather", "P=8", "m=1KiB", "S=8KiB", "--engine", "interp"]) == 0
    out = capsys.readouterr().out
    assert "not priced: ring_allgather_seq (needs Q); ring_allgather_rr (needs Q)" in out


def test_best_errors(capsys):
    assert main(["best", "taulop/bcast", "P=2", "m=1KiB", "Q=3"]) == 1
    assert "no candidate algorithm has a parameter 'Q'" in capsys.readouterr().err
    assert main(["best", "plogp/bcast", "P=2", "m=1KiB"]) == 1  # metropolis has no pLogP tables
    assert "no algorithm can be priced" in capsys.readouterr().err
