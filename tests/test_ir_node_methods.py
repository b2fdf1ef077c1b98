"""The IR classes get a frozen dataclass's methods from a generated, checked-in module
(tlop/ir/_node_methods.py, made by tlop.ir.nodes.methods_source): it is current, and the
methods behave as ``@dataclass(frozen=True)``'s do."""

import dataclasses
import pickle
from pathlib import Path

import pytest

import tlop.ir.nodes as N


def test_the_generated_module_is_current():
    path = Path(N.__file__).with_name("_node_methods.py")
    assert path.read_text() == N.methods_source(), \
        "regenerate: python -c 'from tlop.ir.nodes import write_methods; write_methods()'"


def test_the_methods_are_a_frozen_dataclass_s():
    e = N.Bin("+", N.Num(1.0, span=(1, 2)), N.Var("x", ty="t"))
    assert repr(e) == "Bin(op='+', lhs=Num(value=1.0), rhs=Var(name='x'))"
    same = N.Bin("+", N.Num(1.0), N.Var("x"))  # span and type are not compared
    assert e == same and hash(e) == hash(same) and e != N.Bin("-", N.Num(1.0), N.Var("x"))
    assert N.Num(1.0) != N.Var("x") and N.Num(1.0).__eq__(1.0) is NotImplemented
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'op'"):
        e.op = "-"
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'op'"):
        del e.op
    r = dataclasses.replace(e, op="*")
    assert r.op == "*" and r.lhs.span == (1, 2) and r.span is None
    assert pickle.loads(pickle.dumps(e)) == e
    assert N.Num.__init__.__qualname__ == "Num.__init__"
    p = N.Program((), {}, {}, {}, {})
    q = N.Program((), {}, {}, {}, {})
    assert p.channel_info == {} and p.channel_info is not q.channel_info and p.model == ""
    with pytest.raises(TypeError):
        N.Num(1.0, None)  # span is keyword-only, as the dataclass declared it
    for cls in N._FROZEN:
        assert dataclasses.is_dataclass(cls) and [f.name for f in dataclasses.fields(cls)]
