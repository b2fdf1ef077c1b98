"""Bounding the expanded size of the lowered program: inlining must not explode.

The elaborator inlines every call of a ``def`` or ``algorithm`` as a ``Let`` around the callee's
one lowered body, so the IR in memory is a DAG with shared sub-expressions; every engine (the
interpreter, the JIT, the simplifier, the SMT encoder, the printers) walks it as a tree.  Sixty
levels of ``def f_i(x) = f_{i-1}(x) + f_{i-1}(x)`` are a 120-node DAG and a 2⁶⁰-node tree, so
they passed ``tlop check`` and then hung ``eval``, ``show``, ``explain`` and ``prove``.
Transmissions are expanded the same way at evaluation time (a ``Transmit`` evaluates its
variant's body), so a chain of transmissions each using the previous one twice explodes alike.

What it does: :class:`TreeSizes` counts the size a node has as a tree, memoized on the shared
nodes, so counting is linear in the DAG; a ``Transmit``, ``Xmit`` or ``Send`` can be weighted
with the expanded size of the transmission it evaluates.  :func:`culprit` finds, below a node
that is too big, the smallest sub-expression that is itself too big — the place in the source
where the sizes of two parts that are each small enough are combined — for the error's
file:line:col.  The elaborator checks each body it builds and each call it inlines against
:data:`MAX_EXPANDED_NODES`, and :func:`check_transmission_expansion` checks the transmissions and
the algorithms once everything is lowered.

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
    """Memoized tree sizes of IR nodes (by identity; the nodes are kept alive with their size).

    ``weights`` maps a transmission name to the expanded size of its body (the largest of its
    variants); a transmission node counts as its own size plus that weight."""

    def __init__(self, weights: dict | None = None):
        self._memo: dict[int, tuple] = {}
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
        """The number of nodes of ``e`` as a tree (iterative: deep trees are fine)."""
        memo = self._memo
        hit = memo.get(id(e))
        if hit is not None:
            return hit[1]
        children, weight, weighted = ir.children, self._weight, self.weights is not None
        stack = [(e, None)]  # (node, None) to expand, (node, its children) to sum
        while stack:
            n, kids = stack.pop()
            if id(n) in memo:
                continue
            if kids is None:
                kids = children(n)
                stack.append((n, kids))
                stack.extend((k, None) for k in kids if id(k) not in memo)
                continue
            total = 1 + (weight(n) if weighted else 0)
            for k in kids:
                total += memo[id(k)][1]
            memo[id(n)] = (n, total)
        return memo[id(e)][1]


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
    one mistake is reported once, at the transmission where the expansion first crosses the limit."""
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
    for name, alg in algorithms.items():
        if alg is None or alg.body is None:
            continue
        s = sizes.size(alg.body)
        if s > limit and not (_variant_uses(alg.body, transmissions) & poisoned):
            sink.error(too_big_message(name if name.startswith("the ") else f"algorithm '{name}'", s, limit), culprit(sizes, alg.body, limit).span
                       or alg.span)
