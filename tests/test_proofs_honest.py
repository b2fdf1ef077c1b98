"""Proofs never overclaim (issue 8, items 4 and 5).

* Facts about parameters are exactly what argument binding enforces: an ``int`` may be
  negative, a ``bytes`` parameter with its own constraint has only that one, a ``def``'s
  constraint is no fact.
* Model assumptions (A1, linearity, table axioms) are named wherever a result rests on them —
  ``show``, ``show --verify``, ``prove``, ``explain`` — and ``show --profile X`` checks the
  rewritten cost against the original on the profile's actual tables.
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tlop
from tlop import ir
from tlop.analysis.agreement import check_on_profile
from tlop.analysis.prove import prove_relation, simplify_validated, validate
from tlop.analysis.simplify import DEFAULT_FAMILIES, PassManager, context_for
from tlop.analysis.smt import ModelAxioms
from tlop.backends.binding import bind_arguments
from tlop.backends.interp import Interpreter
from tlop.cli.main import main
from tlop.ir.facts import param_facts
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.profile import load_profile

from conftest import check_golden, synthetic_profile

HERE = Path(__file__).parent / "golden" / "proofs"
NONNEG = str(HERE / "nonneg.tlop")
A1 = str(HERE / "a1.tlop")
from tlop.ir.types import TIME  # noqa: E402

N, V = ir.Num, ir.Var


def _golden(name, text, update):
    check_golden(HERE / f"{name}.txt", text, update)


def _run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr().out
    return rc, re.sub(r"in \d+\.\d+ s", "in <t> s", out)  # proof times vary


# ----------------------------------------------------------------------------- item 4: facts

def test_int_is_not_assumed_non_negative():
    """``max(k, 0)·1s`` for ``k: int`` stays ``max{k, 0}``: at k = −1 it is 0, not −1."""
    m = tlop.load(NONNEG)
    alg = m.program.algorithms["g"]
    v = simplify_validated(m.program, alg)
    interp = Interpreter(m.program, None)
    for k in (-3.0, -1.0, 0.0, 2.0):
        assert interp.eval(v.expr, {"k": k}) == interp.eval(alg.body, {"k": k}) == max(k, 0.0)
    assert v.expr != V("k")


def test_declared_constraint_is_a_fact():
    m = tlop.load(NONNEG)
    res = PassManager(context_for(m.program, m.program.algorithms["n"])).run(m.program.algorithms["n"].body)
    # max(k, 0)·1s is k·1s: the 1s stays, it makes the int k a time
    assert res.expr == ir.Bin("*", N(1.0), V("k")) and res.expr.lhs.ty == TIME


def test_bytes_with_own_constraint_has_only_that_one():
    """``m: bytes < 64B`` accepts m = −1 at binding; the simplifier must not assume m ≥ 0."""
    m = tlop.load(NONNEG)
    h, b = m.program.algorithms["h"], m.program.algorithms["b"]
    assert bind_arguments(m.program, h, {"m": -1.0}) == {"m": -1.0}
    interp = Interpreter(m.program, None)
    got = PassManager(context_for(m.program, h)).run(h.body).expr
    assert interp.eval(got, {"m": -1.0}) == interp.eval(h.body, {"m": -1.0}) == 0.0
    got_b = PassManager(context_for(m.program, b)).run(b.body).expr
    # implicit m >= 0: max(m, 0B) is m; the ``/ 1B`` stays, since it turns bytes into a number
    assert not any(isinstance(n, ir.Fn) and n.name == "max" for n in ir.walk(got_b))
    # and the 1s stays too: without it the result would be a plain number, not a time
    assert got_b == ir.Bin("*", N(1.0), ir.Bin("/", V("m"), N(1.0))) and got_b.lhs.ty == TIME


def test_prove_considers_negative_ints(capsys):
    """``f(k) = if k >= 0 then 1s else 2s``: ``f(k) <= 1s`` is false at any negative k."""
    rc, out = _run(["prove", NONNEG, "f(k) <= 1s"], capsys)
    assert rc == 1 and out.startswith("refuted: f(k) <= 1s")
    k = float(re.search(r"k = (\S+)", out).group(1))
    assert k < 0


def test_prove_ignores_def_constraints(capsys):
    """A def's declared constraint is not enforced when it is inlined: no fact."""
    rc, out = _run(["prove", NONNEG, "a(k) >= 1s"], capsys)
    assert rc == 1 and "refuted" in out
    rc, out = _run(["prove", NONNEG, "n(k) >= 0s"], capsys)  # n's constraint is enforced
    assert rc == 0 and out.startswith("proved")


