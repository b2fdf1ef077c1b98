"""Issue 14: a ``tlop prove`` counterexample is re-evaluated by the interpreter and shown with
the values the claim really has there; one the interpreter contradicts is called spurious."""

import re

import pytest

from tlop.cli.main import main

SOURCE = """\
import "taulop/platform.tlop"
def c(P: int) -> int = P ^ P
def l(x: real) -> real = ln(x)
algorithm k(P: int >= 1) = c(P) * 1s
"""


@pytest.fixture
def pow2(tmp_path):
    path = tmp_path / "pow2.tlop"
    path.write_text(SOURCE)
    return str(path)


def _sides(out: str):
    m = re.search(r"lhs = (\S+), rhs = (\S+)  \(evaluated at this point (by the interpreter|with the tables "
                  r"the solver chose)\)", out)
    assert m, out
    return float(m.group(1)), float(m.group(2)), m.group(3)


def test_an_abstracted_power_shows_its_real_values(pow2, capsys):
    assert main(["prove", pow2, "c(P) >= c(P+1)"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("refuted: c(P) >= c(P+1)\ncounterexample: P = 1\n")
    lhs, rhs, how = _sides(out)
    assert (lhs, rhs, how) == (1.0, 4.0, "by the interpreter")  # 1^1 and 2^2, not 0.25 and 0.5
    assert "the solver's abstraction of powers, logarithms or sums gave lhs = 0.25, rhs = 0.5" in out


@pytest.mark.parametrize("claim", ["l(x) <= x", "ln(x) <= x"])
def test_a_counterexample_the_interpreter_contradicts_is_spurious(pow2, claim, capsys):
    assert main(["prove", pow2, claim, "--var", "x:real", "--assume", "x >= 1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"unknown: {claim}\n") and "refuted" not in out
    assert "is spurious: evaluated there, lhs = 0 and rhs = 1, and the claim holds" in out


def test_a_real_counterexample_still_refutes(pow2, capsys):
    assert main(["prove", pow2, "ln(x) >= x", "--var", "x:real", "--assume", "x >= 1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("refuted: ln(x) >= x")
    lhs, rhs, _ = _sides(out)
    assert not lhs >= rhs


def test_claims_on_tables_are_rechecked_on_the_solvers_tables(capsys):
    assert main(["prove", "taulop/bcast", "binomial_bcast(P, m, shm) >= linear_bcast(P, m, shm)",
                 "--assume", "P <= 64"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("refuted:")
    lhs, rhs, how = _sides(out)
    assert how == "with the tables the solver chose" and not lhs >= rhs


def test_points_a_double_cannot_hold_are_not_rechecked():
    import z3

    from tlop.analysis.recheck import _inexact

    assert _inexact(z3.IntVal(2 ** 53)) == "" and _inexact(z3.RealVal("1/128")) == ""
    assert _inexact(z3.IntVal(2 ** 63 + 1)) == str(2 ** 63 + 1)
    assert _inexact(z3.RealVal("1/3")) == "1/3"
