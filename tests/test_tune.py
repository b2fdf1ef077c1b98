"""tlop tune without MPI: the decision tables against an exhaustive pricing of each library's
catalogue, the written files against the printed tables, the library's default kept where the
predicted gain is small or where it was not priced, and the refusals."""

from __future__ import annotations

import functools
import itertools
import json
import math

import numpy as np
import pytest

import tlop
from tlop.cli.main import main
from tlop.cli.tune import tune
from tlop.decisions.catalogue import catalogue
from tlop.decisions.write import rules_of
from tlop.runtime.profile import load_profile

PROFILE = "metropolis"
MAPPING = "sequential(4)"


@functools.lru_cache(maxsize=None)
def _profile():
    """The profile, loaded once for the module's exhaustive pricings (a load and its validation
    per priced point were a fifth of their time)."""
    return load_profile(PROFILE)


@functools.lru_cache(maxsize=None)
def _schedules(module):
    """A stdlib module loaded once in the τ-Lop model (a load per priced point was a quarter of
    the exhaustive pricings' time)."""
    return tlop.load(module, model="taulop")


def _direct(alg, P, m, params):
    """The cost of one catalogue algorithm by the reference interpreter, nothing shared with tune;
    an Open MPI composite is the sum of its calls, each Open MPI's fixed decision there (or the
    algorithm the composite names)."""
    if alg.schedule is None:
        from tlop.decisions.catalogue import find
        from tlop.decisions.openmpi_defaults import decide

        assert alg.library == "openmpi" and alg.parts is not None, alg.key
        total = 0.0
        for part in alg.parts(P, int(m)):
            mi = {"m": int(m), "Pm": P * int(m)}.get(part.m, part.m)
            if part.algorithm is not None:
                inner, inner_params = find("openmpi", part.collective, part.algorithm), {}
            else:
                d = decide(part.collective, P, mi)
                inner, inner_params = d.algorithm(), d.params
            total += _direct(inner, P, mi, inner_params)
        return total
    module, _, name = alg.schedule.partition(":")
    h = _schedules(module)[name]
    names = {p.name for p in h.params}
    args = {k: float(v) for k, v in {**alg.fixed, **params}.items() if k in names}
    args["P"] = float(P)
    if "m" in names:
        args["m"] = float(m)
    # one-element arrays: the interpreter prices them (the API's native tier answers only
    # scalar calls, and this module is loaded once for every point)
    v = h.evaluate(_profile(), mapping=MAPPING, invalid="nan", **{k: np.array([v]) for k, v in args.items()})
    (v,) = np.asarray(v, dtype=float).ravel()
    return float(v) if math.isfinite(float(v)) else math.inf


@pytest.mark.parametrize("collective", ["bcast", "allreduce", "alltoall"])
def test_the_best_of_each_cell_is_the_cheapest_algorithm_and_parameters_of_that_library(collective):
    Ps, ms = [4, 6, 8], [64.0, 65536.0]
    from tlop.backends.binding import as_mapping

    result = tune([collective], ["openmpi", "mpich"], load_profile(PROFILE), as_mapping(MAPPING), "taulop", Ps, ms,
                  defaults=False, min_gain=1.0)
    for library in ("openmpi", "mpich"):
        cells = result[(library, collective)]
        assert [(c.P, c.m) for c in cells] == [(P, int(m)) for P in Ps for m in ms]
        for c in cells:
            every = []
            for a in catalogue(collective, library):
                if not (a.priceable and a.candidate) or (a.pow2_only and c.P & (c.P - 1)):
                    continue
                keys = sorted(a.searched)
                for vals in itertools.product(*(a.searched[k] for k in keys)) if keys else [()]:
                    every.append(_direct(a, c.P, c.m, dict(zip(keys, vals))))
            assert c.best is not None and c.best.cost == pytest.approx(min(every), rel=1e-12)
            assert c.best.cost == pytest.approx(_direct(c.best.algorithm, c.P, c.m, c.best.params), rel=1e-12)
            assert [p.cost for p in c.ranking] == sorted(p.cost for p in c.ranking)
            assert c.chosen == c.best  # no defaults asked: the cheapest is written


