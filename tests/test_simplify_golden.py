"""Golden simplifications from 000 (eq. 5, 8, 9, 10) and the binomial broadcast, with
translation validation of each."""

from pathlib import Path

import pytest

from tlop import ir
from tlop.backends.notation import format_text
from tlop.analysis.prove import validate, simplify_validated
from tlop.analysis.simplify import DEFAULT_FAMILIES, simplify

from _tlop_fixtures_rules import B, N, V, pc, program, xm
from conftest import check_golden

GOLDEN = Path(__file__).parent / "golden" / "rules"
PROG = program()
POS = (B(">", V("ma"), N(0)), B(">", V("mb"), N(0)))

PBC = pc([xm(0, 134), xm(1, 158)], [xm(0, 116), xm(1, 104)])
PBR = pc([xm(1, 124)], [xm(1, 97)], [xm(1, 35)])
CASES = {
    "eq5_equal_sizes": (pc([xm(0, V("ma")), xm(1, V("mb"))], [xm(0, V("ma")), xm(1, V("mb"))]), POS),
    "eq8_summa_pbc": (PBC, ()),
    "eq9_summa_pbr": (PBR, ()),
    "eq10_summa_k80": (B("+", PBC, PBR), ()),
    "binomial_bcast": (ir.Reduce("sum", "i", N(0), B("-", ir.Fn("ceil", (ir.Fn("log2", (V("P"),)),)), N(1)),
                                 ir.Conc(B("^", N(2), V("i")), ir.Transmit("T", N(0), V("m")))), ()),
}


def _golden(name, text, update):
    check_golden(GOLDEN / (name + ".txt"), text + "\n", update)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name, update_golden):
    e, assume = CASES[name]
    r = simplify(e, PROG, assume=assume)
    _golden(name, format_text(r.expr, PROG), update_golden)
    assert validate(e, r.expr, PROG, assume=assume).ok


def test_paper_forms():
    e, assume = CASES["eq5_equal_sizes"]
    assert format_text(simplify(e, PROG, assume=assume).expr, PROG) == "2‖T^c0(ma) + 2‖T^c1(mb)"
    eq10 = format_text(simplify(CASES["eq10_summa_k80"][0], PROG).expr, PROG)
    assert set(eq10.split(" + ")) == {"3‖T^c1(35)", "2‖T^c1(166)", "T^c1(81)", "2‖T^c0(116)", "T^c0(18)"}
    eq9 = format_text(simplify(PBR, PROG).expr, PROG)
    assert eq9 == "3‖T^c1(35) + 2‖T^c1(62) + T^c1(27)"


def test_a1_can_be_switched_off():
    r = simplify(CASES["eq10_summa_k80"][0], PROG, families=DEFAULT_FAMILIES - {"A1"})
    text = format_text(r.expr, PROG)
    assert "2‖T^c1(104)" in text and "2‖T^c1(62)" in text and "166" not in text
    assert not any(s.rule.startswith("a1") for s in r.steps)


def test_a2_off_keeps_parallel_composition():
    r = simplify(PBR, PROG, families=DEFAULT_FAMILIES - {"A2"})
    assert isinstance(r.expr, ir.ParComp)


def test_deterministic_and_idempotent():
    e = CASES["eq10_summa_k80"][0]
    a, b = simplify(e, PROG).expr, simplify(e, PROG).expr
    assert a == b
    assert simplify(a, PROG).expr == a


def test_unknown_order_is_left_alone():
    e = pc([xm(1, V("p"))], [xm(1, V("q"))])
    r = simplify(e, PROG, assume=(B(">", V("p"), N(0)), B(">", V("q"), N(0))))
    assert isinstance(r.expr, ir.ParComp)
    r = simplify(e, PROG, assume=(B(">", V("p"), N(0)), B(">", V("q"), V("p"))))
    assert format_text(r.expr, PROG) == "2‖T^c1(p) + T^c1(q − p)"


def test_pass_manager_times_and_dumps():
    dumps = []
    r = simplify(CASES["eq10_summa_k80"][0], PROG, dump=lambda n, e: dumps.append(n), dump_after=("all",))
    assert [p.name for p in r.passes] == ["fold", "parcomp", "rewrite"] == dumps
    assert all(p.seconds >= 0 for p in r.passes)
    assert r.passes[-1].nodes_after < r.passes[0].nodes_before


def test_simplify_validated_and_fallback():
    body = B("+", B("*", N(2), ir.Conc(N(3), ir.Lookup("L", N(0), (V("m"), N(1))))), N(0))
    alg = ir.Algorithm("a", (ir.ParamSig("m", "bytes"),), body)
    prog = program(algorithms={"a": alg})
    v = simplify_validated(prog, alg)
    assert v.outcome.ok and not v.fell_back
    assert format_text(v.expr, prog) == "2·L^c0(m, 3)"


def test_validation_refutes_a_wrong_simplification():
    e = CASES["eq9_summa_pbr"][0]
    wrong = B("+", ir.Conc(N(3), ir.Transmit("T", N(1), N(35))), ir.Transmit("T", N(1), N(89)))
    o = validate(e, wrong, PROG)
    assert o.status == "refuted" and o.counterexample is not None
