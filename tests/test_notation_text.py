"""Paper notation in text and LaTeX."""

from tlop import ir
from tlop.backends.notation import Formula, format_latex, format_text

from _tlop_fixtures_rules import B, N, V, pc, program, xm

PROG = program(channels=("shm", "net"))
BCAST = ir.Reduce("sum", "i", N(0), B("-", ir.Fn("ceil", (ir.Fn("log2", (V("P"),)),)), N(1)),
                  ir.Conc(B("^", N(2), V("i")), ir.Transmit("T", N(0), V("m"))))


def test_binomial_broadcast_text_and_latex():
    assert format_text(BCAST, PROG) == "Σ_{i=0}^{⌈log2 P⌉−1} 2^i ‖ T^shm(m)"
    assert format_latex(BCAST, PROG) == (
        "\\sum_{i=0}^{\\lceil \\log_2 P \\rceil - 1} 2^{i} \\parallel T^{\\mathrm{shm}}(m)")


def test_precedence_and_parentheses():
    assert format_text(B("-", V("a"), B("-", V("b"), V("c")))) == "a − (b − c)"
    assert format_text(B("-", B("-", V("a"), V("b")), V("c"))) == "a − b − c"
    assert format_text(B("*", B("+", V("a"), V("b")), V("c"))) == "(a + b)·c"
    assert format_text(ir.Conc(N(2), B("+", ir.Transmit("T", N(0), V("m")), ir.Lookup("o", N(1), (V("m"),)))),
                       PROG) == "2‖[T^shm(m) + o^net(m)]"
    s = ir.Reduce("sum", "i", N(1), V("n"), V("i"))
    assert format_text(B("+", s, N(1))) == "(Σ_{i=1}^{n} i) + 1"


def test_parallel_composition_and_functions():
    e = pc([xm(0, V("ma")), xm(1, V("mb"))], [xm(0, V("mc"), 2)])
    assert format_text(e, PROG) == "[T^shm(ma) + T^net(mb)] ‖ (2‖T^shm(mc))"
    assert format_text(ir.Fn("max", (V("a"), ir.Fn("floor", (B("/", V("m"), V("S")),))))) == "max{a, ⌊m/S⌋}"
    assert format_latex(B("/", V("m"), V("S"))) == "\\frac{m}{S}"
    assert format_text(N(116.0)) == "116" and format_text(N(0.25)) == "0.25"


def test_formula_repr_latex():
    f = Formula(BCAST, PROG)
    assert str(f).startswith("Σ") and f._repr_latex_().startswith("$\\sum")
