"""The lowered algorithm an engine compiles: a schedule's closed form where one is derived.

What it does: :func:`lower_schedule` gives, for an algorithm whose cost holds schedule stages and
a sequential or round-robin mapping, a :class:`Lowered` algorithm: the body ``if conditions then
closed form else schedule`` (:mod:`tlop.lower.closedform`, not simplified: the derivation is
exact and fast, and the simplifier is an analysis) and the name of its ranks-per-node variable —
or the algorithm unchanged and the **reason** no closed form applies.  A schedule that no pattern
recognises is a designed outcome (:class:`~tlop.lower.closedform.NoClosedForm`, its reason kept),
not an exception to hide: any other exception is a bug and propagates.  The reason is logged
once per algorithm and mapping kind (logger ``tlop.lower``, level DEBUG) and kept on the result
(the JIT's ``Evaluator.lowering``), so debug output says why the engine enumerates.

Lowered algorithms are cached per process (a derivation without the simplifier takes
milliseconds); the JIT's object code is cached on disk with the closed form compiled in, keyed by
the lowered IR.

What it does not do: choose an engine, simplify, or evaluate.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Optional

from tlop import ir
from tlop.lower.closedform import KINDS, derive

__all__ = ["Lowered", "lower_schedule", "KINDS"]

_LOG = logging.getLogger("tlop.lower")


@dataclass(frozen=True)
class Lowered:
    """``algorithm``: what to compile; ``q``: the ranks-per-node variable of its closed form (None
    when it has none); ``reason``: why there is no closed form (empty when there is one, or when
    none was asked for: no schedule, another mapping kind)."""
    algorithm: ir.Algorithm
    q: Optional[str] = None
    reason: str = ""

    @property
    def closed(self) -> bool:
        return self.q is not None


_CACHE: dict = {}  # (id(program), algorithm name, kind) -> (program, alg, Lowered)
_LOCK = threading.Lock()


def lower_schedule(program: ir.Program, alg: ir.Algorithm, kind: Optional[str]) -> Lowered:
    """``alg`` lowered for mapping ``kind`` (see the module docstring)."""
    if kind not in KINDS or alg.over is None or not ir.has_schedule(alg.body):
        return Lowered(alg)
    key = (id(program), alg.name, kind)
    got = _CACHE.get(key)
    if got is not None and got[0] is program and got[1] is alg:
        return got[2]
    d = derive(program, alg, kind)
    if d.ok:
        body = d.expr if isinstance(d.conditions, ir.Num) and d.conditions.value else \
            ir.Cond(d.conditions, d.expr, alg.body, ty=alg.body.ty)
        out = Lowered(ir.Algorithm(alg.name, alg.params, body, alg.doc, alg.model, over=alg.over,
                                   requires=alg.requires), d.q)
    else:
        out = Lowered(alg, None, d.reason)
        _LOG.debug("%s under a %s mapping: no closed form (%s); its stages are enumerated", alg.name, kind, d.reason)
    with _LOCK:
        _CACHE[key] = (program, alg, out)
    return out