def test_show_nonneg_golden(capsys, update_golden):
    rc, out = _run(["show", NONNEG, "--verify"], capsys)
    assert rc == 0
    _golden("show_nonneg_verified", out, update_golden)


def test_facts_of_channel_parameters():
    prog = ir.Program(("a", "b", "c"), {}, {}, {}, {}, "taulop")
    ints, facts = param_facts((ir.ParamSig("ch", "channel"),), prog)
    assert ints == {"ch"}
    assert set(facts) == {ir.Bin(">=", V("ch"), N(0)), ir.Bin("<", V("ch"), N(3))}


_TYPES = ("int", "real", "bytes", "time", "channel")
_OPS = ("<", "<=", ">", ">=", "==", "!=")


@st.composite
def _param_and_value(draw):
    ptype = draw(st.sampled_from(_TYPES))
    constraint = None
    if ptype != "channel" and draw(st.booleans()):
        constraint = (draw(st.sampled_from(_OPS)), N(float(draw(st.integers(-3, 3)))))
    elif ptype in ("bytes", "time"):
        constraint = (">=", N(0.0))  # what the front end gives an unconstrained size or time
    value = draw(st.one_of(st.integers(-4, 4).map(float), st.sampled_from([-0.5, 0.5, 2.5])))
    return ir.ParamSig("x", ptype, None, constraint), value


@settings(max_examples=300, deadline=None)
@given(_param_and_value())
def test_facts_are_exactly_what_binding_enforces(pv):
    """Binding accepts a value iff every fact holds and an integer parameter gets an integer."""
    p, value = pv
    prog = ir.Program(("c0", "c1"), {}, {}, {}, {}, "taulop")
    alg = ir.Algorithm("f", (p,), N(0))
    ints, facts = param_facts((p,), prog)
    interp = Interpreter(prog, None)
    holds = all(interp.eval(f, {"x": value}) != 0 for f in facts) and \
        ("x" not in ints or float(value).is_integer())
    try:
        bind_arguments(prog, alg, {"x": value})
        accepted = True
    except TlopError:
        accepted = False
    assert accepted == holds, (p, value, facts)


# ----------------------------------------------------------------------------- item 5: assumptions

def test_show_and_verify_name_assumptions_golden(capsys, update_golden):
    rc, out = _run(["show", A1], capsys)
    assert rc == 0
    _golden("show_a1", out, update_golden)
    rc, out = _run(["show", A1, "--verify"], capsys)
    assert rc == 0
    _golden("show_a1_verified", out, update_golden)


def test_show_profile_reports_disagreement_golden(capsys, update_golden):
    """On metropolis T(a) + T(b) ≠ T(a + b): ``--verify --profile`` says so, with the point."""
    rc, out = _run(["show", A1, "--verify", "--profile", "metropolis"], capsys)
    assert rc == 1
    assert "DISAGREES on metropolis at a = " in out and "validated: symbolic, assuming A1" in out
    _golden("show_a1_metropolis", out, update_golden)
    rc, out = _run(["show", A1, "--verify", "--profile", "metropolis", "--no", "A1", "--no", "linearity"], capsys)
    assert rc == 0 and "DISAGREES" not in out and "agrees on metropolis" in out
    _golden("show_a1_metropolis_no_a1", out, update_golden)


def test_prove_names_assumptions_golden(capsys, update_golden):
    lines = []
    for claim in ("s(a, b) == s(a + b, 0B)", "twice(a) == 2 * T[shm](a)", "s(a, b) >= 0s",
                  "lin(a, b) == L[shm](a + b, 1)"):
        rc, out = _run(["prove", A1, claim], capsys)
        assert rc == 0, out
        lines.append(out)
    text = "".join(lines)
    assert "assuming A1 (T additive in m on one channel): s(a, b) == s(a + b, 0B)" in text
    assert "no model assumption: twice(a) == 2 * T[shm](a)" in text
    _golden("prove_assumptions", text, update_golden)
    rc, out = _run(["prove", A1, "s(a, b) == s(a + b, 0B)", "--no", "A1"], capsys)
    assert rc == 1 and "refuted" in out


