"""Which sends of a schedule share a contention group: the channel of a send and the contention keys.

What it does: states, once, the two decisions that turn a schedule's sends into the members of
τ-Lop contention groups, for every engine:

* **the channel of a send** (:func:`schedule_channels`, :func:`send_channel`): a send whose two
  ends the mapping puts on one node goes through the platform's one channel declared
  ``within node``, any other through its one channel declared ``between nodes``;
* **the contention key of a channel** (:data:`KEYS`, :data:`DEFAULT_KEY`, :func:`key_of`): the
  groups, within a phase and a channel, that a send on it joins — given as a function of the
  send's source node, destination node and whether the channel is the within-node one.  A send
  may join two groups (``node``/``either`` between nodes: the group of its source node and the
  group of its destination node; the phase's maximum then takes the larger of the two).

The key functions are written over an abstract pair of ends and a small :class:`KeyOps`
(a constant; integer division for keys coarser than a node; the rack of a node, from the
mapping's nodes per rack), so every engine instantiates the same table: numpy arrays
(:func:`numpy_ops` of the mapping, the interpreter and the counting reduction), LLVM
values (the JIT's stage code), and :class:`SymbolicEnds` (closed forms count, for transfers that
leave and enter every node alike, the members of a node's group; a key they cannot count gives no
closed form).  ``tlop explain`` labels groups with :attr:`ContentionKey.label`.  Adding a key is
adding one entry to :data:`_TABLE` here; the platform language accepts exactly the names of
:data:`CONTENTION_KEYS` after ``contention``.

What it does not do: reduce the groups (the A2/A3 rule: :mod:`tlop.ir.taulop.rule`), enumerate
sends, or map ranks to nodes (the mapping: :mod:`tlop.runtime.mapping`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

__all__ = ["ContentionKey", "KeyOps", "KEYS", "CONTENTION_KEYS", "DEFAULT_KEY", "key_of", "schedule_channels",
           "send_channel", "NUMPY_OPS", "numpy_ops", "SymbolicEnds", "per_node_group"]


class KeyOps(Protocol):
    """The operations a key function may apply to node values, in one engine's representation."""

    def const(self, like, value: int):
        """The key ``value`` for every send ``like`` stands for."""

    def floordiv(self, x, k: int):
        """``x div k`` of a (non-negative) node number ``x``."""

    def rack(self, x):
        """The rack of node ``x``: ``x div R`` for the mapping's ``R`` nodes per rack
        (:meth:`tlop.runtime.mapping.Mapping.rack_of`); 0 when the mapping gives no racks."""


@dataclass(frozen=True)
class ContentionKey:
    """One contention key: ``groups(src, dst, within, ops)`` — the group keys (a tuple of one or
    two) of a send from node ``src`` to node ``dst`` on a channel within nodes (``within``; then
    ``src == dst``) or between them; ``label(channel, within, key)``: how ``tlop explain`` names
    a group; ``doc``: one line for the reader."""
    name: str
    groups: Callable[[Any, Any, bool, KeyOps], tuple]
    label: Callable[[str, bool, int], str]
    doc: str


def _both(src, dst, within, ops):
    return (src,) if within else (src, dst)


def _node_label(ch, within, key):
    return f"{ch} node {key}" if within else f"{ch} node {key} ↔"


_TABLE = (
    ContentionKey("node", _both, _node_label,
                  "every transfer inside one node; between nodes, a transfer counts in the groups of both its nodes"),
    ContentionKey("dst_node", lambda s, d, within, ops: (d,), lambda ch, within, k: f"{ch} → node {k}",
                  "the transfers entering one node"),
    ContentionKey("src_node", lambda s, d, within, ops: (s,), lambda ch, within, k: f"{ch} node {k} →",
                  "the transfers leaving one node"),
    ContentionKey("either", _both, _node_label,
                  "a transfer counts in the group of its source node and of its destination node"),
    ContentionKey("all", lambda s, d, within, ops: (ops.const(s, 0),), lambda ch, within, k: f"{ch} (all nodes)",
                  "one group per channel and phase, whatever the nodes (the channel as one shared resource)"),
    ContentionKey("rack", lambda s, d, within, ops: (s,) if within else (ops.rack(d),),
                  lambda ch, within, k: f"{ch} node {k}" if within else f"{ch} → rack {k}",
                  "between nodes, the transfers entering one rack (the mapping's racks; without them the "
                  "whole machine is one rack); inside a node, as node"),
)

