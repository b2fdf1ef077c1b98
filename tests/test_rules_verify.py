"""Every rule of the catalogue is proved with Z3; side conditions are needed; unsound rules are
refuted with a readable counterexample."""

import argparse

import pytest

from tlop import ir
from tlop.analysis.prove import condition_needed, verify_rule
from tlop.analysis.rules import RULES, Rule
from tlop.cli.rules import add_rules_arguments, run_rules

N, V = ir.Num, ir.Var


def test_catalogue_is_large_and_well_formed():
    assert len([r for r in RULES if r.compute is None]) >= 30
    assert len({r.name for r in RULES}) == len(RULES)
    kinds = {r.kind for r in RULES}
    assert kinds == {"identity", "model"}
    for r in RULES:
        if r.kind == "model":
            assert r.axioms, r.name


def test_every_rule_is_proved():
    failures = []
    for r in RULES:
        o = verify_rule(r)
        if not o.ok:
            failures.append((r.name, o.status, o.obligations))
    assert not failures


def test_rules_declare_exactly_the_model_assumptions_their_proofs_need():
    """An identity needs no model assumption (not even tables ≥ 0); a linearity or A1 rule needs
    its own; A2/A3 rules need none (the encoding of ‖ is the semantics every engine uses)."""
    from tlop.analysis.rules.catalogue import table_assumptions
    for r in RULES:
        if r.compute is not None or r.induction is not None:
            continue
        o = verify_rule(r)
        assert o.ok and o.assumptions == table_assumptions(r.axioms), (r.name, o.assumptions, r.axioms)


def test_an_identity_that_needs_nonnegative_tables_is_caught():
    L = ir.Lookup("?L", V("?c"), (V("?m"), V("?t")))
    r = Rule("max-table-zero", ir.Fn("max", (L, N(0))), L, {"?c": "pure", "?m": "pure", "?t": "pure"},
             tables={"?L": ir.TableSig("?L", True, ("m", "tau"), 1)}, family="minmax")
    o = verify_rule(r)
    assert o.ok and o.assumptions == ("nonneg",)


def test_every_side_condition_is_needed_or_explained():
    unexplained = []
    for r in RULES:
        for i in range(len(r.conditions)):
            if i in r.keep_reason:
                assert len(r.keep_reason[i]) > 20
                continue
            o = condition_needed(r, i)
            if o.status != "refuted" or o.counterexample is None:
                unexplained.append((r.name, i, o.status))
    assert not unexplained


def test_induction_has_separate_obligations():
    geo = next(r for r in RULES if r.name == "sum-geometric")
    o = verify_rule(geo)
    assert o.ok and o.mode == "induction"
    assert [n for n, _ in o.obligations] == ["domain", "base", "step"]


def test_unsound_identity_is_refuted_with_counterexample():
    bad = Rule("bad-drop", ir.Bin("+", V("?x"), V("?y")), V("?x"), {"?x": "pure", "?y": "pure"})
    o = verify_rule(bad)
    assert o.status == "refuted"
    text = o.counterexample.render()
    assert "x = " in text and "y = " in text and "lhs = " in text and "rhs = " in text
    assert o.counterexample.values["y"] != 0


def test_a1_without_its_axiom_is_refuted():
    a1 = next(r for r in RULES if r.name == "a1-gather-plain")
    unsound = Rule("a1-no-axiom", a1.lhs, a1.rhs, a1.vars, kind="model", family="A1", axioms=("A2",))
    assert verify_rule(unsound).status == "refuted"


def test_wrong_geometric_sum_is_refuted():
    s = ir.Reduce("sum", "i", N(0), ir.Bin("-", V("?n"), N(1)), ir.Bin("^", N(2), V("i")))
    wrong = Rule("geo-wrong", s, ir.Bin("^", N(2), V("?n")), {"?n": "int"},
                 conditions=(ir.Bin(">=", V("?n"), N(0)),), family="sum", induction=("?n", N(0)))
    assert verify_rule(wrong).status == "refuted"


def test_cli_verify(capsys):
    p = argparse.ArgumentParser()
    add_rules_arguments(p)
    assert run_rules(p.parse_args(["--verify", "--family", "A2"])) == 0
    out = capsys.readouterr().out
    assert "a2-pair" in out and "ms" in out and "rules proved" in out
    assert run_rules(p.parse_args([])) == 0
    assert "sum-geometric" in capsys.readouterr().out
