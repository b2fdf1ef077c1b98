"""Transmissions cannot recurse: a check on the lowered transmission definitions.

What it does: builds the graph "transmission ``X[c]`` uses ``Y[d]``" from the bodies of every
lowered :class:`tlop.ir.TransmissionVariant` (a use through a channel that is not a constant
counts as a use on every channel ``Y`` is defined on) and reports each cycle once, at the use
that closes it, with the chain: ``transmission 'U[shm]' is defined in terms of itself
(U[shm] -> V[shm] -> U[shm]); transmissions cannot recurse``.  Without it a recursive
transmission passed ``tlop check`` and failed at evaluation time ("nested too deeply").

What it does not do: look at definitions (``def``), whose recursion the elaborator already
rejects while inlining, or decide anything about channels computed at run time beyond the
conservative rule above.
"""

from __future__ import annotations

from tlop import ir

__all__ = ["check_transmission_cycles"]


def _uses(program_channels: tuple, transmissions: dict, body: ir.Expr):
    """``((name, channel), span)`` for every transmission a body uses."""
    for node in ir.walk_unique(body):
        if isinstance(node, (ir.Transmit, ir.Xmit)) and node.name in transmissions:
            if isinstance(node.channel, ir.Num):
                targets = [int(node.channel.value)]
            else:
                targets = sorted({v.channel for v in transmissions[node.name]})
            for c in targets:
                yield (node.name, c), node.span


def check_transmission_cycles(channels: tuple, transmissions: dict, sink) -> None:
    """Report every cycle among ``transmissions`` (name -> variants) to ``sink``."""
    graph: dict = {}
    for name, variants in transmissions.items():
        for v in variants:
            edges = graph.setdefault((name, v.channel), [])
            edges.extend(_uses(channels, transmissions, v.body))

    def label(node) -> str:
        name, c = node
        return f"{name}[{channels[c]}]" if 0 <= c < len(channels) else name

    WHITE, GREY, BLACK = 0, 1, 2
    color = {n: WHITE for n in graph}
    reported = set()
    for start in graph:
        if color[start] != WHITE:
            continue
        # iterative DFS: (node, index of the next edge); path holds the grey nodes in order
        stack, path = [(start, 0)], [start]
        color[start] = GREY
        while stack:
            node, k = stack[-1]
            edges = graph.get(node, ())
            if k == len(edges):
                stack.pop()
                path.pop()
                color[node] = BLACK
                continue
            stack[-1] = (node, k + 1)
            target, span = edges[k]
            if target not in color:
                continue  # not defined on that channel: the elaborator or the engines say so
            if color[target] == GREY:
                cycle = path[path.index(target):] + [target]
                key = frozenset(cycle)
                if key not in reported:
                    reported.add(key)
                    chain = " -> ".join(label(n) for n in cycle)
                    sink.error(f"transmission '{label(target)}' is defined in terms of itself ({chain}); "
                               f"transmissions cannot recurse", span)
            elif color[target] == WHITE:
                color[target] = GREY
                stack.append((target, 0))
                path.append(target)
