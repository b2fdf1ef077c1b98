"""Names shared by the parts of elaboration: the types of environment entries, the IR
constants of the language (γ, the exchange variable) and small helpers over AST and IR.

What it does not do: walk a program (the parts of :mod:`tlop.frontend.elaborate` do).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from tlop.frontend import ast as A
from tlop import ir
from tlop.ir import types as T
from tlop.ir.types import Type
from tlop.runtime.suggest import close

TYPES = ("int", "real", "bytes", "time", "channel", "bool", "cost")
#: the platform table ``reduce p : m`` reads: the cost γ(m) of reducing m bytes
GAMMA = "gamma"
#: the loop variable of an exchange lowered for a dataflow model (no source name can clash)
EXCHANGE_VAR = "%x"
ERR = T.ERROR


class _Local:
    """A variable in an elaboration environment (a parameter, a ``let`` name or an index):
    each use of it lowers to an :class:`ir.Var` of its own span.  Environments map a name to
    ``(LOCAL, type)`` or ``(a _PerRank, type)``."""

    __slots__ = ()


LOCAL = _Local()


class _PerRank:
    """A per-rank parameter in an elaboration environment (``counts: bytes[P]``): only
    ``counts[r]`` reads it (:class:`tlop.ir.PerRankArg`); the bare name is an error."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


@dataclass
class _DefInfo:
    decl: A.Decl
    params: tuple  # ((name, Type), ...)
    result: Optional[Type] = None
    body: Optional[ir.Expr] = None
    defaults: dict = field(default_factory=dict)  # name -> closed IR
    state: str = "new"  # new | busy | done
    exploded: bool = False  # its body expanded past the size limit (reported once, there)
    env: Optional[dict] = None  # the parameters' environment (_Elaborator._param_env)
    per_rank: bool = False  # a parameter is declared per rank (``counts: bytes[P]``)


def _is_zero(e: A.Expr) -> bool:
    """A plain ``0``: a zero of any dimension."""
    return isinstance(e, A.Number) and e.value == 0 and e.unit == ""


def _zero(t: Type, span) -> ir.Num:
    return ir.Num(0.0, span=span, ty=t)


#: AST expression class -> the _Elaborator method that lowers it (``_Number`` for ``A.Number`` …)
_EXPR_RULES: dict = {}
#: the binary operators whose operands have one dimension (a plain ``0`` fits either side)
_SAME_DIMENSION_OPS = frozenset(("+", "-", "%") + ir.COMPARE_OPS)
#: the typing rule of each binary operator other than the arithmetic ones (:func:`T.arith`)
_BINARY_RULES = {**{op: T.logic for op in ir.LOGIC_OPS}, **{op: T.integer_op for op in ir.INT_OPS},
                 **{op: T.compare for op in ir.COMPARE_OPS}}


def _constant(e: A.Expr):
    """The value of a constant exponent written in the source (a plain number, possibly
    negated), else None."""
    sign = 1
    while isinstance(e, A.Unary) and e.op == "-":
        sign, e = -sign, e.operand
    if isinstance(e, A.Number) and e.unit == "":
        from fractions import Fraction
        return sign * Fraction(e.value)
    return None


def _xmit_sequence(node: ir.Expr):
    """A cost expression as a tuple of Xmit items, if it is a sequence of (A ‖) transmissions."""
    if isinstance(node, ir.Transmit):
        return (ir.Xmit(ir.Num(1.0, ty=T.INT), node.name, node.channel, node.size, span=node.span, ty=T.TIME),)
    if isinstance(node, ir.Conc):
        inner = _xmit_sequence(node.body)
        if inner is None:
            return None
        return tuple(ir.Xmit(_mul(node.factor, x.count), x.name, x.channel, x.size, span=x.span, ty=T.TIME)
                     for x in inner)
    if isinstance(node, ir.Bin) and node.op == "+":
        a, b = _xmit_sequence(node.lhs), _xmit_sequence(node.rhs)
        if a is None or b is None:
            return None
        return a + b
    return None


def _mul(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Num) and b.value == 1.0:
        return a
    return ir.Bin("*", a, b, ty=a.ty * b.ty)


def _edit_keys(name: str) -> set:
    """The keys under which the "did you mean" index files a name: its lower case and its
    one-character deletions (names at most one edit apart, or equal ignoring case, share one)."""
    low = name.lower()
    return {low} | {low[:i] + low[i + 1:] for i in range(len(low))}


#: the language's 'did you mean' test (one edit apart, or equal ignoring case): the command line's too
_close = close
