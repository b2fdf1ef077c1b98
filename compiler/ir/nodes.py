"""The cost IR: the one representation every back end of tlop shares.

The front end lowers a checked ``.tlop`` module to this IR; the reference interpreter
(:mod:`tlop.backends.interp`) defines its meaning; the simplifier, the Z3 encoder and the LLVM code
generator all read and write it.  It is deliberately small:

* every node is a frozen, hashable dataclass; children are tuples; ``span`` (where the node
  came from in a ``.tlop`` file) is kept out of equality and hashing;
* user ``def`` functions and algorithm-to-algorithm calls are already inlined by lowering
  (through :class:`Let`, whose bindings are simultaneous, so no capture can happen);
* channel names are already resolved to channel *indices* (``Num``), so a channel-valued
  expression is an ordinary number that indexes :attr:`Program.channels`.

Numbers
    All values are real (IEEE double in the interpreter and the JIT).  Integer-typed values are
    exact integers below 2**53.  Times are seconds, sizes are bytes.

Semantics of the τ-Lop nodes (000 §3, 002 §3; see docs/semantics):

``Lookup(table, channel, args)``
    The value of a profile table.  If the table has a concurrency slot (its declared parameter
    named ``tau``; :attr:`TableSig.tau_index`) the value of that argument is multiplied by the
    *concurrency factor* in force, which starts at 1.  This is ``A ‖ L(m, τ) = L(m, A·τ)``.
``Conc(factor, body)``
    ``factor ‖ body``: evaluates ``body`` with the concurrency factor multiplied by ``factor``.
    Overheads (tables without a ``tau`` slot) are untouched: ``2‖[o(m) + 2L(m,1)] = o(m) + 2L(m,2)``.
``Transmit(name, channel, size)``
    One transmission ``T^c(m)``: the body of the transmission declaration for that channel, with
    its parameter bound to ``size``.  When a channel has several decompositions (``via tcp``,
    ``via rdma``) the platform profile's channel says which one applies.
``ParComp(operands)``
    Parallel composition ``x1 ‖ x2 ‖ …`` of *transmission sequences*.  Every operand is a tuple
    of :class:`Xmit` items (a transmission with a multiplicity, ``A ‖ T^c(m)``).  Operands run
    in lock step: phase ``k`` is the ``k``-th item of every operand that has one.  Inside a phase
    the items are grouped by channel (whatever their names); on one channel, with sizes sorted
    ``m1 ≤ … ≤ mn`` and multiplicities ``w1 … wn``, A2 gives ``Σ_j (w_j + … + w_n) ‖ X_j(m_j −
    m_{j−1})`` with ``m_0 = 0``, ``X_j`` item j's own transmission and increments ``≤ 0`` dropped;
    across channels A3 gives the maximum.  The cost is the sum over phases.  Defined once, by
    :func:`tlop.ir.taulop.expand_parcomp`, which every engine evaluates.  (000 eq. 6, 8, 9; eq. 7's overlap refinement is not applied, so the
    result is the lock-step upper bound.)

Schedules (docs/semantics.rst, "Schedules"):

``Stage(items)``
    One concurrent set of transfers and computations, a time.  Its items are :class:`Loop`
    (``par``/``seq``), :class:`Send`, :class:`Compute` and :class:`Block` nodes, typed
    :data:`tlop.ir.types.ITEM`; they are only valid inside a Stage.  The items at the top of a
    stage are concurrent; ``par`` bindings start concurrent sequences, ``seq`` and blocks
    append to the current sequence.  Phase k of the stage is element k of every sequence; each
    phase is reduced with the τ-Lop reduction (A2 within a contention group, A3 across) of
    :func:`tlop.ir.taulop.reduce_groups`, and the stage costs the sum of its phases.  Channels and
    contention groups come from the process mapping and the platform's channel declarations
    (:attr:`Program.channel_info`).  ``stages k in a .. b {…}`` is ``Reduce("sum", k, a, b,
    Stage(…))``.
``NodeOf(rank)``
    The node the process mapping puts ``rank`` on (an int).
``ConfigRef(config, field, index)``
    ``partition.x[p]``: a value of the evaluation's configuration (:mod:`tlop.runtime.configs`),
    per process (``index`` is the rank) or one for the whole configuration (``index`` None,
    ``partition.N``); an int.

Per-rank arguments (docs/language.rst, "Per-rank parameters"):

``PerRankArg(name, index)``
    ``counts[r]``: element ``index`` of the algorithm's per-rank parameter ``name`` (declared
    ``counts: bytes[P]``, :attr:`ParamSig.per_rank`), of that parameter's type.  Its value is an
    argument, not the mapping's: it needs no process mapping.  The engine's environment binds
    ``name`` to a :class:`tlop.runtime.per_rank.PerRankValues` (never a plain number), and the
    name counts among the node's free variables.

Both read the *process mapping* of the evaluation, which is not a value of the IR: an engine
receives it with the arguments, together with the process count under the reserved name
:data:`RANKS` (``%P``, bound from the algorithm's parameter ``P``).

The declaration classes (:class:`Program`, :class:`Algorithm`, the signatures) are defined in
:mod:`tlop.ir.program` and the frozen-dataclass machinery in :mod:`tlop.ir.frozen`; this module
re-exports both.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Iterator, Optional

from tlop.ir.frozen import (_FROZEN, _GENERATED, _finish_frozen, _frozen, _span_field, _type_field,  # noqa: F401
                             methods_source, write_methods)  # (their old home: re-exported)

__all__ = [
    "Expr", "Num", "Var", "Bin", "Neg", "Not", "Fn", "Cond", "Let", "Reduce", "Lookup",
    "Scalar", "Conc", "Transmit", "Xmit", "ParComp", "Stage", "Loop", "Send", "Compute", "Block", "NodeOf",
    "ConfigRef", "PerRankArg", "SCHEDULE_NODES", "ITEM_NODES", "INT_OPS", "RANKS", "SEND_TRANSMISSION", "ChannelInfo", "binder", "has_schedule", "walk_unique",
    "TableSig", "ScalarSig", "TransmissionVariant", "ParamSig", "Algorithm", "Program",
    "children", "rebuild", "walk", "free_vars", "node_count",
    "ARITH_OPS", "COMPARE_OPS", "LOGIC_OPS", "FUNCTIONS",
]

#: binary arithmetic operators: ``^`` is power, ``%`` is the floored remainder (Python's)
ARITH_OPS = ("+", "-", "*", "/", "^", "%")
#: integer operators (on exact integers; NaN for anything else): ``div`` floored division,
#: ``xor`` and ``&`` bitwise on two's complement, ``<<``/``>>`` shifts by 0 … 63
INT_OPS = ("div", "xor", "&", "<<", ">>")
#: the reserved variable holding the process count of an evaluation with a mapping
RANKS = "%P"
#: the transmission a schedule's send costs: ``T[c](m)`` of the platform, on the send's channel
SEND_TRANSMISSION = "T"
#: comparisons give 1.0 (true) or 0.0 (false)
COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=")
#: logical operators on 0/1 values (any non-zero value is true)
LOGIC_OPS = ("and", "or")
#: built-in functions and their arities (``None``: two or more arguments)
FUNCTIONS = {
    "ceil": 1, "floor": 1, "log2": 1, "abs": 1, "sqrt": 1, "exp": 1, "ln": 1,
    "min": None, "max": None,
}


@_frozen
class Expr:
    """Base class of every IR expression.

    ``ty`` is the node's :class:`~tlop.ir.types.Type` (its dimension), filled in by lowering and
    kept by :func:`rebuild`; like ``span`` it is left out of equality and hashing.  A pass that
    builds new nodes may leave it ``None``: :func:`tlop.ir.typecheck.annotate` fills it in after
    the fact, and :func:`tlop.ir.verify.verify_program` checks every annotation."""
    ty: Any = _type_field()


@_frozen
class Num(Expr):
    """A constant (an integer-valued float for ints and channel indices)."""
    value: float
    span: Any = _span_field()


@_frozen
class Var(Expr):
    """An algorithm parameter, a ``let`` name or a reduction index."""
    name: str
    span: Any = _span_field()


@_frozen
class Bin(Expr):
    """``lhs op rhs`` for op in :data:`ARITH_OPS`, :data:`COMPARE_OPS` or :data:`LOGIC_OPS`."""
    op: str
    lhs: Expr
    rhs: Expr
    span: Any = _span_field()


@_frozen
class Neg(Expr):
    """``-x``."""
    operand: Expr
    span: Any = _span_field()


@_frozen
class Not(Expr):
    """``not x`` (1.0 when x is 0, else 0.0)."""
    operand: Expr
    span: Any = _span_field()


@_frozen
class Fn(Expr):
    """A built-in function of :data:`FUNCTIONS` applied to ``args``."""
    name: str
    args: tuple
    span: Any = _span_field()


@_frozen
class Cond(Expr):
    """``if test then then_ else else_`` (test non-zero means true)."""
    test: Expr
    then_: Expr
    else_: Expr
    span: Any = _span_field()


@_frozen
class Let(Expr):
    """``let x1 = e1, …, xn = en in body``: the ``ei`` are evaluated in the outer scope
    (simultaneous binding), then ``body`` with the names bound."""
    bindings: tuple  # tuple[tuple[str, Expr], ...]
    body: Expr
    span: Any = _span_field()


@_frozen
class Reduce(Expr):
    """``sum|max|min var in lo .. hi: body`` over the integers ``lo … hi`` inclusive.

    An empty range (``hi < lo``) gives 0 for ``sum`` and is an evaluation error for
    ``max``/``min``.  ``lo`` and ``hi`` must be integers (they are rounded with floor/ceil
    nowhere: lowering guarantees int typing)."""
    kind: str  # "sum" | "max" | "min"
    var: str
    lo: Expr
    hi: Expr
    body: Expr
    span: Any = _span_field()


@_frozen
class Lookup(Expr):
    """A profile table's value: ``table[channel](args…)`` (``channel`` is ``None`` for tables
    without a channel index).  See the module docstring for the concurrency slot."""
    table: str
    channel: Optional[Expr]
    args: tuple
    span: Any = _span_field()


@_frozen
class Scalar(Expr):
    """A scalar profile parameter (``param L: time``), optionally indexed by channel."""
    name: str
    channel: Optional[Expr]
    span: Any = _span_field()


@_frozen
class Conc(Expr):
    """``factor ‖ body``: raise the concurrency of every transfer in ``body`` by ``factor``."""
    factor: Expr
    body: Expr
    span: Any = _span_field()


@_frozen
class Transmit(Expr):
    """One transmission ``name^channel(size)``, e.g. ``T[shm](m)``."""
    name: str
    channel: Expr
    size: Expr
    span: Any = _span_field()


@_frozen
class Xmit(Expr):
    """An item of a :class:`ParComp` operand: ``count ‖ name^channel(size)``.  Only valid
    inside a ParComp; ``count`` is the multiplicity (``Num(1)`` for a plain transmission)."""
    count: Expr
    name: str
    channel: Expr
    size: Expr
    span: Any = _span_field()


@_frozen
class ParComp(Expr):
    """``x1 ‖ x2 ‖ …`` of transmission sequences (A2 within a channel, A3 across channels)."""
    operands: tuple  # tuple[tuple[Xmit, ...], ...]
    span: Any = _span_field()


# ----------------------------------------------------------------------------- schedules

@_frozen
class Stage(Expr):
    """One stage of a schedule (a time): concurrent ``items`` (see the module docstring)."""
    items: tuple
    span: Any = _span_field()


@_frozen
class Loop(Expr):
    """``par var in lo .. hi where cond: body`` (``kind == "par"``: each binding for which
    ``where`` holds starts a concurrent sequence) or ``seq …`` (``kind == "seq"``: the bindings
    append ``body`` to the current sequence in order).  ``where`` is ``Num(1)`` (bool) when the
    source has none; ``var`` is bound in ``where`` and ``body``."""
    kind: str  # "par" | "seq"
    var: str
    lo: Expr
    hi: Expr
    where: Expr
    body: Expr
    span: Any = _span_field()


@_frozen
class Send(Expr):
    """``send src -> dst : size weight w``: one transfer (``weight`` is its multiplicity τ0,
    ``Num(1)`` when not written; 2 for a sendrecv-style exchange counted as two transfers).
    ``exchange``: the send is τ-Lop's ``exchange src <-> dst`` (a sendrecv: the same size goes both
    ways); a marker for what runs it (the execution plan), which no cost reads."""
    src: Expr
    dst: Expr
    size: Expr
    weight: Expr
    span: Any = _span_field()
    exchange: bool = field(default=False, kw_only=True)


@_frozen
class Compute(Expr):
    """``compute rank : cost``: a computation of ``cost`` (a time) on ``rank`` (``reduce p : m``
    lowers to ``Compute(p, gamma(m))``).  ``exchange``: the reduction of τ-Lop's ``exchange …
    combine``, which both ranks of the pair perform at once (τ-Lop prices one); a marker for what
    runs it, which no cost reads."""
    rank: Expr
    cost: Expr
    span: Any = _span_field()
    exchange: bool = field(default=False, kw_only=True)


@_frozen
class Block(Expr):
    """``{ item … }``: the items one after another in the current sequence."""
    items: tuple
    span: Any = _span_field()


@_frozen
class NodeOf(Expr):
    """``node(rank)``: the node the evaluation's process mapping puts ``rank`` on."""
    rank: Expr
    span: Any = _span_field()


