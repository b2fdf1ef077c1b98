"""The simplifier's fallback path (``tlop show --verify``, :func:`tlop.analysis.prove.simplify_validated`):
when translation validation does not prove the simplified body equal to the original — refuted,
or unknown — the original body is used, ``fell_back`` says so, and the outcome is kept."""

import dataclasses

import pytest

import tlop
from tlop import ir
from tlop.analysis import simplify
from tlop.analysis.prove import simplify_validated
from tlop.backends.interp import Interpreter

MOD = tlop.loads('''import "taulop/platform.tlop"
algorithm twice(m: bytes) = T[shm](m) + T[shm](m)
''', "fallback.tlop")


@pytest.fixture
def wrong_simplifier(monkeypatch):
    """A simplifier with a bug: its result costs one second more than the original."""
    run = simplify.PassManager.run

    def buggy(self, e):
        res = run(self, e)
        return dataclasses.replace(res, expr=ir.Bin("+", res.expr, ir.Num(1.0, ty=res.expr.ty), ty=res.expr.ty))

    monkeypatch.setattr(simplify.PassManager, "run", buggy)


def test_a_refuted_simplification_falls_back_to_the_original(wrong_simplifier):
    alg = MOD.program.algorithms["twice"]
    v = simplify_validated(MOD.program, alg)
    assert v.fell_back and v.outcome.status == "refuted" and v.outcome.counterexample is not None
    assert v.expr is alg.body and v.result.expr != alg.body  # what the simplifier said is kept, not used
    prof = tlop.load_profile("metropolis")
    assert Interpreter(MOD.program, prof).eval(v.expr, {"m": 4096.0}) == \
        Interpreter(MOD.program, prof).eval(alg.body, {"m": 4096.0})


def test_an_unknown_outcome_falls_back_too(monkeypatch):
    from tlop.analysis import prove

    monkeypatch.setattr(prove, "validate", lambda *a, **k: prove.Outcome("unknown", detail="timeout"))
    alg = MOD.program.algorithms["twice"]
    v = simplify_validated(MOD.program, alg)
    assert v.result.expr != alg.body  # the simplifier did change it (2‖… or 2·…)
    assert v.fell_back and v.expr is alg.body and v.outcome.status == "unknown"


def test_a_proved_simplification_is_used():
    alg = MOD.program.algorithms["twice"]
    v = simplify_validated(MOD.program, alg)
    assert not v.fell_back and v.outcome.ok and v.expr == v.result.expr != alg.body
