"""Memoised tree queries of the IR: free variables and "holds a schedule", once per node.

What it does: :func:`free_vars` and :func:`has_schedule` answer exactly what
:func:`tlop.ir.free_vars` and :func:`tlop.ir.has_schedule` answer, but remember the answer of
every node they visit (keyed by node identity, the node kept alive with its entry), so a pass
that asks about every node of a nested tree — each ``sum`` of 3,000 nested ``sum``\\ s asking about
its body — does linear work instead of quadratic (issue 22 item 12: 400 nested sums took 10 s in
the term budget, 3,000 more than 180 s).  The walk is iterative: no recursion limit.

What it does not do: notice a node changed after it was asked about (IR nodes are values: no
pass mutates one), or free its memory before :data:`MAX_ENTRIES` entries (then it starts over).
"""

from __future__ import annotations

from tlop.ir.nodes import SCHEDULE_NODES, Expr, Let, PerRankArg, Var, binder, children

__all__ = ["free_vars", "has_schedule", "MAX_ENTRIES"]

#: the most nodes remembered per fact before the memory is cleared
MAX_ENTRIES = 1_000_000

_FREE: dict = {}
_SCHED: dict = {}


def _pending(e, memo):
    """The nodes under ``e`` (``e`` included) not yet in ``memo``, children before parents."""
    order, stack, seen = [], [(e, False)], set()
    while stack:
        node, ready = stack.pop()
        if ready:
            order.append(node)
            continue
        got = memo.get(id(node))
        if (got is not None and got[0] is node) or id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for c in children(node):
            if isinstance(c, Expr):
                stack.append((c, False))
    return order


def _get(memo, c):
    got = memo.get(id(c))
    return got[1] if got is not None and got[0] is c else None


def free_vars(e: Expr) -> frozenset:
    """Names used in ``e`` that no enclosing Let, Reduce or Loop inside ``e`` binds (the same
    answer as :func:`tlop.ir.free_vars`)."""
    memo = _FREE
    if len(memo) > MAX_ENTRIES:
        memo.clear()
    for node in _pending(e, memo):
        if isinstance(node, Var):
            out = frozenset((node.name,))
        elif isinstance(node, PerRankArg):
            out = _get(memo, node.index) | {node.name}
        elif isinstance(node, Let):
            out = (_get(memo, node.body) - {n for n, _ in node.bindings}).union(
                *(_get(memo, v) for _, v in node.bindings))
        else:
            b = binder(node)
            out = frozenset()
            for i, c in enumerate(children(node)):
                if not isinstance(c, Expr):
                    continue
                f = _get(memo, c)
                out |= (f - {b[0]}) if b is not None and i >= b[1] else f
        memo[id(node)] = (node, out)
    return memo[id(e)][1]


def has_schedule(e: Expr) -> bool:
    """Whether ``e`` contains a schedule node (the same answer as :func:`tlop.ir.has_schedule`)."""
    memo = _SCHED
    if len(memo) > MAX_ENTRIES:
        memo.clear()
    for node in _pending(e, memo):
        memo[id(node)] = (node, isinstance(node, SCHEDULE_NODES) or
                          any(_get(memo, c) for c in children(node) if isinstance(c, Expr)))
    return memo[id(e)][1]