@_frozen
class ConfigRef(Expr):
    """``config.field`` or ``config.field[index]``: a value of the evaluation's configuration
    (``partition.x[p]``, ``partition.N``), which comes with the process mapping."""
    config: str
    field: str
    index: Optional[Expr] = None
    span: Any = _span_field()


@_frozen
class PerRankArg(Expr):
    """``counts[r]``: rank ``index``'s value of the per-rank parameter ``name``."""
    name: str
    index: Expr
    span: Any = _span_field()


#: the items of a stage (valid only inside a Stage)
ITEM_NODES = (Loop, Send, Compute, Block)
#: every node that needs a process mapping (or a configuration, which is one) to evaluate
SCHEDULE_NODES = (Stage, NodeOf, ConfigRef) + ITEM_NODES


def has_schedule(e: "Expr") -> bool:
    """Whether ``e`` contains a schedule node (a stage or ``node(…)``)."""
    return any(isinstance(n, SCHEDULE_NODES) for n in walk_unique(e))


def binder(e: "Expr"):
    """``(name, first)`` when ``e`` binds the variable ``name`` in its children from index
    ``first`` on (``Reduce``: its body; ``Loop``: its ``where`` and body), else None.  ``Let``
    is not a binder in this sense (its names scope over its body only, see :func:`free_vars`)."""
    if isinstance(e, Reduce):
        return e.var, 2
    if isinstance(e, Loop):
        return e.var, 2
    return None


