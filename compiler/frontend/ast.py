"""The .tlop abstract syntax tree: small frozen dataclasses with source spans.

Each node's docstring shows the syntax it comes from.  Children are tuples; the ``span`` is kept
out of equality so that a printed-and-re-parsed module compares equal to the original.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Optional

from tlop.runtime.diagnostics import Span


def _setstate(self, state) -> None:
    """Fields from a pickle: a dict of fields or the list of field values that a slotted
    dataclass's own ``__getstate__`` gives (``copy``, ``pickle``)."""
    names = [f.name for f in fields(self)]
    if isinstance(state, dict):
        if not set(state) <= set(names):
            raise TypeError(f"{type(self).__name__} has no field {sorted(set(state) - set(names))[0]!r}")
        items = state.items()
    elif len(state) != len(names):
        raise TypeError(f"{type(self).__name__} has {len(names)} fields, the state {len(state)}")
    else:
        items = zip(names, state)
    for name, value in items:
        object.__setattr__(self, name, value)


def _node(cls):
    """A frozen dataclass with ``__slots__``: no ``__dict__`` per node (a file of 10⁵
    declarations has about four million nodes and spans), fields read and set through slots."""
    cls = dataclass(frozen=True, slots=True)(cls)
    cls.__setstate__ = _setstate
    return cls


def _span():
    return field(default=None, compare=False, repr=False, kw_only=True)


@_node
class Node:
    """Base of every AST node."""


# ----------------------------------------------------------------------------- expressions

@_node
class Expr(Node):
    """Base of expressions."""


@_node
class Number(Expr):
    """``42``, ``1.5``, ``64KiB``, ``1e6B``, ``2us``: a value with an optional unit suffix."""
    value: float
    unit: str = ""
    span: Optional[Span] = _span()


@_node
class Name(Expr):
    """``P``, ``shm``: a parameter, let-name, index, channel, or zero-argument reference."""
    id: str
    span: Optional[Span] = _span()


@_node
class Indexed(Expr):
    """``alpha[c]``: a channel-indexed scalar parameter."""
    id: str
    channel: Expr
    span: Optional[Span] = _span()


@_node
class ConfigAccess(Expr):
    """``partition.x[p]`` (a value per process) or ``partition.N`` (one value): a field of a
    ``config`` declaration."""
    config: str
    field: str
    index: Optional[Expr] = None
    span: Optional[Span] = _span()


@_node
class Arg(Node):
    """``e`` or ``name = e`` in a call."""
    name: Optional[str]
    value: Expr
    span: Optional[Span] = _span()


@_node
class Call(Expr):
    """``f(a, b)``, ``T[c](m)``, ``L[shm](m, 1)``, ``binomial_bcast(P, m, c = net)``."""
    callee: str
    channel: Optional[Expr]
    args: tuple
    span: Optional[Span] = _span()
    callee_span: Optional[Span] = _span()


@_node
class Unary(Expr):
    """``-e`` or ``not e``."""
    op: str
    operand: Expr
    span: Optional[Span] = _span()


@_node
class Binary(Expr):
    """``a op b`` with op one of ``+ - * / % ^ || < <= > >= == != and or``."""
    op: str
    lhs: Expr
    rhs: Expr
    span: Optional[Span] = _span()
    op_span: Optional[Span] = _span()


@_node
class LetIn(Expr):
    """``let x = e in body``."""
    name: str
    value: Expr
    body: Expr
    span: Optional[Span] = _span()
    name_span: Optional[Span] = _span()


@_node
class IfThen(Expr):
    """``if test then a else b``."""
    test: Expr
    then: Expr
    otherwise: Expr
    span: Optional[Span] = _span()


@_node
class Reduction(Expr):
    """``sum i in lo .. hi: body`` (also ``max``/``min``); bounds are inclusive."""
    kind: str
    var: str
    lo: Expr
    hi: Expr
    body: Expr
    span: Optional[Span] = _span()
    var_span: Optional[Span] = _span()


# ----------------------------------------------------------------------------- schedules

@_node
class Stage(Expr):
    """``stage { item … }``: one concurrent set of sequences (a time)."""
    items: tuple
    span: Optional[Span] = _span()


@_node
class Stages(Expr):
    """``stages k in lo .. hi { item … }``: the sum over ``k`` of ``stage { item … }``."""
    var: str
    lo: Expr
    hi: Expr
    items: tuple
    span: Optional[Span] = _span()
    var_span: Optional[Span] = _span()


@_node
class Item(Node):
    """Base of the items of a stage."""


@_node
class LoopItem(Item):
    """``par p in lo .. hi where cond: item`` (``kind`` ``par``) or ``seq q in …`` (``seq``);
    ``where`` is None when absent."""
    kind: str
    var: str
    lo: Expr
    hi: Expr
    where: Optional[Expr]
    body: Item
    span: Optional[Span] = _span()
    var_span: Optional[Span] = _span()


@_node
class SendItem(Item):
    """``send src -> dst : size`` or ``send src -> dst : size weight w``."""
    src: Expr
    dst: Expr
    size: Expr
    weight: Optional[Expr] = None
    span: Optional[Span] = _span()


@_node
class ExchangeItem(Item):
    """``exchange a <-> b : size`` or ``exchange a <-> b : size combine``: ranks a and b swap
    ``size`` bytes (an MPI_Sendrecv between the pair); with ``combine`` each then reduces what
    it received (γ(size))."""
    a: Expr
    b: Expr
    size: Expr
    combine: bool = False
    span: Optional[Span] = _span()


