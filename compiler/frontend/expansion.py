"""Bounding the expanded size of the lowered program: inlining must not explode.

The elaborator inlines every call of a ``def`` or ``algorithm`` as a ``Let`` around the callee's
one lowered body, so the IR in memory is a DAG with shared sub-expressions; every engine (the
interpreter, the JIT, the simplifier, the SMT encoder, the printers) walks it as a tree.  Sixty
levels of ``def f_i(x) = f_{i-1}(x) + f_{i-1}(x)`` are a 120-node DAG and a 2⁶⁰-node tree, so
they passed ``tlop check`` and then hung ``eval``, ``show``, ``explain`` and ``prove``.
Transmissions are expanded the same way at evaluation time (a ``Transmit`` evaluates its
variant's body), so a chain of transmissions each using the previous one twice explodes alike.

What it does: :class:`TreeSizes` counts the size a node has as a tree, memoized on the shared
nodes, so counting is linear in the DAG (the same walk records whether the node contains a
schedule node, which the elaborator asks of every algorithm); a ``Transmit``, ``Xmit`` or
``Send`` can be weighted with the expanded size of the transmission it evaluates.
:func:`culprit` finds, below a node that is too big, the smallest sub-expression that is itself
too big — the place in the source where the sizes of two parts that are each small enough are
combined — for the error's file:line:col.  The elaborator checks each body it builds and each call it inlines against
:data:`MAX_EXPANDED_NODES`, and :func:`check_transmission_expansion` checks the transmissions and
the algorithms once everything is lowered (an algorithm whose unweighted size bounds its
weighted size within the limit is not walked again).

What it does not do: share sub-expressions (the engines would need to memoize ``Let``
bindings), or count iterations of ``sum``/``prod`` or of schedule loops (that is the evaluation's
term limit, :mod:`tlop.backends.limits`).
"""

from __future__ import annotations

from tlop import ir

__all__ = ["MAX_EXPANDED_NODES", "TreeSizes", "culprit", "too_big_message", "check_transmission_expansion"]

#: the largest tree an algorithm, a definition or a transmission may expand to (the stdlib's
#: largest is under 100 nodes; an interpreter visits about a million nodes a second)
MAX_EXPANDED_NODES = 1_000_000


class TreeSizes:
    """Memoized tree sizes of IR nodes, and whether each contains a schedule node (by identity;
    the nodes are kept alive with their facts).  One walk answers both questions: the elaborator
    asks both of every algorithm body.

    ``weights`` maps a transmission name to the expanded size of its body (the largest of its
    variants); a transmission node counts as its own size plus that weight."""

    def __init__(self, weights: dict | None = None):
        self._memo: dict[int, tuple] = {}  # id(node) -> (node, tree size, has a schedule node)
        self.weights = weights

    def _weight(self, n) -> int:
        if self.weights is None:
            return 0
        if isinstance(n, (ir.Transmit, ir.Xmit)):
            return self.weights.get(n.name, 0)
        if isinstance(n, ir.Send):
            return self.weights.get(ir.SEND_TRANSMISSION, 0)
        return 0

    def size(self, e) -> int:
        """The number of nodes of ``e`` as a tree (deep trees are fine)."""
        if type(e) in _LEAVES:
            return 1
        hit = self._memo.get(id(e))
        return (hit if hit is not None else self._facts(e, 0))[1]

    def has_schedule(self, e) -> bool:
        """:func:`tlop.ir.has_schedule` of ``e`` (a stage, ``node(…)`` or a configuration value
        anywhere below it), from the same memo as :meth:`size`."""
        if type(e) in _LEAVES:
            return False
        hit = self._memo.get(id(e))
        return (hit if hit is not None else self._facts(e, 0))[2]

    def _facts(self, e, depth: int) -> tuple:
        """Fill the memo for ``e`` (not a leaf, not in the memo) and every node below it not in
        it yet; its entry.  Leaves (``Num``, ``Var``: half the nodes) are counted without an
        entry.  Recursive while the recursion is shallow (it only descends into nodes not seen
        before: the new parts of a body, whose inlined calls are in the memo already), which is
        three times faster than the explicit stack :meth:`_facts_deep` takes over with below."""
        memo = self._memo
        total = 1 + (self._weight(e) if self.weights is not None else 0)
        sched = isinstance(e, ir.SCHEDULE_NODES)
        for k in ir.children(e):
            if type(k) in _LEAVES:
                total += 1
                continue
            hit = memo.get(id(k))
            if hit is None:
                hit = self._facts(k, depth + 1) if depth < _RECURSION else self._facts_deep(k)
            total += hit[1]
            sched = sched or hit[2]
        out = memo[id(e)] = (e, total, sched)
        return out

    def _facts_deep(self, e) -> tuple:
        """:meth:`_facts` for a deep tree: a post-order walk with an explicit stack, where a node
        is combined once all its children are known."""
        memo = self._memo
        children, weight, weighted, schedule = ir.children, self._weight, self.weights is not None, ir.SCHEDULE_NODES
        stack = [e]
        while stack:
            n = stack[-1]
            if id(n) in memo:  # pushed twice (a shared child): done the first time
                stack.pop()
                continue
            kids = children(n)
            ready = True
            for k in kids:
                if type(k) not in _LEAVES and id(k) not in memo:
                    stack.append(k)
                    ready = False
            if not ready:
                continue
            stack.pop()
            total = 1 + (weight(n) if weighted else 0)
            sched = isinstance(n, schedule)
            for k in kids:
                if type(k) in _LEAVES:
                    total += 1
                else:
                    hit = memo[id(k)]
                    total += hit[1]
                    sched = sched or hit[2]
            memo[id(n)] = (n, total, sched)
        return memo[id(e)]


