"""The catalogue of rewrite rules tlop simplifies with, each proved by ``tlop rules --verify``.

What it does: lists every :class:`~tlop.rules.core.Rule` in the order the simplifier tries
them, grouped by family:

* ``arith`` — neutral elements, cancellation, like terms (identities);
* ``fold`` — constant folding, atomic/dead ``let`` bindings (computed identities);
* ``conc`` — the ‖ operator: it distributes over sequence and scaling, nests, acts on transfers
  (``A ‖ L(m,τ) = L(m,A·τ)``) and not on overheads or other pure terms (the IR's semantics);
* ``sum`` — sums of constants, splitting over ``+``, constant factors, geometric sums, empty
  ranges (proved by induction);
* ``minmax`` and ``intfn`` — max/min absorption, ceil/floor of integers, log2/2^x;
* model assumptions ``linearity`` (``L(A·m,τ) = A·L(m,τ)``), ``A1`` (aggregation of a
  sequence on one channel), ``A2`` (same channel, concurrent) and ``A3`` (different channels).

What it does not do: apply the rules (:mod:`tlop.analysis.simplify`) or prove them (:mod:`tlop.analysis.prove`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tlop import ir
from tlop.analysis.rules.computed import fold, let_inline, parcomp_lockstep
from tlop.analysis.rules.core import Rule

__all__ = ["RULES", "rules_by_name", "FAMILIES", "MODEL_FAMILIES", "SCHEMA_TABLES", "INSTANCE_PROGRAM",
           "ASSUMPTIONS", "Assumption", "assumptions_text", "table_assumptions"]

N, V = ir.Num, ir.Var


def B(op, a, b):
    return ir.Bin(op, a, b)


x, y, z, k, A, Bf = V("?x"), V("?y"), V("?z"), V("?k"), V("?A"), V("?B")
a, b, n, m, m1, m2, c, c1, c2, t = (V("?a"), V("?b"), V("?n"), V("?m"), V("?m1"), V("?m2"),
                                    V("?c"), V("?c1"), V("?c2"), V("?t"))
lo, hi = V("?lo"), V("?hi")
f_i, g_i = V("?f_i"), V("?g_i")

#: schematic tables: a transfer table with a τ slot, and an overhead without one
SCHEMA_TABLES = {
    "?L": ir.TableSig("?L", True, ("m", "tau"), 1),
    "?o": ir.TableSig("?o", True, ("m",), None),
}

#: the small τ-Lop program the instances of computed rules live in
INSTANCE_PROGRAM = ir.Program(
    channels=("c0", "c1"),
    tables={"o": ir.TableSig("o", True, ("m",), None), "L": ir.TableSig("L", True, ("m", "tau"), 1)},
    scalars={},
    transmissions={},
    algorithms={},
    model="taulop",
)


def L(ch, size, tau):
    return ir.Lookup("?L", ch, (size, tau))


def T(ch, size):
    return ir.Transmit("?T", ch, size)


def X(ch, size, count=N(1)):
    return ir.Xmit(count, "T", ch, size)


def _r(name, lhs, rhs, vars, **kw):
    return Rule(name, lhs, rhs, vars, **kw)


ANY, PURE, INT, NUM = "any", "pure", "int", "num"

_ARITH = [
    _r("add-zero", B("+", x, N(0)), x, {"?x": ANY}, doc="x + 0 = x"),
    _r("sub-zero", B("-", x, N(0)), x, {"?x": ANY}, doc="x − 0 = x"),
    _r("zero-sub", B("-", N(0), x), ir.Neg(x), {"?x": ANY}, doc="0 − x = −x"),
    _r("sub-self", B("-", x, x), N(0), {"?x": ANY}, doc="x − x = 0"),
    _r("mul-one", B("*", x, N(1)), x, {"?x": ANY}, doc="x · 1 = x"),
    _r("mul-zero", B("*", x, N(0)), N(0), {"?x": ANY}, doc="x · 0 = 0"),
    _r("div-one", B("/", x, N(1)), x, {"?x": ANY}, doc="x / 1 = x"),
    _r("div-self", B("/", x, x), N(1), {"?x": PURE}, conditions=(B("!=", x, N(0)),), doc="x / x = 1 for x ≠ 0"),
    _r("mul-div-cancel", B("/", B("*", x, y), y), x, {"?x": ANY, "?y": PURE},
       conditions=(B("!=", y, N(0)),), doc="(x · y) / y = x for y ≠ 0"),
    _r("pow-one", B("^", x, N(1)), x, {"?x": PURE}, doc="x^1 = x"),
    _r("pow-zero", B("^", x, N(0)), N(1), {"?x": PURE}, doc="x^0 = 1"),
    _r("neg-neg", ir.Neg(ir.Neg(x)), x, {"?x": ANY}, doc="−(−x) = x"),
    _r("add-neg", B("+", x, ir.Neg(y)), B("-", x, y), {"?x": ANY, "?y": ANY}, doc="x + (−y) = x − y"),
    _r("add-sub-cancel", B("+", B("-", x, y), y), x, {"?x": ANY, "?y": ANY}, doc="(x − y) + y = x"),
    _r("gather-coeff", B("+", B("*", a, x), B("*", b, x)), B("*", B("+", a, b), x),
       {"?a": NUM, "?b": NUM, "?x": ANY}, doc="a·x + b·x = (a + b)·x"),
    _r("gather-one", B("+", B("*", a, x), x), B("*", B("+", a, N(1)), x), {"?a": NUM, "?x": ANY},
       doc="a·x + x = (a + 1)·x"),
    _r("gather-twice", B("+", x, x), B("*", N(2), x), {"?x": ANY}, doc="x + x = 2·x"),
    _r("mul-assoc-num", B("*", a, B("*", b, x)), B("*", B("*", a, b), x), {"?a": NUM, "?b": NUM, "?x": ANY},
       doc="a·(b·x) = (a·b)·x"),
]

_FOLD = [
    Rule("fold-const", V("?e"), None, {"?e": ANY}, family="fold", compute=fold,
         doc="an operator or function applied to numerals is replaced by its value; "
             "`if` with a numeral test by its branch",
         instances=(B("+", N(2), N(3)), B("*", N(1.5), N(4)), ir.Fn("log2", (N(64),)), ir.Fn("ceil", (ir.Fn("log2", (N(48),)),)), ir.Fn("floor", (ir.Fn("log2", (N(48),)),)), ir.Fn("ceil", (N(5.5),)),
                    B("^", N(2), N(10)), ir.Fn("max", (N(3), N(7), N(5))), B("%", N(-7), N(3)),
                    ir.Cond(N(1), V("p"), V("q")))),
    Rule("let-inline", V("?e"), None, {"?e": ANY}, family="fold", compute=let_inline,
         doc="let bindings to a numeral or a variable are substituted; unused bindings are dropped",
         instances=(ir.Let((("k", N(4)), ("u", V("q"))), B("*", V("k"), V("p"))),
                    ir.Let((("k", V("p")),), B("+", V("k"), N(1))))),
]

_CONC = [
    _r("conc-one", ir.Conc(N(1), x), x, {"?x": ANY}, family="conc", doc="1 ‖ x = x"),
    _r("conc-overhead", ir.Conc(A, ir.Lookup("?o", c, (m,))), ir.Lookup("?o", c, (m,)),
       {"?A": PURE, "?c": PURE, "?m": PURE}, family="conc", tables=SCHEMA_TABLES,
       doc="A ‖ o^c(m) = o^c(m): concurrency never scales an overhead"),
    _r("conc-pure", ir.Conc(A, k), k, {"?A": PURE, "?k": PURE}, family="conc",
       doc="A ‖ k = k for a term without transfers"),
    _r("conc-transfer", ir.Conc(A, L(c, m, t)), L(c, m, B("*", A, t)),
       {"?A": PURE, "?c": PURE, "?m": PURE, "?t": PURE}, family="conc", tables=SCHEMA_TABLES,
       doc="A ‖ L^c(m, τ) = L^c(m, A·τ)"),
    _r("conc-seq", ir.Conc(A, B("+", x, y)), B("+", ir.Conc(A, x), ir.Conc(A, y)),
       {"?A": PURE, "?x": ANY, "?y": ANY}, family="conc", doc="A ‖ (x + y) = A ‖ x + A ‖ y"),
    _r("conc-sub", ir.Conc(A, B("-", x, y)), B("-", ir.Conc(A, x), ir.Conc(A, y)),
       {"?A": PURE, "?x": ANY, "?y": ANY}, family="conc", doc="A ‖ (x − y) = A ‖ x − A ‖ y"),
    _r("conc-scale", ir.Conc(A, B("*", k, x)), B("*", k, ir.Conc(A, x)),
       {"?A": PURE, "?k": PURE, "?x": ANY}, family="conc", doc="A ‖ (k·x) = k·(A ‖ x) for pure k"),
    _r("conc-nest", ir.Conc(A, ir.Conc(Bf, x)), ir.Conc(B("*", A, Bf), x),
       {"?A": PURE, "?B": PURE, "?x": ANY}, family="conc", doc="A ‖ (B ‖ x) = (A·B) ‖ x"),
    _r("conc-max", ir.Conc(A, ir.Fn("max", (x, y))), ir.Fn("max", (ir.Conc(A, x), ir.Conc(A, y))),
       {"?A": PURE, "?x": ANY, "?y": ANY}, family="conc", doc="A ‖ max{x, y} = max{A ‖ x, A ‖ y}"),
]


def S(lo_, hi_, body):
    return ir.Reduce("sum", "i", lo_, hi_, body)


_SUM = [
    _r("sum-empty", S(lo, hi, f_i), N(0), {"?lo": INT, "?hi": INT, "?f_i": ANY},
       conditions=(B("<", hi, lo),), family="sum", doc="Σ over an empty range is 0"),
    _r("sum-const", S(lo, hi, k), B("*", B("+", B("-", hi, lo), N(1)), k),
       {"?lo": INT, "?hi": INT, "?k": ANY}, conditions=(B(">=", hi, B("-", lo, N(1))),),
       family="sum", induction=("?hi", B("-", lo, N(1))),
       doc="Σ_{i=lo}^{hi} k = (hi − lo + 1)·k for hi ≥ lo − 1"),
    _r("sum-split", S(lo, hi, B("+", f_i, g_i)), B("+", S(lo, hi, f_i), S(lo, hi, g_i)),
       {"?lo": INT, "?hi": INT, "?f_i": ANY, "?g_i": ANY}, conditions=(B(">=", hi, B("-", lo, N(1))),),
       family="sum", induction=("?hi", B("-", lo, N(1))),
       keep_reason={0: "an empty range makes both sides 0, so the condition only fixes the induction's "
                       "domain; the rule holds without it"},
       doc="Σ (f + g) = Σ f + Σ g"),
    _r("sum-factor", S(lo, hi, B("*", k, f_i)), B("*", k, S(lo, hi, f_i)),
       {"?lo": INT, "?hi": INT, "?k": PURE, "?f_i": ANY}, conditions=(B(">=", hi, B("-", lo, N(1))),),
       family="sum", induction=("?hi", B("-", lo, N(1))),
       keep_reason={0: "an empty range makes both sides 0, so the condition only fixes the induction's "
                       "domain; the rule holds without it"},
       doc="Σ k·f = k·Σ f for k independent of the index"),
    _r("sum-geometric", S(N(0), B("-", n, N(1)), B("^", N(2), V("i"))), B("-", B("^", N(2), n), N(1)),
       {"?n": INT}, conditions=(B(">=", n, N(0)),), family="sum", induction=("?n", N(0)),
       doc="Σ_{i=0}^{n−1} 2^i = 2^n − 1 for n ≥ 0"),
]

_MINMAX = [
    _r("max-idem", ir.Fn("max", (x, x)), x, {"?x": ANY}, family="minmax", doc="max{x, x} = x"),
    _r("min-idem", ir.Fn("min", (x, x)), x, {"?x": ANY}, family="minmax", doc="min{x, x} = x"),
    _r("max-left", ir.Fn("max", (x, y)), x, {"?x": PURE, "?y": PURE}, conditions=(B(">=", x, y),),
       family="minmax", doc="max{x, y} = x when x ≥ y"),
    _r("max-right", ir.Fn("max", (x, y)), y, {"?x": PURE, "?y": PURE}, conditions=(B(">=", y, x),),
       family="minmax", doc="max{x, y} = y when y ≥ x"),
    _r("min-left", ir.Fn("min", (x, y)), x, {"?x": PURE, "?y": PURE}, conditions=(B("<=", x, y),),
       family="minmax", doc="min{x, y} = x when x ≤ y"),
    _r("min-right", ir.Fn("min", (x, y)), y, {"?x": PURE, "?y": PURE}, conditions=(B("<=", y, x),),
       family="minmax", doc="min{x, y} = y when y ≤ x"),
    _r("max-shift", ir.Fn("max", (B("+", x, k), B("+", y, k))), B("+", ir.Fn("max", (x, y)), k),
       {"?x": ANY, "?y": ANY, "?k": ANY}, family="minmax", doc="max{x + k, y + k} = max{x, y} + k"),
]

_INTFN = [
    _r("ceil-int", ir.Fn("ceil", (n,)), n, {"?n": INT}, family="intfn", doc="⌈n⌉ = n for integer n"),
    _r("floor-int", ir.Fn("floor", (n,)), n, {"?n": INT}, family="intfn", doc="⌊n⌋ = n for integer n"),
    _r("log2-pow2", ir.Fn("log2", (B("^", N(2), x),)), x, {"?x": PURE}, family="intfn", doc="log2 2^x = x"),
    _r("pow2-log2", B("^", N(2), ir.Fn("log2", (x,))), x, {"?x": PURE}, conditions=(B(">", x, N(0)),),
       family="intfn", doc="2^(log2 x) = x for x > 0"),
    _r("abs-nonneg", ir.Fn("abs", (x,)), x, {"?x": PURE}, conditions=(B(">=", x, N(0)),),
       family="intfn", doc="|x| = x for x ≥ 0"),
    _r("ceil-add-int", ir.Fn("ceil", (B("+", x, n),)), B("+", ir.Fn("ceil", (x,)), n),
       {"?x": PURE, "?n": INT}, family="intfn", doc="⌈x + n⌉ = ⌈x⌉ + n for integer n"),
    _r("floor-add-int", ir.Fn("floor", (B("+", x, n),)), B("+", ir.Fn("floor", (x,)), n),
       {"?x": PURE, "?n": INT}, family="intfn", doc="⌊x + n⌋ = ⌊x⌋ + n for integer n"),
]

_LINEARITY = [
    _r("lin-scale", L(c, B("*", a, m), t), B("*", a, L(c, m, t)),
       {"?a": NUM, "?c": PURE, "?m": PURE, "?t": PURE}, kind="model", family="linearity",
       axioms=("linearity",), tables=SCHEMA_TABLES, doc="L(a·m, τ) = a·L(m, τ)"),
    _r("lin-gather", B("+", L(c, m1, t), L(c, m2, t)), L(c, B("+", m1, m2), t),
       {"?c": PURE, "?m1": PURE, "?m2": PURE, "?t": PURE}, kind="model", family="linearity",
       axioms=("linearity",), tables=SCHEMA_TABLES, doc="L(m1, τ) + L(m2, τ) = L(m1 + m2, τ)"),
]

_A1 = [
    _r("a1-gather", B("+", ir.Conc(A, T(c, m1)), ir.Conc(A, T(c, m2))), ir.Conc(A, T(c, B("+", m1, m2))),
       {"?A": PURE, "?c": PURE, "?m1": PURE, "?m2": PURE}, kind="model", family="A1", axioms=("A1",),
       doc="A ‖ T^c(m1) + A ‖ T^c(m2) = A ‖ T^c(m1 + m2)"),
    _r("a1-gather-plain", B("+", T(c, m1), T(c, m2)), T(c, B("+", m1, m2)),
       {"?c": PURE, "?m1": PURE, "?m2": PURE}, kind="model", family="A1", axioms=("A1",),
       doc="T^c(m1) + T^c(m2) = T^c(m1 + m2)"),
]


def _pc(*ops):
    return ir.ParComp(tuple(tuple(op) for op in ops))


def PX(ch, size, count=N(1)):
    return ir.Xmit(count, "?T", ch, size)


_A2A3 = [
    _r("a2-equal", _pc([PX(c, m)], [PX(c, m)]), ir.Conc(N(2), T(c, m)), {"?c": PURE, "?m": PURE},
       conditions=(B(">", m, N(0)),), kind="model", family="A2", axioms=("A2",),
       doc="T^c(m) ‖ T^c(m) = 2 ‖ T^c(m) for m > 0"),
    _r("a2-pair", _pc([PX(c, m1)], [PX(c, m2)]), B("+", ir.Conc(N(2), T(c, m1)), T(c, B("-", m2, m1))),
       {"?c": PURE, "?m1": PURE, "?m2": PURE}, conditions=(B(">", m1, N(0)), B(">", m2, m1)),
       kind="model", family="A2", axioms=("A2",),
       doc="T^c(m1) ‖ T^c(m2) = 2 ‖ T^c(m1) + T^c(m2 − m1) for 0 < m1 < m2"),
    _r("a3-pair", _pc([PX(c1, m1)], [PX(c2, m2)]), ir.Fn("max", (T(c1, m1), T(c2, m2))),
       {"?c1": PURE, "?c2": PURE, "?m1": PURE, "?m2": PURE},
       conditions=(B("!=", c1, c2), B(">", m1, N(0)), B(">", m2, N(0))), kind="model", family="A3",
       axioms=("A3",), doc="T^c1(m1) ‖ T^c2(m2) = max{T^c1(m1), T^c2(m2)} for c1 ≠ c2"),
    Rule("a2-a3-lockstep", V("?e"), None, {"?e": ANY}, kind="model", family="A2", axioms=("A2", "A3"),
         compute=parcomp_lockstep,
         doc="x1 ‖ … ‖ xk of transmission sequences = Σ over lock-step phases of max over channels (A3) "
             "of the sorted n-ary A2 form n‖T(m1) + (n−1)‖T(m2 − m1) + … + T(mn − m(n−1))",
         instances=(
             _pc([X(N(0), N(134)), X(N(1), N(158))], [X(N(0), N(116)), X(N(1), N(104))]),
             _pc([X(N(1), N(124))], [X(N(1), N(97))], [X(N(1), N(35))]),
             _pc([X(N(0), V("ma")), X(N(1), V("mb"))], [X(N(0), V("ma")), X(N(1), V("mb"))]),
             _pc([X(N(0), N(10), N(2))], [X(N(1), N(30))], [X(N(0), N(4))]),
         )),
]

RULES: tuple = tuple(_FOLD + _ARITH + _CONC + _SUM + _MINMAX + _INTFN + _LINEARITY + _A1 + _A2A3)

#: every family name, and the model-assumption families a user may switch off
FAMILIES = tuple(dict.fromkeys(r.family for r in RULES))
MODEL_FAMILIES = ("linearity", "A1", "A2", "A3")


def rules_by_name() -> dict:
    return {r.name: r for r in RULES}


# ----------------------------------------------------------------------------- model assumptions

@dataclass(frozen=True)
class Assumption:
    """A model assumption a rewrite or a proof may rest on.

    ``semantic`` assumptions are how every tlop engine evaluates the IR (A2 and A3 *define* the
    cost of ``‖``), so a result resting on them still equals the original cost on every
    profile.  The others are axioms of the τ-Lop model about the measured tables, not theorems
    about them: a result resting on one is equal only on tables that satisfy it (``tlop show
    --verify --profile X`` checks a profile's tables)."""
    name: str
    short: str       # what ``show`` and ``prove`` print after the name
    statement: str
    semantic: bool = False


ASSUMPTIONS = {a.name: a for a in (
    Assumption("linearity", "L linear in m", "L(a·m, τ) = a·L(m, τ)"),
    Assumption("A1", "T additive in m on one channel", "A ‖ T^c(m1) + A ‖ T^c(m2) = A ‖ T^c(m1 + m2)"),
    Assumption("A2", "one channel shared by concurrent transmissions",
               "n‖T(m1) + (n−1)‖T(m2 − m1) + … for sizes m1 ≤ … ≤ mn", semantic=True),
    Assumption("A3", "different channels do not interfere", "T^c1(m1) ‖ T^c2(m2) = max{…}", semantic=True),
    Assumption("nonneg", "tables and transmissions ≥ 0", "L(m, τ) ≥ 0, o(m) ≥ 0, T(m) ≥ 0"),
    Assumption("params", "time parameters ≥ 0",
               "L ≥ 0, o ≥ 0, g ≥ 0, G ≥ 0: a profile's scalar parameters of type time or time per byte"),
    Assumption("monotone", "tables grow with τ, transmissions with their concurrency",
               "L(m, τ) ≤ L(m, A·τ) ≤ A·L(m, τ) for A ≥ 1; A ‖ T(m) ≤ B ‖ T(m) for A ≤ B"),
)}


def table_assumptions(names) -> tuple:
    """The assumptions among ``names`` that are about the tables (not the semantics of ``‖``),
    in the order of :data:`ASSUMPTIONS`."""
    names = set(names)
    return tuple(n for n, a in ASSUMPTIONS.items() if n in names and not a.semantic)


def assumptions_text(names) -> str:
    """``assuming A1 (T additive in m on one channel)`` for the table assumptions among
    ``names``, or ``no model assumption``."""
    used = table_assumptions(names)
    if not used:
        return "no model assumption"
    return "assuming " + ", ".join(f"{n} ({ASSUMPTIONS[n].short})" for n in used)
