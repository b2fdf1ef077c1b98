"""Reduction congruence in the Z3 encoding (tlop.analysis.smt.Encoder._same_reduction): two
reductions with symbolic bounds share one uninterpreted function only when their bodies are
proved equal at every index — reordered sums are proved equal symbolically, different bodies
never are (no false proof), nested reductions included."""

import pytest

import tlop
from tlop.analysis import smt_facts
from tlop.analysis.prove import validate

SRC = '''
import "taulop/platform.tlop"
algorithm a(n: int >= 0, x: real, y: real) = (sum i in 0 .. n: (x + i) * 1s) + 0s
algorithm a_reordered(n: int >= 0, x: real, y: real) = (sum i in 0 .. n: (i + x) * 1s) + 0s
algorithm a_renamed(n: int >= 0, x: real, y: real) = (sum j in 0 .. n: (j + x) * 1s) + 0s
algorithm a_shifted(n: int >= 0, x: real, y: real) = (sum i in 0 .. n: (x + i + 1) * 1s) + 0s
algorithm a_other_var(n: int >= 0, x: real, y: real) = (sum i in 0 .. n: (y + i) * 1s) + 0s
algorithm a_max(n: int >= 0, x: real, y: real) = (max i in 0 .. n: (i + x) * 1s) + 0s
algorithm nested(n: int >= 0, x: real, y: real) =
    max p in 0 .. n: sum q in 0 .. n: (if q != p then T[net]((x + q * p) * 1B) else 0s)
algorithm nested_reordered(n: int >= 0, x: real, y: real) =
    max p in 0 .. n: sum q in 0 .. n: (if p != q then T[net]((p * q + x) * 1B) else 0s)
algorithm nested_wrong(n: int >= 0, x: real, y: real) =
    max p in 0 .. n: sum q in 0 .. n: (if p != q then T[net]((p * q + x + 1) * 1B) else 0s)
'''


@pytest.fixture(scope="module")
def prog():
    return tlop.loads(SRC, "congruence.tlop").program


def _check(prog, x, y, **kw):
    return validate(prog.algorithms[x].body, prog.algorithms[y].body, prog, int_vars=("n",), **kw)


@pytest.mark.parametrize("other", ["a_reordered", "a_renamed"])
def test_reordered_bodies_are_proved_symbolically(prog, other):
    out = _check(prog, "a", other)
    assert out.ok and out.mode == "symbolic", out


def test_nested_reordered_reductions_are_proved_symbolically(prog):
    out = _check(prog, "nested", "nested_reordered")
    assert out.ok and out.mode == "symbolic", out


@pytest.mark.parametrize("x,y", [("a", "a_shifted"), ("a", "a_other_var"), ("a", "a_max"),
                                 ("nested", "nested_wrong")])
def test_different_bodies_are_never_identified(prog, x, y):
    """Not equal: the symbolic encoding must not prove them (bounded unrolling refutes them)."""
    out = _check(prog, x, y, bound=3)
    assert not out.ok, out
    assert ("abstract", "proved") not in out.obligations


def test_without_congruence_the_reordered_sum_is_not_proved_symbolically(prog, monkeypatch):
    """What the rule adds: with no sub-proof allowed, the two sums are distinct functions and only
    bounded unrolling can compare them."""
    monkeypatch.setattr(smt_facts, "CONGRUENCE_ATTEMPTS", 0)
    out = _check(prog, "a", "a_reordered")
    assert ("abstract", "proved") not in out.obligations
