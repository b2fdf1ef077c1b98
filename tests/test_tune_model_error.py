"""tlop tune --error-from: the library's default is kept where the predicted gain is below the
model's error measured at that cell by a tlop validate run (the largest error on the ratio of two
algorithms of the collective), and --min-gain decides elsewhere."""

from __future__ import annotations

import json
import math

import pytest

from tlop.backends.binding import as_mapping
from tlop.cli.main import main
from tlop.cli.tune import tune
from tlop.decisions.model_error import collective_of, load_validation
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.profile import load_profile

PROFILE = "metropolis"
MAPPING = "sequential(4)"


def _point(alg, P, m, median, predicted):
    return {"kind": "point", "key": f"{alg}:P={P}:m={m}", "bench": "schedule", "params": {"algorithm": alg, "P": P, "m": m},
            "stats": {"n": 20, "median": median}, "unit": "s", "samples": [median] * 3, "predicted": predicted}


def _write(path, points, torn_tail=False):
    with open(path, "w") as f:
        for p in points:
            f.write(json.dumps(p) + "\n")
        if torn_tail:
            f.write('{"kind": "point", "key": "taulop/bcast')
    return path


def test_the_cell_error_is_the_largest_error_on_a_ratio_of_two_algorithms(tmp_path):
    pts = [
        _point("coll/allreduce:mpich_ring", 4, 1024, 2.0e-6, 1.0e-6),                  # µ 2.0
        _point("coll/allreduce:recursive_doubling", 4, 1024, 3.0e-6, 2.0e-6),    # µ 1.5
        _point("taulop/allreduce:rda", 4, 1024, 1.0e-6, 1.0e-6),                         # µ 1.0
        _point("taulop/bcast:binomial", 4, 1024, 5.0e-6, 1.0e-6),                       # another collective
        _point("coll/allreduce:mpich_ring", 8, 1024, 2.0e-6, 1.0e-6),                   # alone at P = 8
    ]
    err = load_validation(str(_write(tmp_path / "samples.jsonl", pts, torn_tail=True)))
    e = err.at("allreduce", 4, 1024)
    # pairs: ring/rd (2.0/1.5), ring/rda (2.0), rd/rda (1.5): the worst is ring against rda, 2×
    assert e.pairs == 3 and e.factor == pytest.approx(2.0) and set(e.worst) == {"coll/allreduce:mpich_ring",
                                                                               "taulop/allreduce:rda"}
    assert err.at("allreduce", 8, 1024) is None          # one algorithm says nothing about a ratio
    assert err.at("bcast", 4, 1024) is None
    assert err.at("allreduce", 4, 2048) is None          # no interpolation
    assert err.cells("allreduce") == [(4, 1024)]
    assert collective_of("coll/reduce_scatter_block:ompi_basic_linear") == "reduce_scatter_block"
    # the directory of a run is read as its samples.jsonl
    assert load_validation(str(tmp_path)).at("allreduce", 4, 1024).factor == pytest.approx(2.0)


def test_unusable_validation_files_are_refused_with_the_reason(tmp_path):
    with pytest.raises(TlopError, match="cannot read"):
        load_validation(str(tmp_path / "nowhere.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n" + json.dumps(_point("taulop/bcast:binomial", 2, 1, 1.0, 1.0)) + "\n")
    with pytest.raises(TlopError, match=r"bad.jsonl:1 is not a JSON line"):
        load_validation(str(bad))
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"kind": "point", "params": {"algorithm": "x/y:z", "P": 2, "m": 1},
                                 "stats": {"median": 1e-6}}) + "\n")   # no prediction
    with pytest.raises(TlopError, match="no measured point with a prediction"):
        load_validation(str(empty))


def _a_cell_with_a_gain(collective="allreduce", library="mpich"):
    """A cell where the library's default is priced and another algorithm is predicted cheaper."""
    Ps, ms = [4, 8], [64.0, 4096.0, 262144.0]
    result = tune([collective], [library], load_profile(PROFILE), as_mapping(MAPPING), "taulop", Ps, ms, min_gain=1.0)
    for c in result[(library, collective)]:
        if c.default is not None and math.isfinite(c.default.cost) and c.gain > 1.05:
            return Ps, ms, c
    pytest.fail("no cell where the default is priced and beaten")  # the grid was chosen to have one


@pytest.mark.parametrize("error_above_gain", [True, False])
def test_the_measured_error_replaces_min_gain_at_the_cells_it_measured(tmp_path, error_above_gain):
    Ps, ms, cell = _a_cell_with_a_gain()
    gain = cell.gain
    factor = gain * 1.5 if error_above_gain else 1.0 + (gain - 1.0) / 2
    pts = [_point("coll/allreduce:mpich_ring", cell.P, cell.m, factor * 1e-6, 1e-6),
           _point("coll/allreduce:recursive_doubling", cell.P, cell.m, 1e-6, 1e-6)]
    run = _write(tmp_path / "samples.jsonl", pts)
    err = load_validation(str(run))
    # min_gain 1.0 elsewhere: every other cell takes the cheapest
    result = tune(["allreduce"], ["mpich"], load_profile(PROFILE), as_mapping(MAPPING), "taulop", Ps, ms,
                  min_gain=1.0, error=err)
    by_cell = {(c.P, c.m): c for c in result[("mpich", "allreduce")]}
    c = by_cell[(cell.P, cell.m)]
    if error_above_gain:
        assert c.chosen == c.default and "below the model's error at this cell" in c.note
        assert f"{factor:.3f}x measured" in c.note
    else:
        assert c.chosen == c.best and c.chosen != c.default
        assert "exceeds the model's error at this cell" in c.note
    for (P, m), other in by_cell.items():
        if (P, m) != (cell.P, cell.m) and other.default is not None and math.isfinite(other.default.cost):
            assert other.chosen.cost == pytest.approx(other.best.cost, rel=1e-12)  # min_gain 1: the cheapest


def test_the_command_line_names_the_run_in_its_header_and_json(tmp_path, capsys):
    Ps, ms, cell = _a_cell_with_a_gain()
    pts = [_point("coll/allreduce:mpich_ring", cell.P, cell.m, cell.gain * 2e-6, 1e-6),
           _point("coll/allreduce:recursive_doubling", cell.P, cell.m, 1e-6, 1e-6)]
    run = _write(tmp_path / "samples.jsonl", pts)
    js = tmp_path / "t.json"
    assert main(["tune", f"P={cell.P}", f"m={cell.m}B", "--collective", "allreduce", "--library", "mpich",
                 "--profile", PROFILE, "--mapping", MAPPING, "--error-from", str(tmp_path), "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert f"below the model's error measured by {run} at 1 of 1 cells" in out
    assert "below the model's error at this cell" in out
    data = json.loads(js.read_text())
    assert data["error_from"] == str(run)
    (only,) = data["tables"][0]["cells"]
    assert only["measured_error"]["factor"] == pytest.approx(cell.gain * 2)
    assert only["chosen"]["algorithm"] == cell.default.algorithm.name


def test_a_missing_validation_run_is_an_error_not_a_silent_fallback(tmp_path, capsys):
    assert main(["tune", "P=4", "m=1KiB", "--collective", "allreduce", "--profile", PROFILE, "--mapping", MAPPING,
                 "--error-from", str(tmp_path / "missing")]) != 0
    err = capsys.readouterr().err
    assert "--error-from" in err and "cannot read the validation samples" in err and "Traceback" not in err