@_node
class ComputeItem(Item):
    """``compute rank : cost`` (``kind`` ``compute``, a time) or ``reduce rank : size``
    (``kind`` ``reduce``: the platform's γ(size))."""
    kind: str
    rank: Expr
    amount: Expr
    span: Optional[Span] = _span()


@_node
class BlockItem(Item):
    """``{ item … }``: the items one after another in the current sequence."""
    items: tuple
    span: Optional[Span] = _span()


# ----------------------------------------------------------------------------- declarations

@_node
class TypeRef(Node):
    """``int``, ``real``, ``bytes``, ``time``, ``channel``, ``bool``, ``cost``, or a product or
    quotient of number types such as ``time/bytes``; ``name`` is the spelling without blanks."""
    name: str
    span: Optional[Span] = _span()


@_node
class Param(Node):
    """``P: int >= 1 = 2``: name, type, optional constraint (``op bound``), optional default.
    ``per_rank`` names the process count of a per-rank parameter (``counts: bytes[P]``: one
    value per process, ``per_rank == "P"``), None for a plain one."""
    name: str
    type: TypeRef
    op: Optional[str] = None
    bound: Optional[Expr] = None
    default: Optional[Expr] = None
    span: Optional[Span] = _span()
    constraint_span: Optional[Span] = _span()
    per_rank: Optional[str] = None
    per_rank_span: Optional[Span] = _span()


@_node
class Decl(Node):
    """Base of declarations; ``docs`` are the ``///`` lines before it, without the slashes."""


@_node
class ModelDecl(Decl):
    """``model taulop``."""
    name: str
    docs: tuple = ()
    span: Optional[Span] = _span()


@_node
class ImportDecl(Decl):
    """``import "platform.tlop"``."""
    path: str
    docs: tuple = ()
    span: Optional[Span] = _span()


@_node
class ChannelDecl(Decl):
    """``channel shm``, ``channel shm within node contention node``, ``channel net between nodes
    contention dst_node``: ``placement`` is ``"within"`` (intra-node), ``"between"``
    (inter-node) or None; ``contention`` the key of the transfers that share the channel."""
    name: str
    docs: tuple = ()
    placement: Optional[str] = None
    contention: Optional[str] = None
    span: Optional[Span] = _span()


@_node
class TableDecl(Decl):
    """``table L[c: channel](m: bytes, tau: int) -> time``."""
    name: str
    channel: Optional[Param]
    params: tuple
    result: TypeRef
    docs: tuple = ()
    span: Optional[Span] = _span()


@_node
class ParamDecl(Decl):
    """``param L: time`` or ``param alpha[c: channel]: time``: a scalar profile parameter."""
    name: str
    channel: Optional[Param]
    type: TypeRef
    docs: tuple = ()
    span: Optional[Span] = _span()


@_node
class TransmissionDecl(Decl):
    """``transmission T[net](m) via tcp = o[net](m) + 2 * L[shm](m, 1) + L[net](m, 1)``."""
    name: str
    channel: str
    param: str
    via: Optional[str]
    body: Expr
    docs: tuple = ()
    span: Optional[Span] = _span()
    channel_span: Optional[Span] = _span()


@_node
class DefDecl(Decl):
    """``def half(x: bytes) -> bytes = x / 2``."""
    name: str
    params: tuple
    result: Optional[TypeRef]
    body: Expr
    docs: tuple = ()
    span: Optional[Span] = _span()


@_node
class AlgorithmDecl(Decl):
    """``algorithm binomial_bcast(P: int >= 1, m: bytes, c: channel = shm) = …``; ``over`` is the
    name of the process mapping of ``… over map: mapping = …`` (``"mapping"`` for ``over
    mapping``), None without one; ``requires`` the condition of ``… where COND = …``, None
    without one."""
    name: str
    params: tuple
    result: Optional[TypeRef]
    body: Expr
    docs: tuple = ()
    over: Optional[str] = None
    span: Optional[Span] = _span()
    requires: Optional[Expr] = None


@_node
class ConfigField(Node):
    """``x: int[P]`` (one value per process) or ``N: int`` in a ``config`` declaration."""
    name: str
    type: TypeRef
    per_rank: bool = False
    span: Optional[Span] = _span()


@_node
class ConfigDecl(Decl):
    """``config partition { N: int, x: int[P], y: int[P], w: int[P], h: int[P] }``: a table of
    the configuration an algorithm is evaluated with (docs/configurations.rst)."""
    name: str
    fields: tuple
    docs: tuple = ()
    span: Optional[Span] = _span()


@_node
class Module(Node):
    """One ``.tlop`` file: its declarations in order."""
    decls: tuple
    span: Optional[Span] = _span()


def decl_name(d: Decl) -> Optional[str]:
    """The name a declaration introduces (None for model and import)."""
    return getattr(d, "name", None) if not isinstance(d, ModelDecl) else None


def iter_nodes(node: Any):
    """Every AST node below (and including) ``node``, pre-order."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Node):
            yield n
            for f in n.__dataclass_fields__:
                if f in ("span",) or f.endswith("_span"):
                    continue
                stack.append(getattr(n, f))
        elif isinstance(n, tuple):
            stack.extend(n)
