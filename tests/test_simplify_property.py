"""Property: the interpreter gives the same value before and after simplification (1e-12
relative) on hypothesis-generated IR and random tables that satisfy the axioms."""

import math

from hypothesis import HealthCheck, given, settings, strategies as st

from tlop import ir
from tlop.backends.interp import Interpreter
from tlop.analysis.simplify import DEFAULT_FAMILIES, simplify

from _tlop_fixtures_rules import B, FakeProfile, N, V, program

PROG = program()
#: points where both sides are compared: P an integer, sizes any reals, all within the facts
envs = st.fixed_dictionaries({"P": st.integers(1, 12).map(float), "m": st.floats(1.0, 100.0),
                              "q": st.floats(1.0, 100.0)})
FACTS = (B(">=", V("P"), N(1)), B(">=", V("m"), N(1)), B(">=", V("q"), N(1)))

leaf = st.one_of(st.sampled_from([N(0), N(1), N(2), N(3), N(0.5)]), st.sampled_from([V("P"), V("m"), V("q")]))
size = st.one_of(st.integers(1, 50).map(lambda v: N(v)), st.sampled_from([V("m"), V("q")]))
xmit = st.builds(lambda c, s, k: ir.Transmit("T", N(c), s) if k == 1 else ir.Conc(N(k), ir.Transmit("T", N(c), s)),
                 st.integers(0, 1), size, st.integers(1, 3))
item = st.builds(lambda c, s, k: ir.Xmit(N(k), "T", N(c), s), st.integers(0, 1), st.integers(1, 40).map(N),
                 st.integers(1, 2))
parcomp = st.lists(st.lists(item, min_size=1, max_size=2), min_size=1, max_size=3).map(
    lambda ops: ir.ParComp(tuple(tuple(o) for o in ops)))
lookup = st.builds(lambda c, s, t: ir.Lookup("L", N(c), (s, N(t))), st.integers(0, 1), size, st.integers(1, 4))
base = st.one_of(leaf, xmit, parcomp, lookup)


def extend(children):
    return st.one_of(
        st.builds(lambda op, a, b: B(op, a, b), st.sampled_from(["+", "-", "*"]), children, children),
        st.builds(lambda k, x: ir.Conc(N(k), x), st.integers(1, 4), children),
        st.builds(lambda a, b: ir.Fn("max", (a, b)), children, children),
        st.builds(lambda x: ir.Reduce("sum", "i", N(0), B("-", V("P"), N(2)), B("+", x, B("^", N(2), V("i")))),
                  children),
        st.builds(lambda x: ir.Fn("ceil", (ir.Fn("log2", (x,)),)), st.sampled_from([V("P"), N(48), N(64)])),
    )


terms = st.recursive(base, extend, max_leaves=8)


def _close(a, b):
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300) or (math.isnan(a) and math.isnan(b))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(terms, st.integers(0, 1000), envs)
def test_linear_tables_all_families(e, seed, env):
    """Linear tables satisfy every axiom including A1 and linearity: every family is on."""
    interp = Interpreter(PROG, FakeProfile(seed, linear=True))
    r = simplify(e, PROG, assume=FACTS, int_vars={"P"})
    assert _close(interp.eval(e, env), interp.eval(r.expr, env)), (e, r.expr, env)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(terms, st.integers(0, 1000), envs)
def test_affine_tables_without_a1_and_linearity(e, seed, env):
    """Tables with a latency break A1 and linearity: with those families off the simplifier
    must still agree with the interpreter."""
    interp = Interpreter(PROG, FakeProfile(seed, linear=False))
    fams = DEFAULT_FAMILIES - {"A1", "linearity"}
    r = simplify(e, PROG, assume=FACTS, int_vars={"P"}, families=fams)
    assert _close(interp.eval(e, env), interp.eval(r.expr, env)), (e, r.expr, env)