def test_explain_says_what_the_result_rests_on(capsys):
    from types import SimpleNamespace
    from tlop.cli.rules import run_explain
    args = SimpleNamespace(file=A1, algorithm="s", no=[], assume=[], latex=False, time_passes=False, dump_after=[])
    assert run_explain(args, tlop.load) == 0
    out = capsys.readouterr().out
    assert "model assumptions used: A1" in out
    assert "only on tables satisfying A1 (T additive in m on one channel)" in out


def test_validate_reports_the_assumptions_the_proof_needs():
    prog = tlop.load(A1).program
    T = lambda s: ir.Transmit("T", N(0), s)  # noqa: E731
    a, b = V("a"), V("b")
    o = validate(ir.Bin("+", T(a), T(b)), T(ir.Bin("+", a, b)), prog)
    assert o.ok and o.assumptions == ("A1",)
    o = validate(ir.Bin("+", T(a), T(a)), ir.Bin("*", N(2), T(a)), prog)
    assert o.ok and o.assumptions == ()
    o = validate(ir.Bin("+", T(a), T(b)), T(ir.Bin("+", a, b)), prog, axioms=ModelAxioms(a1=False))
    assert not o.ok
    o = prove_relation(T(a), ">=", N(0), prog)
    assert o.ok and o.assumptions == ("nonneg",)


def _linear_profile():
    """A τ-Lop profile whose tables are exactly linear in m: T(a) + T(b) = T(a + b) holds."""
    m = [1.0, 1024.0, 1048576.0]
    return synthetic_profile("linear", tables={
        "o": {"shm": {"m": m, "values": [1e-9 * x for x in m]}},
        "L": {"shm": {"m": m, "tau": [1, 2, 4], "values": [[2e-9 * x * t for t in (1, 2, 4)] for x in m]}},
    })


def test_profile_check_agrees_on_linear_tables_and_not_on_metropolis():
    m = tlop.load(A1)
    alg = m.program.algorithms["s"]
    rewritten = PassManager(context_for(m.program, alg)).run(alg.body).expr
    ok = check_on_profile(m.program, alg, rewritten, _linear_profile())
    assert ok.ok and ok.points > 0 and ok.max_rel <= 1e-9, ok.render()
    bad = check_on_profile(m.program, alg, rewritten, load_profile("metropolis"))
    assert not bad.ok and bad.max_rel > 0.1
    interp = Interpreter(m.program, load_profile("metropolis"))
    at = bad.worst_values
    assert bad.original == pytest.approx(interp.eval(alg.body, at), rel=1e-12)
    assert bad.rewritten == pytest.approx(interp.eval(rewritten, at), rel=1e-12)
    assert "DISAGREES on metropolis at a = " in bad.render()


def test_profile_check_reports_a_one_sided_failure():
    """A rewrite that fails where the original evaluates is a disagreement, with the point."""
    prog = ir.Program(("shm",), {}, {}, {}, {}, "taulop")
    alg = ir.Algorithm("f", (ir.ParamSig("k", "int"),), ir.Fn("max", (V("k"), N(0))))
    bad = ir.Reduce("max", "i", N(1), V("k"), V("i"))  # empty range for k < 1
    out = check_on_profile(prog, alg, bad, _linear_profile())
    assert not out.ok and "the rewritten cost fails" in out.failure
    assert out.worst_values["k"] < 1


def test_profile_grid_respects_constraints_and_includes_negative_ints():
    from tlop.analysis.agreement import grid_values
    prof = load_profile("metropolis")
    prog = tlop.load(A1).program
    k = grid_values(ir.ParamSig("k", "int"), prog, prof, [1.0, 64.0], [1.0, 2.0, 8.0], 12)
    assert min(k) < 0 and all(float(v).is_integer() for v in k)
    p = grid_values(ir.ParamSig("P", "int", None, (">=", N(2))), prog, prof, [], [1.0, 8.0], 12)
    assert min(p) == 2
    m = grid_values(ir.ParamSig("m", "bytes", None, (">=", N(0))), prog, prof, [1.0, 64.0, 4096.0], [], 12)
    assert min(m) == 0 and 4096.0 in m and np.all(np.asarray(m) >= 0)
