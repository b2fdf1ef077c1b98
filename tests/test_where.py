"""``algorithm f(…) where COND = …``: conditions on several parameters (``S <= m``), conjunctions,
a power of two (``P & (P - 1) == 0``); enforced by binding on every engine, used as a fact by the
simplifier, and respected by tlop best and the agreement check."""

import numpy as np
import pytest

import tlop
from tlop.analysis.simplify import context_for
from tlop.cli.main import main
from tlop.frontend.parse import parse_text
from tlop.frontend.unparse import unparse
from tlop.runtime.diagnostics import TlopError

SRC = """model taulop
import "taulop/platform"
algorithm rd(P: int >= 1, m: bytes, S: bytes > 0B) where P & (P - 1) == 0 and S <= m =
    (m / S) * o[shm](S) + log2(P) * 1us
"""


@pytest.fixture
def mod(tmp_path):
    f = tmp_path / "rd.tlop"
    f.write_text(SRC)
    return tlop.load(str(f))


def expected(prof, P, m, S):
    return (m / S) * prof.table("o", "shm").lookup(S) + np.log2(P) * 1e-6


@pytest.mark.parametrize("engine", ["interp", "jit"])
def test_accepted_points_evaluate_and_others_are_refused(mod, engine):
    prof = tlop.load_profile("metropolis")
    h = mod["rd"]
    run = h.evaluate if engine == "interp" else h.compile(prof)
    call = (lambda **a: run(prof, **a)) if engine == "interp" else (lambda **a: run(**a))
    assert call(P=8, m=1024.0, S=512.0) == pytest.approx(float(expected(prof, 8, 1024.0, 512.0)), rel=1e-12)
    for bad in ({"P": 6, "m": 1024.0, "S": 512.0}, {"P": 8, "m": 1024.0, "S": 2048.0}):
        with pytest.raises(TlopError, match=r"violate its condition 'where P & \(P - 1\) == 0 and S <= m'"):
            call(**bad)
    P = np.array([2.0, 4.0, 8.0, 16.0])
    if engine == "jit":
        assert np.allclose(run.batch(P=P, m=4096.0, S=1024.0), expected(prof, P, 4096.0, 1024.0), rtol=1e-12)
        with pytest.raises(TlopError, match=r"P = 3, m = 4KiB, S = 1KiB .* \(at 1 of 4 points\)"):
            run.batch(P=np.array([2.0, 3.0, 4.0, 8.0]), m=4096.0, S=1024.0)
    else:
        with pytest.raises(TlopError, match=r"\(at 2 of 4 points\)"):
            call(P=np.array([2.0, 3.0, 5.0, 8.0]), m=4096.0, S=1024.0)


def test_the_condition_round_trips_through_unparse():
    m = parse_text(SRC, "rd.tlop")
    text = unparse(m)
    assert m.decls[2].requires is not None and " where " in text
    assert parse_text(text, "again.tlop") == m


def test_the_simplifier_may_assume_the_condition(mod):
    alg = mod["rd"].ir
    ctx = context_for(mod.program, alg)
    assert alg.requires in ctx.facts


def test_best_leaves_out_the_points_the_condition_refuses(mod, capsys):
    assert main(["best", str(mod.path), "P=2..8", "m=1KiB", "S=512B", "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    assert [p["P"] for p in out["points"] if p["best"] == "rd"] == [2, 4, 8]
    assert out["excluded"] == [{"algorithm": "rd", "reason": "its constraints exclude it at 4 of 7 points"}]


def test_show_prints_the_condition_and_checks_agreement_only_where_it_holds(mod, capsys):
    assert main(["show", str(mod.path), "--profile", "metropolis"]) == 0
    out = capsys.readouterr().out
    assert "rd(P: int >= 1, m: bytes, S: bytes > 0B) where P & P − 1 = 0 ∧ S ≤ m =" in out
    assert "[agrees on metropolis" in out
