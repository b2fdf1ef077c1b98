"""A ``‖`` chain of many transmissions (issue 22 item 12): ``T‖T‖…‖T`` of 1,500 terms evaluates
and shows as ``1500‖T``, and the expansion of a phase asks each question once per pair of
*distinct* expressions — with the same result as asking it for every pair of items.

bench/bench_parallel_chain.py prints the growth (linear: 1,500 terms took 18 s to evaluate and
29 s to show before)."""

import math

import pytest
from hypothesis import given, settings, strategies as st

import tlop
from tlop.cli.main import main
from tlop.ir import nodes as ir
from tlop.ir.taulop import expand

PLATFORM = """model taulop
channel shm within node contention node
table o[c: channel](m: bytes) -> time
table L[c: channel](m: bytes, tau: int) -> time
transmission T[shm](m) = o[shm](m) + L[shm](m,1)
"""
N = 1500


def count_decisions(monkeypatch) -> dict:
    """``{"n": …}``: how many channel and size questions the ‖ expansion's decider is asked from
    now on (monkeypatched for the test)."""
    calls = {"n": 0}
    real = expand._Decider._decide

    def counting(self, cond):
        calls["n"] += 1
        return real(self, cond)

    monkeypatch.setattr(expand._Decider, "_decide", counting)
    return calls


def test_a_long_chain_evaluates_and_shows_as_one_term(tmp_path, capsys, monkeypatch):
    calls = count_decisions(monkeypatch)
    chain = tlop.loads(PLATFORM + "algorithm a(m: bytes) = " + " || ".join(["T[shm](m)"] * N))
    one = tlop.loads(PLATFORM + f"algorithm a(m: bytes) = {N} || T[shm](m)")
    with pytest.warns(UserWarning, match="tau = 1500"):                  # τ = 1500 is past the table
        got = chain["a"].evaluate("metropolis", m=1024.0)
    with pytest.warns(UserWarning, match="tau = 1500"):
        assert got == one["a"].evaluate("metropolis", m=1024.0)
    assert math.isfinite(got) and got > 0
    assert calls["n"] <= 10, calls      # one channel question, one order question, one sign: not n²
    f = tmp_path / "chain.tlop"
    f.write_text(PLATFORM + "algorithm a(m: bytes) = " + " || ".join(["T[shm](m)"] * N) + "\n")
    assert main(["show", str(f), "a"]) == 0
    assert f"{N}‖T^shm(m)" in capsys.readouterr().out


# --- the per-class decisions agree with the per-pair ones ------------------------------------

_CHANNELS = [ir.Var("shm"), ir.Var("net"), ir.Var("c")]
_SIZES = [ir.Num(0.0), ir.Num(1.0), ir.Num(5.0), ir.Num(-2.0), ir.Var("m"), ir.Var("k"),
          ir.Bin("*", ir.Num(2.0), ir.Var("m")), ir.Bin("+", ir.Var("m"), ir.Var("m"))]
_COUNTS = [ir.Num(1.0), ir.Num(2.0), ir.Num(0.5), ir.Var("w"), ir.Num(3.0)]


def _decide(cond):
    """A partial decision procedure: shm and net are distinct channels, m >= 0, and 2·m equals
    m + m (decided ≤ but not <: the order of equal sizes then depends on the items' places)."""
    if not isinstance(cond, ir.Bin):
        return None
    names = {getattr(x, "name", None) for x in (cond.lhs, cond.rhs)}
    if cond.op == "==" and names <= {"shm", "net"}:
        return cond.lhs == cond.rhs
    if cond.op == ">=" and cond.lhs == ir.Var("m") and cond.rhs == ir.Num(0.0):
        return True
    if {cond.lhs, cond.rhs} == {_SIZES[6], _SIZES[7]}:
        return cond.op in ("<=", ">=", "==")
    return None


_item = st.builds(lambda w, n, c, m: ir.Xmit(w, n, c, m), st.sampled_from(_COUNTS), st.sampled_from(["T", "U"]),
                  st.sampled_from(_CHANNELS), st.sampled_from(_SIZES))
_parcomp = st.lists(st.lists(_item, min_size=1, max_size=3).map(tuple), min_size=1, max_size=8).map(
    lambda ops: ir.ParComp(tuple(ops)))


def _per_pair(monkeypatch):
    """Every item its own class and every weight sum folded one by one: the pairwise expansion."""
    monkeypatch.setattr(expand, "_classes", lambda exprs: (
        list(range(len(exprs))), list(range(len(exprs))), [None] * len(exprs), list(range(len(exprs)))))
    monkeypatch.setattr(expand, "_integer_suffix_sums", lambda ws: None)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(pc=_parcomp, decided=st.booleans(), zero_size_free=st.booleans(), share=st.booleans())
def test_per_class_decisions_give_the_pairwise_expansion(pc, decided, zero_size_free, share):
    kw = dict(zero_size_free=zero_size_free, share=share)
    fast = expand.expand_parcomp(pc, _decide if decided else None, **kw)
    with pytest.MonkeyPatch.context() as mp:
        _per_pair(mp)
        slow = expand.expand_parcomp(pc, _decide if decided else None, **kw)
    assert repr(fast) == repr(slow)


def test_the_pairwise_reference_is_what_the_test_compares_with(monkeypatch):
    """The monkeypatched reference really is another path: a one-class chain of 6 items puts 15
    channel and 15 order questions to the decider there, one of each here (so the property above
    cannot pass by comparing a path with itself)."""
    pc = ir.ParComp(tuple((ir.Xmit(ir.Num(1.0), "T", ir.Var("shm"), ir.Var("m")),) for _ in range(6)))
    asked = []
    real = expand._Decider.__call__
    monkeypatch.setattr(expand._Decider, "__call__", lambda self, c: asked.append(c) or real(self, c))
    expand.expand_parcomp(pc)
    fast = len(asked)
    asked.clear()
    with pytest.MonkeyPatch.context() as mp:
        _per_pair(mp)
        expand.expand_parcomp(pc)
    assert fast <= 4 and len(asked) >= 30, (fast, len(asked))


def test_integer_suffix_sums_fold_as_the_left_fold_does():
    ws = [ir.Num(1.0), ir.Num(-0.0), ir.Num(3.0), ir.Num(2.0)]
    assert [w.value for w in expand._integer_suffix_sums(ws)] == [6.0, 5.0, 5.0, 2.0]
    assert expand._integer_suffix_sums(ws)[-1] is ws[-1]
    assert expand._integer_suffix_sums([ir.Num(0.5), ir.Num(1.0)]) is None     # not exact in any order
    assert expand._integer_suffix_sums([ir.Var("w"), ir.Num(1.0)]) is None
    assert expand._integer_suffix_sums([ir.Num(2.0 ** 53), ir.Num(1.0)]) is None
