"""Enumeration of a schedule stage: every send and computation with concrete values.

What it does: :class:`StageEnumerator` runs the items of one :class:`tlop.ir.Stage` for one point
(scalar arguments) over *lanes* — one lane per sequence being built — with numpy arrays over the
lanes (a ``par`` over 4096 ranks is one array operation, not 4096 evaluations).  Each lane carries
its *phase counter*: a send or a computation is placed at its lane's counter, which then advances;
``seq`` and blocks run their parts in order on the same lanes; ``par`` forks one lane per binding
whose ``where`` holds, starting at the parent's counter, and the parent continues after the longest
child; the items at the top of a stage each start at phase 0 (they are concurrent).  Every
expression is evaluated by the interpreter (:mod:`tlop.backends.interp`) with the lanes' values as
arrays.  The result (:meth:`StageEnumerator.enumerate`) is a list of send batches (source,
destination, size, weight per element, and the phase of each) and of computation batches (rank,
cost), in the order the items ran, after checking ranks (whole numbers in ``0 … P−1``), sizes
(``>= 0``), weights (``> 0``) and computation costs (``>= 0``), each error naming the send or
computation and the offending values.

What it does not do: give the stage a cost.  That is the model's business: τ-Lop's parallel
composition (:mod:`tlop.backends.schedule`) and LogGP/pLogP's dataflow
(:mod:`tlop.backends.dataflow`) both read this enumeration.
"""

from __future__ import annotations

import numpy as np

from tlop import ir

__all__ = ["StageEnumerator", "Enumeration", "MAX_ELEMENTS"]

#: the most elements (sends and computations) one stage may hold, in every engine
MAX_ELEMENTS = 10_000_000


class _Batch:
    """Elements placed by one send or computation item on a set of lanes; ``first`` is the index
    of its first element among all the stage's elements in the order they were placed."""
    __slots__ = ("node", "phase", "a", "b", "c", "d", "first")

    def __init__(self, node, phase, a, b=None, c=None, d=None, first=0):
        self.node, self.phase, self.a, self.b, self.c, self.d = node, phase, a, b, c, d
        self.first = first


def _lanes(v, n):
    return np.broadcast_to(np.asarray(v, dtype=float), (n,))


def _fmt(v: float) -> str:
    return f"{v:.17g}" if not float(v).is_integer() else str(int(v))


class Enumeration:
    """The elements of one stage at one point: ``P``, send batches and computation batches.

    A send batch has ``node`` (the Send), ``phase``, ``a`` (source), ``b`` (destination), ``c``
    (size in bytes) and ``d`` (weight); a computation batch ``node``, ``phase``, ``a`` (rank) and
    ``b`` (cost in seconds) — one array entry per element, batches in the order their items ran."""
    __slots__ = ("P", "sends", "computes")

    def __init__(self, P, sends, computes):
        self.P, self.sends, self.computes = P, sends, computes