#: name -> :class:`ContentionKey`, in the order the platform language lists them
KEYS: dict = {k.name: k for k in _TABLE}
#: the names accepted after ``contention`` in a channel declaration
CONTENTION_KEYS: tuple = tuple(KEYS)
#: the key of a channel declared without one, by placement
DEFAULT_KEY = {"within": "node", "between": "dst_node"}


def key_of(program, channel: str) -> ContentionKey:
    """The contention key of ``channel`` in ``program`` (its declared key, else the default of
    its placement; a channel without placement gets the ``between`` default)."""
    info = program.channel_info.get(channel)
    placement = info.placement if info is not None else None
    name = (info.contention if info is not None else None) or DEFAULT_KEY["within" if placement == "within" else "between"]
    return KEYS[name]


def schedule_channels(program) -> tuple:
    """``(within, between, problem)``: the names of the platform's channels declared ``within
    node`` and ``between nodes`` (lists), and None when there is exactly one of each, else a
    sentence saying what is wrong (the engine reports it as its own error)."""
    info = program.channel_info
    within = [c for c in program.channels if info.get(c) and info[c].placement == "within"]
    between = [c for c in program.channels if info.get(c) and info[c].placement == "between"]
    problem = None
    for kind, found in (("within node", within), ("between nodes", between)):
        if len(found) != 1 and problem is None:
            what = "no channel" if not found else f"{len(found)} channels ({', '.join(found)})"
            problem = (f"a schedule needs exactly one platform channel declared '{kind}'; the platform "
                       f"declares {what} (e.g. 'channel shm within node contention node')")
    return within, between, problem


def send_channel(same_node, within, between, select=None):
    """The channel of a send: ``within`` where its ends share a node (``same_node``), else
    ``between`` (``select(cond, a, b)`` in the engine's representation; default ``numpy.where``)."""
    if select is None:
        import numpy as np
        select = np.where
    return select(same_node, within, between)


class _NumpyOps:
    """:class:`KeyOps` over numpy arrays (numpy is imported on use: the front end reads this
    module's key names without it)."""

    def __init__(self, rack_of: Optional[Callable] = None):
        self.rack_of = rack_of

    def const(self, like, value):
        import numpy as np
        return np.full(len(like), value, dtype=np.int64)

    def floordiv(self, x, k):
        import numpy as np
        return np.asarray(x, dtype=np.int64) // k

    def rack(self, x):
        import numpy as np
        x = np.asarray(x, dtype=np.int64)
        return np.zeros_like(x) if self.rack_of is None else np.asarray(self.rack_of(x), dtype=np.int64)


#: :class:`KeyOps` over numpy arrays of node numbers, for a mapping without racks
NUMPY_OPS = _NumpyOps()


def numpy_ops(mapping) -> KeyOps:
    """:class:`KeyOps` over numpy arrays of node numbers of ``mapping`` (its racks)."""
    return _NumpyOps(mapping.rack_of) if getattr(mapping, "rack", None) is not None else NUMPY_OPS


class _Uncountable(Exception):
    pass


class SymbolicEnds:
    """:class:`KeyOps` for closed forms: ``src``/``dst`` stand for "the node a transfer leaves" and
    "the node it enters"; a key that needs anything else (a constant, coarser groups) is not
    countable per node."""
    SRC, DST = "src", "dst"

    def const(self, like, value):
        raise _Uncountable

    def floordiv(self, x, k):
        raise _Uncountable

    def rack(self, x):
        raise _Uncountable


def per_node_group(key: ContentionKey, out_count, in_count, *, within: bool, disjoint: bool = False,
                   add: Callable = lambda a, b: a + b) -> Optional[Any]:
    """The members of a node's group on a channel with ``key``, when every node has ``out_count``
    transfers leaving it and ``in_count`` entering it on that channel (within a node: both are the
    node's transfers); ``disjoint``: no node both sends and receives, so a transfer's two groups
    are different nodes' (the largest group is then the receivers').  None when the key's groups
    are not per node (a closed form cannot count them)."""
    ends = SymbolicEnds()
    try:
        groups = key.groups(SymbolicEnds.SRC, SymbolicEnds.DST, within, ends)
    except _Uncountable:
        return None
    if within:
        return out_count if all(g in (SymbolicEnds.SRC, SymbolicEnds.DST) for g in groups) else None
    if groups == (SymbolicEnds.DST,):
        return in_count
    if groups == (SymbolicEnds.SRC,):
        return out_count
    if sorted(groups) == [SymbolicEnds.DST, SymbolicEnds.SRC]:
        return in_count if disjoint else add(out_count, in_count)
    return None
