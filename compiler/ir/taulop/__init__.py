"""The semantics of τ-Lop schedules and parallel compositions, written once for every engine.

* :mod:`tlop.ir.taulop.contention` — the channel a send takes and the contention keys (which
  sends share a group), as a table every engine instantiates;
* :mod:`tlop.ir.taulop.rule` — the A2/A3 rule over a :class:`GroupAlgebra` (IR, numpy, uniform
  groups);
* :mod:`tlop.ir.taulop.expand` — a parallel composition ``x1 ‖ x2 ‖ …`` expanded to core IR by
  that rule.

What it does not do: enumerate schedules or evaluate transmissions (the back ends do).

The names below are imported on first use (PEP 562), so that the front end can read the key
names of :mod:`tlop.ir.taulop.contention` without importing numpy (a cold ``tlop check`` needs
none).
"""

import importlib

_HOME = {**dict.fromkeys(("CONTENTION_KEYS", "DEFAULT_KEY", "KEYS", "NUMPY_OPS", "ContentionKey", "KeyOps",
                          "numpy_ops", "SymbolicEnds", "key_of", "per_node_group", "schedule_channels",
                          "send_channel"), "contention"),
         **dict.fromkeys(("Decide", "ExpandParComps", "Expansion", "expand_parcomp"), "expand"),
         **dict.fromkeys(("GroupAlgebra", "NumericGroups", "UniformGroups", "phase_sum", "reduce_groups"), "rule")}

__all__ = ["Expansion", "expand_parcomp", "ExpandParComps", "Decide", "reduce_groups", "GroupAlgebra",
           "NumericGroups", "UniformGroups", "phase_sum", "ContentionKey", "KeyOps", "KEYS", "CONTENTION_KEYS",
           "DEFAULT_KEY", "key_of", "schedule_channels", "send_channel", "NUMPY_OPS", "numpy_ops", "SymbolicEnds",
           "per_node_group"]


def __getattr__(name):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