#: the nodes without children (of size 1, no schedule, no transmission weight)
_LEAVES = (ir.Num, ir.Var)
#: how deep :meth:`TreeSizes._facts` recurses before it continues with an explicit stack
_RECURSION = 48


def culprit(sizes: TreeSizes, e, limit: int = MAX_EXPANDED_NODES):
    """Below ``e`` (bigger than ``limit``), the sub-expression bigger than ``limit`` none of whose
    children is: where the expansion crosses the limit."""
    while True:
        big = [k for k in ir.children(e) if sizes.size(k) > limit]
        if not big:
            return e
        e = big[0]


def too_big_message(what: str, size: int, limit: int = MAX_EXPANDED_NODES) -> str:
    return (f"{what} expands to {size:,} nodes once definitions and transmissions are inlined "
            f"(limit {limit:,}): every call of a definition is inlined, so a definition that calls "
            f"another one twice doubles its size at each level; use 'let' to compute a value once")


def _variant_uses(body, transmissions: dict) -> set:
    """The names of the transmissions a body evaluates (walking the DAG once)."""
    out, seen, stack = set(), set(), [body]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, (ir.Transmit, ir.Xmit)) and n.name in transmissions:
            out.add(n.name)
        elif isinstance(n, ir.Send) and ir.SEND_TRANSMISSION in transmissions:
            out.add(ir.SEND_TRANSMISSION)
        stack.extend(ir.children(n))
    return out


def check_transmission_expansion(transmissions: dict, algorithms: dict, sink,
                                 limit: int = MAX_EXPANDED_NODES, unweighted: TreeSizes | None = None) -> None:
    """Report every transmission and algorithm whose expansion (transmissions evaluated through
    their variants' bodies) exceeds ``limit``.  Transmissions must be acyclic (checked before;
    a cycle met here is left alone).  A transmission reported once counts as small afterwards, so
    one mistake is reported once, at the transmission where the expansion first crosses the limit.
    ``unweighted``: the sizes without weights the caller measured already (the elaborator's)."""
    weights: dict[str, int] = {}
    # without transmissions every weight is 0: the sizes the caller measured already (``unweighted``,
    # a TreeSizes without weights) are these sizes
    sizes = unweighted if unweighted is not None and not transmissions else TreeSizes(weights)
    uses = {name: set().union(*(_variant_uses(v.body, transmissions) for v in variants))
            for name, variants in transmissions.items()}
    state: dict[str, int] = {}  # 1 in progress, 2 done
    poisoned: set = set()  # reported, or using one reported

    def visit(root: str):
        stack = [(root, False)]
        while stack:
            name, ready = stack.pop()
            if state.get(name) == 2:
                continue
            if not ready:
                if state.get(name) == 1:
                    continue  # a cycle: reported elsewhere
                state[name] = 1
                stack.append((name, True))
                stack.extend((u, False) for u in uses[name] if state.get(u) is None)
                continue
            state[name] = 2
            if uses[name] & poisoned:
                poisoned.add(name)  # uses one reported already: not reported again
                weights[name] = 1
                continue
            big = 0
            for v in transmissions[name]:
                s = sizes.size(v.body)
                if s > limit:
                    sink.error(too_big_message(f"transmission '{name}'", s, limit), culprit(sizes, v.body, limit).span
                               or v.span)
                    poisoned.add(name)
                    s = 1
                big = max(big, s)
            weights[name] = big

    for name in transmissions:
        visit(name)
    # a node counts 1 plus at most the largest weight, so a body whose size without weights (known
    # already, ``unweighted``) times that is within the limit is within it weighted: not walked again
    factor = 1 + max(weights.values(), default=0)
    for name, alg in algorithms.items():
        if alg is None or alg.body is None:
            continue
        if unweighted is not None and sizes is not unweighted and unweighted.size(alg.body) * factor <= limit:
            continue
        s = sizes.size(alg.body)
        if s > limit and not (_variant_uses(alg.body, transmissions) & poisoned):
            sink.error(too_big_message(name if name.startswith("the ") else f"algorithm '{name}'", s, limit), culprit(sizes, alg.body, limit).span
                       or alg.span)
