"""`tlop explain` and `tlop prove` runners, in-process, on a hand-built module."""

import argparse
import re
from types import SimpleNamespace

import pytest

import tlop
from tlop import ir
from tlop.frontend.claims import parse_claim
from tlop.runtime.diagnostics import TlopError
from tlop.cli.rules import add_explain_arguments, add_prove_arguments, run_explain, run_prove

SOURCE = """
channel c0
channel c1
table o[c: channel](m: bytes) -> time
table L[c: channel](m: bytes, tau: int) -> time
transmission T[c0](m) = o[c0](m) + 2 * L[c0](m, 1)
transmission T[c1](m) = o[c1](m) + L[c1](m, 1)
/// P − 1 transfers in sequence
algorithm seq1(P: int >= 1, m: bytes) = (P - 1) * L[c0](m, 1)
/// P − 1 transfers in sequence, two at a time on the channel
algorithm seq2(P: int >= 1, m: bytes) = (P - 1) * (2 || L[c0](m, 1))
/// SUMMA iteration 80 of 000 Fig. 8 (sizes in blocks)
algorithm summa80() = (T[c0](134B) + T[c1](158B)) || (T[c0](116B) + T[c1](104B))
    + (T[c1](124B) || T[c1](97B) || T[c1](35B))
"""


@pytest.fixture(autouse=True)
def module_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mod.tlop").write_text(SOURCE)


def load(path):
    return tlop.load(path)


def _args(add, argv):
    p = argparse.ArgumentParser()
    add(p)
    return p.parse_args(argv)


def test_explain_prints_rules_and_result(capsys):
    assert run_explain(_args(add_explain_arguments, ["mod.tlop", "summa80"]), load) == 0
    out = capsys.readouterr().out
    assert "a2-a3-lockstep" in out and "a1-gather" in out
    assert "= 2‖T^c0(116 B) + T^c0(18 B) + 3‖T^c1(35 B) + 2‖T^c1(166 B) + T^c1(81 B)" in out
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
    mod = tlop.load("mod.tlop")
    with pytest.raises(TlopError, match="compares two expressions"):
        parse_claim("seq1(P, m)", mod)
    with pytest.raises(TlopError, match="unknown function, table or algorithm 'nope'") as e:
        parse_claim("nope(P) <= 1us", mod, {"P": "int"})
    assert e.value.span.file == "<claim>" and e.value.span.col == 1
    with pytest.raises(TlopError, match="cannot tell the type of 'k'"):
        parse_claim("seq1(P, m) <= k * 1us", mod)
    with pytest.raises(TlopError, match="unexpected"):
        parse_claim("seq1(P, m) <= seq2(P, m) seq2", mod)


def test_claim_facts_come_from_declarations():
    mod = tlop.load("mod.tlop")
    _, rel, _, ints, facts, types = parse_claim("seq1(P, m) <= seq2(P, m)", mod)
    # byte counts are whole numbers (issue 22 item 2), like ints
    assert rel == "<=" and ints == {"P", "m"} and types == {"P": "int", "m": "bytes"}
    # exactly what binding enforces: P's declared constraint and m's implicit >= 0 (no "P >= 0"
    # for being an int: an int may be negative)
    assert set(facts) == {ir.Bin(">=", ir.Var("P"), ir.Num(1)), ir.Bin(">=", ir.Var("m"), ir.Num(0))}


def test_prove_002_claim_on_the_stdlib(capsys):
    """002: Θ_RDA = 2·Θ′_Sct (the scatter with contention P in every stage) for P a power of two."""
    argv = ["taulop/collectives", "rd_allgather(P, m, S) == 2 * binomial_scatter_bound(P, m, S)",
            "--assume", "P == 8"]
    assert run_prove(_args(add_prove_arguments, argv), tlop.load) == 0
    assert "proved" in capsys.readouterr().out


@pytest.mark.parametrize("powers", [
    "P=4..8:x2",
    pytest.param("P=16..64:x2", marks=pytest.mark.slow),
])
def test_prove_002_claim_for_powers_of_two(capsys, powers):
    """002: Θ_RDA ≥ 2·Θ_Sct for P = 4 … 64, every m and S, under the model axioms.  The default run
    proves P = 4 and 8 (~5 s each); ``-m slow`` adds P = 16, 32 and 64 (same claim, ~5 s each,
    the sums up to 64 terms)."""
    argv = ["taulop/collectives", "rd_allgather(P, m, S) >= 2 * binomial_scatter(P, m, S)",
            "--for", powers, "--timeout", "600"]   # wall clock: generous, for a loaded machine
    assert run_prove(_args(add_prove_arguments, argv), tlop.load) == 0
    n = 2 if powers.startswith("P=4") else 3
    assert f"{n} of {n} instances proved" in capsys.readouterr().out


def test_strict_claim_refuted_by_zero_tables(capsys):
    """Strictly greater fails (e.g. where every transfer costs 0, which the axioms allow): the
    counterexample shows lhs ≤ rhs."""
    argv = ["taulop/collectives", "rd_allgather(P, m, S) > 2 * binomial_scatter(P, m, S)", "--for", "P=8"]
    assert run_prove(_args(add_prove_arguments, argv), tlop.load) == 1
    out = capsys.readouterr().out
    assert "refuted" in out
    got = re.search(r"lhs = (\S+), rhs = (\S+)", out)
    assert got and float(got.group(1)) <= float(got.group(2)), out


def test_explain_times_passes_and_dumps_ir(capsys):
    argv = ["mod.tlop", "summa80", "--time-passes", "--dump-after", "parcomp"]
    assert run_explain(_args(add_explain_arguments, argv), load) == 0
    out = capsys.readouterr().out
    assert out.count("-- pass ") == 3 and "-- IR after parcomp: " in out and "ParComp" not in out.split("-- IR after parcomp")[1].splitlines()[1]
    with pytest.raises(TlopError, match="no such pass"):
        run_explain(_args(add_explain_arguments, ["mod.tlop", "summa80", "--dump-after", "nope"]), load)


def test_each_proof_starts_in_a_fresh_z3_context():
    """Z3's search depends on its context's history (the same instance of the 002 claim took 5 s
    alone and 113 s after two others in one process): every proof gets a context of its own."""
    import z3
    from tlop.analysis.prove import prove_relation

    mod = tlop.load("mod.tlop")
    lhs, rel, rhs, ints, facts, _ = parse_claim("seq1(P, m) <= seq2(P, m)", mod)
    before = z3.main_ctx()
    z3.Real("left over from an earlier proof")
    assert prove_relation(lhs, rel, rhs, mod.program, assume=facts, int_vars=ints).ok
    after = z3.main_ctx()
    assert after is not before
    assert prove_relation(lhs, rel, rhs, mod.program, assume=facts, int_vars=ints).ok
    assert z3.main_ctx() is not after