# ----------------------------------------------------------------------------- generic traversal

def children(e: Expr) -> tuple:
    """The direct sub-expressions of ``e`` in a fixed order (the order :func:`rebuild` takes)."""
    get = _CHILDREN.get(type(e))
    if get is None:  # a subclass of a node class (none in tlop itself) reads like its base
        get = next((f for cls, f in _CHILDREN.items() if isinstance(e, cls)), None)
        if get is None:
            raise TypeError(f"not an IR node: {e!r}")
    return get(e)


#: how to read the children of each node class (keyed by the exact class: one lookup per node
#: instead of a chain of isinstance tests, for the passes that walk every node)
_CHILDREN = {
    Num: lambda e: (),
    Var: lambda e: (),
    Bin: lambda e: (e.lhs, e.rhs),
    Neg: lambda e: (e.operand,),
    Not: lambda e: (e.operand,),
    Fn: lambda e: tuple(e.args),
    Cond: lambda e: (e.test, e.then_, e.else_),
    Let: lambda e: tuple(v for _, v in e.bindings) + (e.body,),
    Reduce: lambda e: (e.lo, e.hi, e.body),
    Lookup: lambda e: ((e.channel,) if e.channel is not None else ()) + tuple(e.args),
    Scalar: lambda e: (e.channel,) if e.channel is not None else (),
    Conc: lambda e: (e.factor, e.body),
    Transmit: lambda e: (e.channel, e.size),
    Xmit: lambda e: (e.count, e.channel, e.size),
    ParComp: lambda e: tuple(x for op in e.operands for x in op),
    Stage: lambda e: tuple(e.items),
    Block: lambda e: tuple(e.items),
    Loop: lambda e: (e.lo, e.hi, e.where, e.body),
    Send: lambda e: (e.src, e.dst, e.size, e.weight),
    Compute: lambda e: (e.rank, e.cost),
    NodeOf: lambda e: (e.rank,),
    ConfigRef: lambda e: (e.index,) if e.index is not None else (),
    PerRankArg: lambda e: (e.index,),
}