class StageEnumerator:
    """Enumerates stages for one interpreter (its program, profile and mapping)."""

    def __init__(self, interp):
        self.interp = interp
        self.program = interp.program

    def enumerate(self, stage: ir.Stage, env: dict, conc) -> Enumeration:
        """The checked elements of ``stage`` for scalar ``env`` (which holds the process count
        under :data:`tlop.ir.RANKS`) and a scalar concurrency factor ``conc``."""
        from tlop.backends.interp import EvalError

        P = env.get(ir.RANKS)
        if P is None or self.interp.mapping is None:
            raise EvalError("a schedule needs a process mapping: evaluate the algorithm with one "
                            "(--mapping sequential(8), or mapping=tlop.sequential(8))", stage.span)
        sends, computes = [], []
        self._count = 0
        for item in stage.items:
            self._run(item, dict(env), 1, np.zeros(1, dtype=np.int64), conc, sends, computes)
        self._checked(sends, computes, int(P))
        return Enumeration(int(P), sends, computes)

    # ------------------------------------------------------------------ enumeration
    def _eval(self, e, env, n, conc):
        return _lanes(self.interp.evaluate(e, env, conc), n)

    def _place(self, n, node):
        from tlop.backends.interp import EvalError

        self._count += n
        if self._count > MAX_ELEMENTS:
            raise EvalError(f"the stage has more than {MAX_ELEMENTS:,} sends and computations, more than "
                            f"tlop evaluates", node.span)

    def _run(self, item, env, n, ph, conc, sends, computes):
        """Run ``item`` on ``n`` lanes whose phase counters are ``ph``; the counters after it."""
        if isinstance(item, ir.Send):
            self._place(n, item)
            sends.append(_Batch(item, ph, *(self._eval(x, env, n, conc)
                                            for x in (item.src, item.dst, item.size, item.weight)),
                                first=self._count - n))
            return ph + 1
        if isinstance(item, ir.Compute):
            self._place(n, item)
            computes.append(_Batch(item, ph, self._eval(item.rank, env, n, conc),
                                   self._eval(item.cost, env, n, conc), first=self._count - n))
            return ph + 1
        if isinstance(item, ir.Block):
            for it in item.items:
                ph = self._run(it, env, n, ph, conc, sends, computes)
            return ph
        if isinstance(item, ir.Loop):
            return (self._par if item.kind == "par" else self._seq)(item, env, n, ph, conc, sends, computes)
        from tlop.backends.interp import EvalError

        raise EvalError(f"{type(item).__name__} is not an item of a stage", getattr(item, "span", None))

    def _bounds(self, loop, env, n, conc):
        """Per lane: the first and last binding of ``loop`` (checked as a reduction's bounds)."""
        from tlop.backends.interp import check_reduce_bounds

        lo = self._eval(loop.lo, env, n, conc)
        hi = self._eval(loop.hi, env, n, conc)
        start = np.empty(n, dtype=np.int64)
        stop = np.empty(n, dtype=np.int64)
        for k in range(n) if n <= 64 else ():
            start[k], stop[k] = check_reduce_bounds(loop.kind, float(lo[k]), float(hi[k]), loop.span)
        if n > 64:
            ok = np.isfinite(lo) & np.isfinite(hi) & (np.abs(lo) <= 2.0 ** 53) & (np.abs(hi) <= 2.0 ** 53)
            if not ok.all():
                k = int(np.flatnonzero(~ok)[0])
                check_reduce_bounds(loop.kind, float(lo[k]), float(hi[k]), loop.span)
            start[:] = np.ceil(lo)
            stop[:] = np.floor(hi)
        return start, stop

    @staticmethod
    def _pick(env, idx):
        return {k: (v[idx] if isinstance(v, np.ndarray) and v.ndim > 0 else v) for k, v in env.items()}

    def _where(self, loop, env, m, conc):
        if isinstance(loop.where, ir.Num):
            return np.full(m, loop.where.value != 0)
        return np.broadcast_to(np.not_equal(self.interp.evaluate(loop.where, env, conc), 0), (m,))

    def _par(self, loop, env, n, ph, conc, sends, computes):
        from tlop.backends.interp import EvalError

        start, stop = self._bounds(loop, env, n, conc)
        counts = np.maximum(stop - start + 1, 0)
        total = int(counts.sum())
        if total > MAX_ELEMENTS:
            raise EvalError(f"par over {total:,} bindings is more than tlop evaluates", loop.span)
        if total == 0:
            return ph
        parent = np.repeat(np.arange(n), counts)
        offsets = np.cumsum(counts) - counts
        values = (start[parent] + (np.arange(total) - offsets[parent])).astype(float)
        inner = self._pick(env, parent)
        inner[loop.var] = values
        keep = self._where(loop, inner, total, conc)
        if not keep.all():
            sel = np.flatnonzero(keep)
            if not len(sel):
                return ph
            inner = self._pick(inner, sel)
            parent = parent[sel]
            total = len(sel)
        child = self._run(loop.body, inner, total, ph[parent], conc, sends, computes)
        out = ph.copy()
        np.maximum.at(out, parent, child)
        return out

    def _seq(self, loop, env, n, ph, conc, sends, computes):
        from tlop.backends.interp import MAX_TERMS, EvalError

        start, stop = self._bounds(loop, env, n, conc)
        live = stop >= start
        if not live.any():
            return ph
        first, last = int(start[live].min()), int(stop[live].max())
        if last - first + 1 > MAX_TERMS:
            raise EvalError(f"seq over {last - first + 1:,} bindings is more than tlop evaluates", loop.span)
        ph = ph.copy()
        for i in range(first, last + 1):
            active = np.flatnonzero((start <= i) & (i <= stop))
            if not len(active):
                continue
            inner = self._pick(env, active) if len(active) < n else dict(env)
            inner[loop.var] = float(i)
            keep = self._where(loop, inner, len(active), conc)
            if not keep.all():
                active = active[keep]
                if not len(active):
                    continue
                inner = self._pick(inner, np.flatnonzero(keep))
            ph[active] = self._run(loop.body, inner, len(active), ph[active], conc, sends, computes)
        return ph

    # ------------------------------------------------------------------ checks
    @staticmethod
    def _first_bad(bad):
        return int(np.flatnonzero(bad)[0])

    def _check_ranks(self, batch, label, ranks_list, P):
        from tlop.backends.interp import EvalError

        for what, r in ranks_list:
            bad = ~(np.isfinite(r) & (np.floor(r) == r) & (r >= 0) & (r < P))
            if bad.any():
                k = self._first_bad(bad)
                raise EvalError(f"{label(k)}: the {what} rank {_fmt(r[k])} is outside 0 … {P - 1} (P = {P})",
                                batch.node.span)

    def _checked(self, sends, computes, P):
        from tlop.backends.interp import EvalError

        for b in sends:
            def label(k, b=b):
                return f"send {_fmt(b.a[k])} -> {_fmt(b.b[k])} : {_fmt(b.c[k])} B"
            self._check_ranks(b, label, (("source", b.a), ("destination", b.b)), P)
            bad = ~(b.c >= 0)
            if bad.any():
                k = self._first_bad(bad)
                raise EvalError(f"{label(k)}: the size {_fmt(b.c[k])} B is negative" if b.c[k] < 0 else
                                f"{label(k)}: the size is not a number", b.node.span)
            bad = ~((b.d > 0) & np.isfinite(b.d))
            if bad.any():
                k = self._first_bad(bad)
                raise EvalError(f"{label(k)}: the weight {_fmt(b.d[k])} must be a positive number", b.node.span)
        for b in computes:
            def label(k, b=b):
                return f"computation on rank {_fmt(b.a[k])}"
            self._check_ranks(b, label, (("", b.a),), P)
            bad = ~(b.b >= 0)
            if bad.any():
                k = self._first_bad(bad)
                raise EvalError(f"{label(k)}: the cost {b.b[k]!r} s is negative or not a number", b.node.span)
