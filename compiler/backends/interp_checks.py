"""The checks every engine applies as the reference interpreter does, and the interpreter's small helpers.

What it does: the engine limits (:data:`MAX_TERMS`, :data:`BOUND_LIMIT`), the evaluation error
(:class:`EvalError`), the checks of reduction bounds, message sizes and concurrencies with their
messages (the JIT and the counting engines raise the same), and the helpers the interpreter's
parts share over scalars and numpy arrays (shapes, restriction to a mask, per-node facts).

What it does not do: evaluate anything (:mod:`tlop.backends.interp`).
"""

from __future__ import annotations

import math

import numpy as np

from tlop.runtime.diagnostics import TlopError

__all__ = ["EvalError", "MAX_TERMS", "BOUND_LIMIT", "check_reduce_bounds", "check_size", "check_concurrency"]


#: the longest reduction any engine runs (the JIT checks the same limit, so that no native loop
#: runs for hours without a way to interrupt it)
MAX_TERMS = 10_000_000
#: the largest reduction bound (in magnitude) any engine accepts: beyond 2^53 consecutive
#: integers are no longer distinct doubles, so the index could not count
BOUND_LIMIT = float(2 ** 53)


class EvalError(TlopError):
    """An evaluation failed (missing table, empty max range, bad channel …)."""


def _scalar(x):
    """Collapse 0-d arrays to Python floats so scalar inputs give scalar outputs."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return float(x)
    return x


def check_reduce_bounds(kind: str, lo: float, hi: float, span=None) -> tuple:
    """``(start, stop)`` of a reduction over ``lo .. hi`` (one scalar point), or the EvalError
    every engine reports for it: bounds not finite, beyond ±2^53, more than :data:`MAX_TERMS`
    terms, or an empty ``max``/``min`` (an empty ``sum``, ``par`` or ``seq`` is empty: the
    stage enumerator checks its loops' bounds here too)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise EvalError(f"{kind} range bounds are not finite ({lo} .. {hi})", span)
    for b in (lo, hi):
        if abs(b) > BOUND_LIMIT:
            raise EvalError(f"{kind} range bound {b:.17g} is beyond ±2^53 (9007199254740992), where "
                            f"doubles no longer hold every integer", span)
    start, stop = int(math.ceil(lo)), int(math.floor(hi))
    if stop - start + 1 > MAX_TERMS:
        raise EvalError(f"{kind} over {stop - start + 1:,} terms ({start} .. {stop}) is longer than tlop "
                        f"evaluates (at most {MAX_TERMS:,} terms, in every engine)", span)
    if kind in ("max", "min") and stop < start:  # an empty sum, par or seq is just empty
        raise EvalError(f"{kind} over an empty range", span)
    return start, stop


def _first_bad(v, bad):
    """The first element of ``v`` (a float or an array) where ``bad`` holds, or None."""
    if not _is_array(v):
        return float(v) if bad(v) else None
    with np.errstate(invalid="ignore"):
        hits = np.flatnonzero(bad(v).ravel())
    return float(np.asarray(v).ravel()[hits[0]]) if hits.size else None


def check_size(what: str, size, span=None) -> None:
    """A message size written in the model must not be negative (NaN passes: it makes the
    result NaN, reported as such)."""
    v = _first_bad(size, lambda x: x < 0)
    if v is not None:
        raise EvalError(f"{what}: the message size is negative ({v:g} B)", span)


def check_concurrency(what: str, tau, span=None) -> None:
    """A concurrency (``A ‖ …``, an item's count, a table's ``tau``) must be positive."""
    v = _first_bad(tau, lambda x: x <= 0)
    if v is not None:
        raise EvalError(f"{what}: the concurrency must be positive, not {v:g}", span)


def _is_array(v) -> bool:
    return isinstance(v, np.ndarray) and v.ndim > 0


def _shape(env, conc, *values) -> tuple:
    """The broadcast shape of every array among the environment, ``conc`` and ``values``."""
    shapes = [v.shape for v in env.values() if _is_array(v)]
    shapes += [np.shape(v) for v in (conc,) + values if _is_array(v)]
    return np.broadcast_shapes(*shapes) if shapes else ()


#: per IR node (by identity, the node kept alive with its answer): facts about schedules that
#: every evaluation asks again — the free variables of a stage, whether a ``sum`` repeats one
#: stage.  Shared by all interpreters (an API call makes a new one); bounded.
_NODE_FACTS: dict = {}


def _node_fact(kind: str, e, compute):
    key = (kind, id(e))
    got = _NODE_FACTS.get(key)
    if got is None or got[0] is not e:
        if len(_NODE_FACTS) > 4096:
            _NODE_FACTS.clear()
        got = (e, compute(e))
        _NODE_FACTS[key] = got
    return got[1]


def _restrict(env, conc, shape, mask):
    """The environment and concurrency factor of the elements of ``mask`` (a bool array of
    ``shape``): every array becomes the 1-D array of those elements."""
    def pick(v):
        return np.broadcast_to(v, shape)[mask] if _is_array(v) else v
    return {k: pick(v) for k, v in env.items()}, pick(conc)