def rebuild(e: Expr, kids: tuple) -> Expr:
    """A copy of ``e`` with its children replaced by ``kids`` (same order as :func:`children`).
    Returns ``e`` itself when nothing changed.  The span and the type annotation are kept."""
    old = children(e)
    if len(old) == len(kids) and all(a is b for a, b in zip(old, kids)):
        return e
    kids = tuple(kids)
    out = _rebuild(e, kids, getattr(e, "span", None))
    if e.ty is not None:
        object.__setattr__(out, "ty", e.ty)
    return out


def _rebuild(e: Expr, kids: tuple, sp) -> Expr:
    if isinstance(e, Bin):
        return Bin(e.op, kids[0], kids[1], span=sp)
    if isinstance(e, Neg):
        return Neg(kids[0], span=sp)
    if isinstance(e, Not):
        return Not(kids[0], span=sp)
    if isinstance(e, Fn):
        return Fn(e.name, kids, span=sp)
    if isinstance(e, Cond):
        return Cond(kids[0], kids[1], kids[2], span=sp)
    if isinstance(e, Let):
        names = [n for n, _ in e.bindings]
        return Let(tuple(zip(names, kids[:-1])), kids[-1], span=sp)
    if isinstance(e, Reduce):
        return Reduce(e.kind, e.var, kids[0], kids[1], kids[2], span=sp)
    if isinstance(e, Lookup):
        if e.channel is not None:
            return Lookup(e.table, kids[0], kids[1:], span=sp)
        return Lookup(e.table, None, kids, span=sp)
    if isinstance(e, Scalar):
        return Scalar(e.name, kids[0] if kids else None, span=sp)
    if isinstance(e, Conc):
        return Conc(kids[0], kids[1], span=sp)
    if isinstance(e, Transmit):
        return Transmit(e.name, kids[0], kids[1], span=sp)
    if isinstance(e, Xmit):
        return Xmit(kids[0], e.name, kids[1], kids[2], span=sp)
    if isinstance(e, ParComp):
        it = iter(kids)
        return ParComp(tuple(tuple(next(it) for _ in op) for op in e.operands), span=sp)
    if isinstance(e, Stage):
        return Stage(kids, span=sp)
    if isinstance(e, Block):
        return Block(kids, span=sp)
    if isinstance(e, Loop):
        return Loop(e.kind, e.var, kids[0], kids[1], kids[2], kids[3], span=sp)
    if isinstance(e, Send):
        return Send(kids[0], kids[1], kids[2], kids[3], span=sp, exchange=e.exchange)
    if isinstance(e, Compute):
        return Compute(kids[0], kids[1], span=sp, exchange=e.exchange)
    if isinstance(e, NodeOf):
        return NodeOf(kids[0], span=sp)
    if isinstance(e, ConfigRef):
        return ConfigRef(e.config, e.field, kids[0] if kids else None, span=sp)
    if isinstance(e, PerRankArg):
        return PerRankArg(e.name, kids[0], span=sp)
    raise TypeError(f"not an IR node: {e!r}")


