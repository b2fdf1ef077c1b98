"""The semantics of τ-Lop schedules and parallel compositions, written once for every engine.

* :mod:`tlop.ir.taulop.contention` — the channel a send takes and the contention keys (which
  sends share a group), as a table every engine instantiates;
* :mod:`tlop.ir.taulop.rule` — the A2/A3 rule over a :class:`GroupAlgebra` (IR, numpy, uniform
  groups);
* :mod:`tlop.ir.taulop.expand` — a parallel composition ``x1 ‖ x2 ‖ …`` expanded to core IR by
  that rule.

What it does not do: enumerate schedules or evaluate transmissions (the back ends do).
"""

from tlop.ir.taulop.contention import (CONTENTION_KEYS, DEFAULT_KEY, KEYS, NUMPY_OPS, ContentionKey, KeyOps, numpy_ops,  # noqa: F401
                                       SymbolicEnds, key_of, per_node_group, schedule_channels, send_channel)
from tlop.ir.taulop.expand import Decide, ExpandParComps, Expansion, expand_parcomp  # noqa: F401
from tlop.ir.taulop.rule import GroupAlgebra, NumericGroups, UniformGroups, phase_sum, reduce_groups  # noqa: F401

__all__ = ["Expansion", "expand_parcomp", "ExpandParComps", "Decide", "reduce_groups", "GroupAlgebra",
           "NumericGroups", "UniformGroups", "phase_sum", "ContentionKey", "KeyOps", "KEYS", "CONTENTION_KEYS",
           "DEFAULT_KEY", "key_of", "schedule_channels", "send_channel", "NUMPY_OPS", "numpy_ops", "SymbolicEnds",
           "per_node_group"]
