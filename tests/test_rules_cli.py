"""`tlop explain` and `tlop prove` runners, in-process, on a hand-built module."""

import argparse
from types import SimpleNamespace

import pytest

from tlop import ir
from tlop.diagnostics import TlopError
from tlop.rules.cli import (add_explain_arguments, add_prove_arguments, parse_claim, run_explain,
                            run_prove)

from _tlop_fixtures_rules import B, N, V, pc, program, xm

P_INT = ir.ParamSig("P", "int", constraint=(">=", N(1)))
M = ir.ParamSig("m", "bytes")
ALGS = {
    "seq1": ir.Algorithm("seq1", (P_INT, M), B("*", B("-", V("P"), N(1)), ir.Lookup("L", N(0), (V("m"), N(1))))),
    "seq2": ir.Algorithm("seq2", (P_INT, M), B("*", B("-", V("P"), N(1)),
                                                ir.Conc(N(2), ir.Lookup("L", N(0), (V("m"), N(1)))))),
    "summa80": ir.Algorithm("summa80", (), B("+", pc([xm(0, 134), xm(1, 158)], [xm(0, 116), xm(1, 104)]),
                                              pc([xm(1, 124)], [xm(1, 97)], [xm(1, 35)]))),
}
PROG = program(algorithms=ALGS)


def load(path):
    if path != "mod.tlop":
        raise TlopError(f"no such file: {path}")
    return SimpleNamespace(program=PROG)


def _args(add, argv):
    p = argparse.ArgumentParser()
    add(p)
    return p.parse_args(argv)


def test_explain_prints_rules_and_result(capsys):
    assert run_explain(_args(add_explain_arguments, ["mod.tlop", "summa80"]), load) == 0
    out = capsys.readouterr().out
    assert "a2-a3-lockstep" in out and "a1-gather" in out
    assert "= 2‖T^c0(116) + T^c0(18) + 3‖T^c1(35) + 2‖T^c1(166) + T^c1(81)" in out
    assert "model assumptions used: A1, A2, A3" in out


def test_explain_without_a1(capsys):
    assert run_explain(_args(add_explain_arguments, ["mod.tlop", "summa80", "--no", "A1"]), load) == 0
    assert "a1-gather" not in capsys.readouterr().out


def test_explain_unknown_algorithm():
    with pytest.raises(TlopError, match="algorithms: seq1, seq2, summa80"):
        run_explain(_args(add_explain_arguments, ["mod.tlop", "nope"]), load)


def test_prove_and_refute(capsys):
    assert run_prove(_args(add_prove_arguments, ["mod.tlop", "seq1(P, m) <= seq2(P, m)"]), load) == 0
    assert "proved" in capsys.readouterr().out
    assert run_prove(_args(add_prove_arguments, ["mod.tlop", "seq2(P, m) <= seq1(P, m)"]), load) == 1
    out = capsys.readouterr().out
    assert "refuted" in out and "counterexample" in out and "P = " in out and "lhs = " in out
    # with an assumption that makes both zero the claim holds
    assert run_prove(_args(add_prove_arguments, ["mod.tlop", "seq2(P, m) <= seq1(P, m)",
                                                 "--assume", "P == 1"]), load) == 0


def test_claim_reader_errors():
    with pytest.raises(TlopError, match="compares two costs"):
        parse_claim("seq1(P, m)", PROG)
    with pytest.raises(TlopError, match="unknown name"):
        parse_claim("nope(P) <= 1", PROG)