def walk(e: Expr) -> Iterator[Expr]:
    """Every node of ``e``, pre-order."""
    stack = [e]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def walk_unique(e: Expr) -> Iterator[Expr]:
    """Every distinct node of ``e`` once (a sub-expression shared by inlining is visited once, so
    this is linear in the DAG where :func:`walk` is linear in the tree)."""
    seen = set()
    stack = [e]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        stack.extend(reversed(children(n)))


def node_count(e: Expr) -> int:
    """The number of nodes of ``e`` (the "term count" reported by the simplifier)."""
    return sum(1 for _ in walk(e))


def free_vars(e: Expr) -> frozenset:
    """Names used in ``e`` that no enclosing Let, Reduce or Loop inside ``e`` binds."""
    if isinstance(e, Var):
        return frozenset((e.name,))
    if isinstance(e, PerRankArg):
        return free_vars(e.index) | {e.name}
    if isinstance(e, Let):
        inner = free_vars(e.body) - {n for n, _ in e.bindings}
        return inner.union(*(free_vars(v) for _, v in e.bindings))
    b = binder(e)
    if b is not None:
        name, first = b
        kids = children(e)
        out = frozenset()
        for i, c in enumerate(kids):
            out |= (free_vars(c) - {name}) if i >= first else free_vars(c)
        return out
    out = frozenset()
    for c in children(e):
        out |= free_vars(c)
    return out


# ----------------------------------------------------------------------------- declarations
# (tlop.ir.program, imported last so the classes keep their definition order in _FROZEN: the
# generated methods' module lists them in that order)
from tlop.ir.program import (Algorithm, ChannelInfo, ParamSig, Program, ScalarSig, TableSig,  # noqa: E402
                             TransmissionVariant)

_finish_frozen()
