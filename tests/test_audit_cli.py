"""tlop audit: the libraries' defaults priced against their best algorithm — the table, the JSON
and the heat map agree with each other and with a direct pricing of the default."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import tlop
from tlop.cli.main import main

ARGS = ["P=4,8,16", "m=1KiB,1MiB", "--collective", "allreduce", "--profile", "metropolis",
        "--mapping", "sequential(8)"]


def test_audit_json_flags_exactly_the_cells_at_or_above_the_threshold(capsys):
    assert main(["audit", *ARGS, "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mapping"] == "sequential(8)" and doc["model"] == "taulop"
    assert {(t["library"], t["collective"]) for t in doc["tables"]} == {("openmpi", "allreduce"),
                                                                         ("mpich", "allreduce")}
    for t in doc["tables"]:
        assert len(t["cells"]) == 6
        for c in t["cells"]:
            if c["ratio"] is None:
                assert not c["flagged"] and c["note"]
                continue
            assert c["ratio"] == pytest.approx(c["default"]["cost"] / c["best"]["cost"], rel=1e-12)
            assert c["ratio"] >= 1.0 - 1e-12  # the best of the library is never dearer than its default
            assert c["flagged"] == (c["ratio"] >= 1.1)


def test_the_default_is_priced_as_its_schedule(capsys):
    """Each priced default's cost is its schedule's cost, by the interpreter, with the library's
    parameters: the audit does not invent a number."""
    from tlop.decisions.openmpi_defaults import decide

    assert main(["audit", *ARGS, "--library", "openmpi", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for c in doc["tables"][0]["cells"]:
        d = decide("allreduce", c["P"], c["m"])
        alg = d.algorithm()
        if alg.schedule is None:  # a composite: the sum of Open MPI's fixed reduce and bcast there
            assert alg.name == "nonoverlapping"
            want = 0.0
            for inner_coll in ("reduce", "bcast"):
                di = decide(inner_coll, c["P"], c["m"])
                ai = di.algorithm()
                module, _, name = ai.schedule.partition(":")
                h = tlop.load(module, model="taulop")[name]
                names = {p.name for p in h.params}
                args = {k: float(v) for k, v in {**ai.fixed, **di.params}.items() if k in names}
                want += float(h.evaluate("metropolis", mapping="sequential(8)", P=float(c["P"]), m=float(c["m"]),
                                         **args))
            assert c["default"]["cost"] == pytest.approx(want, rel=1e-12)
            continue
        module, _, name = alg.schedule.partition(":")
        h = tlop.load(module, model="taulop")[name]
        names = {p.name for p in h.params}
        args = {k: float(v) for k, v in {**alg.fixed, **d.params}.items() if k in names}
        want = h.evaluate("metropolis", mapping="sequential(8)", P=float(c["P"]), m=float(c["m"]), **args)
        assert c["default"]["cost"] == pytest.approx(float(want), rel=1e-12)


def test_audit_table_and_heat_map(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    target = tmp_path / "audit.svg"
    assert main(["audit", *ARGS, "--library", "mpich", "--plot", str(target), "--all-cells"]) == 0
    out = capsys.readouterr().out
    assert "allreduce — MPICH 4.x collective selection:" in out and "cells flagged" in out
    assert target.exists() and "<svg" in target.read_text()[:400]
    # the figure's content: its mesh holds the ratios of the JSON, P down and m across
    from tlop.cli.audit import audit_tables
    from tlop.cli.plot_audit import ratio_figure
    from tlop.backends.binding import as_mapping

    tables = audit_tables(["allreduce"], ["mpich"], tlop.load_profile("metropolis"), as_mapping("sequential(8)"),
                          "taulop", [4, 8, 16], [1024, 1048576])
    cells = tables[("mpich", "allreduce")]
    fig = ratio_figure(cells, "t", 1.1)
    mesh = next(a for a in fig.axes[0].get_children() if a.get_gid() == "audit-ratio")
    shown = np.ma.filled(mesh.get_array(), np.nan).reshape(3, 2)
    for c in cells:
        i, j = [4, 8, 16].index(c.P), [1024, 1048576].index(c.m)
        if c.ratio is None:
            assert math.isnan(shown[i, j])
        else:
            assert shown[i, j] == pytest.approx(c.ratio)
    marks = sorted(t.get_text() for t in fig.axes[0].texts if t.get_gid() == "audit-mark")
    assert marks == sorted(f"{c.ratio:.2f}×" for c in cells if c.ratio is not None and c.ratio >= 1.1)


@pytest.mark.parametrize("argv, message", [
    (["audit", "P=4", "m=1KiB", "--collective", "bcast", "--profile", "metropolis"], "has a network channel"),
    (["audit", "P=4", "--collective", "bcast", "--mapping", "sequential(4)"], "give the grid to audit"),
    (["audit", "P=4", "m=1KiB", "--collective", "bcast", "--mapping", "sequential(4)", "--threshold", "0.9"],
     "--threshold 0.9: expected a number >= 1"),
])
def test_audit_refusals(capsys, argv, message):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