def _openmpi_classic(text):
    """{(collective id, P): [(size, algorithm, fan, segment)]} from an Open MPI classic rules file."""
    nums = [l.split("#")[0].split() for l in text.splitlines() if l.split("#")[0].strip()
            and l.split("#")[0].split()[0].lstrip("-").isdigit()]
    it = iter(nums)
    out = {}
    for _ in range(int(next(it)[0])):
        coll = int(next(it)[0])
        for _ in range(int(next(it)[0])):
            P = int(next(it)[0])
            out[(coll, P)] = [tuple(int(x) for x in next(it)) for _ in range(int(next(it)[0]))]
    return out


def test_the_files_name_exactly_the_choices_of_the_printed_table(tmp_path, capsys):
    rules, js6, mp, js = (tmp_path / n for n in ("t.rules", "t6.json", "t.json", "table.json"))
    assert main(["tune", "P=4,8", "m=16B,64KiB,1MiB", "--collective", "allreduce,bcast", "--profile", PROFILE,
                 "--mapping", MAPPING, "--openmpi", str(rules), "--openmpi-json", str(js6), "--mpich", str(mp),
                 "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {rules} (openmpi" in out and f"wrote {mp} (mpich" in out and f"wrote {js6} (openmpi" in out
    assert "mapping sequential(4)" in out
    assert "# tlop tune: profile metropolis, model taulop, mapping sequential(4)" in rules.read_text()
    tables = json.loads(js.read_text())
    assert tables["mapping"] == MAPPING and tables["model"] == "taulop"
    from tlop.decisions.files.openmpi_classic import COLLECTIVE_IDS

    parsed = _openmpi_classic(rules.read_text())
    for t in tables["tables"]:
        if t["library"] != "openmpi":
            continue
        for P in (4, 8):
            lines = parsed[(COLLECTIVE_IDS[t["collective"]], P)]
            for cell in (c for c in t["cells"] if c["P"] == P):
                from tlop.decisions.library_size import compared_size

                size = compared_size("openmpi", t["collective"], P, cell["m"], kind="rules")
                rule = [l for l in lines if l[0] <= size][-1] if lines[0][0] == 0 else None
                assert rule is not None  # the first rule of every size is at 0 (Open MPI requires it)
                chosen = cell["chosen"]
                if chosen == cell["default"]:
                    assert rule[1] == 0  # the default runs: the fixed decision decides
                else:
                    assert rule[1] == chosen["id"], (t["collective"], P, cell)
                    assert rule[3] == chosen["params"].get("seg", 0)
    mpich = json.loads(mp.read_text())
    assert "collective=barrier" in mpich  # MPICH's default for every other collective is kept
    text = json.dumps(mpich["collective=allreduce"]["comm_type=intra"])
    for t in tables["tables"]:
        if t["library"] == "mpich" and t["collective"] == "allreduce":
            for cell in t["cells"]:
                if cell["chosen"] != cell["default"]:
                    assert f"algorithm={cell['chosen']['id']}" in text


def test_rules_are_the_cells_choices_and_a_kept_default_is_the_library_own():
    from tlop.backends.binding import as_mapping

    result = tune(["bcast"], ["openmpi"], load_profile(PROFILE), as_mapping(MAPPING), "taulop", [4, 8],
                  [1024.0, 1048576.0], min_gain=1e9)   # an impossible gain: every priced default is kept
    cells = result[("openmpi", "bcast")]
    assert all(c.chosen is c.default for c in cells)
    assert all("default kept" in c.note or c.note == "the default is the cheapest" or "not priced" in c.note
               for c in cells)
    assert all(r.algorithm is None for r in rules_of(result, "openmpi"))
    result = tune(["bcast"], ["openmpi"], load_profile(PROFILE), as_mapping(MAPPING), "taulop", [8],
                  [1048576.0], min_gain=1.0)
    (c,) = result[("openmpi", "bcast")]
    (r,) = rules_of(result, "openmpi")
    if c.chosen is c.default:
        assert r.algorithm is None
    else:
        assert r.algorithm == c.chosen.algorithm and r.params == c.chosen.params and r.cost == c.chosen.cost


def test_an_unpriced_default_is_never_overridden(monkeypatch):
    """A library default that is not a schedule keeps its place in the file, whatever the costs."""
    import tlop.cli.tune as tune_mod
    from tlop.backends.binding import as_mapping

    import dataclasses

    import tlop.decisions.catalogue.bcast as bcast_catalogue

    # every MPICH bcast is priced now (nb is a composite): a stand-in that is not
    nb = next(a for a in bcast_catalogue.ALGORITHMS if a.library == "mpich" and a.name == "nb")
    unpriced = dataclasses.replace(nb, parts=None, status="not written: a stand-in for the test")
    monkeypatch.setattr(bcast_catalogue, "ALGORITHMS", [unpriced if a is nb else a for a in bcast_catalogue.ALGORITHMS])
    assert not unpriced.priceable and unpriced in catalogue("bcast", "mpich")
    monkeypatch.setattr(tune_mod, "_default_of", lambda lib, coll, mapping=None: (lambda P, m: (unpriced.id, {})))
    result = tune(["bcast"], ["mpich"], load_profile(PROFILE), as_mapping(MAPPING), "taulop", [4], [4096.0])
    (c,) = result[("mpich", "bcast")]
    assert c.chosen is c.default and math.isinf(c.default.cost) and "not priced" in c.note
    assert c.best is not None and c.best.algorithm != unpriced
    assert rules_of(result, "mpich")[0].algorithm is None


@pytest.mark.parametrize("argv, message", [
    (["tune", "P=4", "m=1KiB", "--collective", "bcast", "--profile", "metropolis"],
     "has a network channel: give the process mapping"),
    (["tune", "taulop/bcast", "P=4", "m=1KiB", "--collective", "bcast", "--mapping", "sequential(4)"],
     "prices the libraries' own algorithms"),
    (["tune", "P=4", "--collective", "bcast", "--mapping", "sequential(4)"], "give the ranges to tune over"),
    (["tune", "P=4", "m=1KiB", "seg=4KiB", "--collective", "bcast", "--mapping", "sequential(4)"],
     "are searched"),
    (["tune", "P=4", "m=1KiB", "--collective", "alreduce", "--mapping", "sequential(4)"],
     "did you mean 'allreduce'?"),
    (["tune", "P=4", "m=1KiB", "--collective", "bcast", "--library", "intelmpi", "--mapping", "sequential(4)"],
     "--library intelmpi: choose from openmpi, mpich"),
    (["tune", "P=4", "m=1KiB", "--collective", "bcast", "--min-gain", "0.5", "--mapping", "sequential(4)"],
     "--min-gain 0.5: expected a number >= 1"),
])
def test_tune_refusals(capsys, argv, message):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_every_collective_is_tuned_on_the_bundled_profile(capsys):
    assert main(["tune", "P=4", "m=1KiB", "--collective", "all", "--profile", PROFILE, "--mapping", MAPPING,
                 "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    from tlop.decisions.catalogue import COLLECTIVES

    got = {(t["library"], t["collective"]) for t in doc["tables"]}
    assert got == {(lib, c) for lib in ("openmpi", "mpich") for c in COLLECTIVES}
    for t in doc["tables"]:
        (cell,) = t["cells"]
        assert cell["chosen"] is not None, t["collective"]
        assert cell["best"]["cost_s"] > 0 and np.isfinite(cell["best"]["cost_s"])


def test_tune_tables_golden(tmp_path, capsys, golden):
    """The printed decision tables of a small allreduce tuning, and the Open MPI file written with
    them (the table a user reads is the file that is written)."""
    from pathlib import Path

    rules = tmp_path / "ar.rules"
    assert main(["tune", "P=4,8", "m=16B,64KiB,1MiB", "--collective", "allreduce", "--profile", PROFILE,
                 "--mapping", MAPPING, "--openmpi", str(rules)]) == 0
    out = capsys.readouterr().out.replace(str(rules), "ar.rules")
    here = Path(__file__).parent / "golden" / "cli"
    golden(here / "tune_allreduce.txt", out)
    golden(here / "tune_allreduce_openmpi.rules", rules.read_text())


def test_best_leaves_closed_forms_out_of_a_comparison_over_a_mapping(capsys):
    """Issue 21: a closed form priced on one channel does not compete with schedules spread over
    --mapping's nodes; it is named among the algorithms not compared, with the reason."""
    assert main(["best", "taulop/bcast", "P=8,16", "m=1KiB", "--mapping", "sequential(4)"]) == 0
    out = capsys.readouterr().out
    assert "not compared: binomial_bcast: takes no process mapping" in out
    rows = [l.split() for l in out.splitlines() if l.split() and l.split()[0] in ("8", "16")]
    assert rows and all(r[2] in ("binomial", "binomial_openmpi", "linear") for r in rows)
    assert main(["best", "taulop/bcast", "P=8,16", "m=1KiB", "--only", "binomial_bcast", "--only",
                 "linear_bcast"]) == 0  # without a mapping, closed forms compare among themselves
    assert "binomial_bcast" in capsys.readouterr().out
