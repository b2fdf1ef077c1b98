"""The reference interpreter's schedules and mapping queries: a part of :class:`tlop.backends.interp.Interpreter`.

What it does: evaluates a **stage** — enumerated and reduced by :mod:`tlop.backends.schedule`
(τ-Lop) or priced as a dataflow program by :mod:`tlop.backends.dataflow` (LogGP, pLogP) — one
point at a time for array arguments, and the nodes that read the mapping or the configuration:
``node(p)``, ``config.field[p]``, and per-rank arguments ``counts[r]``.  A schedule item outside a
stage is an error.

What it does not do: anything else of the IR (the interpreter's core does), or decide the
meaning of a stage (the modules above do; this part only routes to them).
"""

from __future__ import annotations

import numpy as np

from tlop import ir
from tlop.backends.interp_checks import EvalError, _is_array, _node_fact

__all__ = ["ScheduleEvaluation"]


class ScheduleEvaluation:
    """Stages and mapping queries, over the state of an :class:`Interpreter`."""

    def _eval_Stage(self, e, env, conc):
        if self.dataflow:
            return self._schedule_program(e, env, conc)
        if self._stages is None:
            from tlop.backends.dataflow import DATAFLOW_MODELS
            from tlop.backends.schedule import StageEvaluator

            if self.program.model not in ("taulop", ""):
                raise EvalError(f"model '{self.program.model}' gives no meaning to a schedule: a stage is priced in "
                                f"taulop (a parallel composition) and in {', '.join(DATAFLOW_MODELS)} (a dataflow "
                                f"program); write this algorithm as a cost expression", e.span)

            self._stages = StageEvaluator(self, self.schedules, self.stage_recorder)
        return self._pointwise(e, env, conc, self._stages.cost)

    def _holds_stage(self, e) -> bool:
        """Whether ``e`` contains a stage (cached per node: a dataflow model asks at every ``+``)."""
        got = self._holds.get(id(e))
        if got is None or got[0] is not e:
            from tlop.backends.dataflow import holds_stage

            got = (e, holds_stage(e))
            self._holds[id(e)] = got
        return got[1]

    def _schedule_program(self, e, env, conc):
        """A schedule program in a dataflow model (:mod:`tlop.backends.dataflow`): ``e`` is the
        outermost ``+``/``sum``/stage holding stages (check_composition ran on the whole tree)."""
        if self._dataflow is None:
            from tlop.backends.dataflow import Dataflow

            self._dataflow = Dataflow(self)
        return self._pointwise(e, env, conc, lambda ex, en, c: self._dataflow.cost(ex, en))

    def _pointwise(self, e, env, conc, fn):
        """``fn(e, env, conc)`` for scalar arguments; one point at a time for arrays (a stage's
        structure depends on its arguments)."""
        free = _node_fact("stage_free", e, lambda e: ir.free_vars(e) | {ir.RANKS})
        arrays = {k: v for k, v in env.items() if k in free and _is_array(v)}
        if not arrays and not _is_array(conc):
            return fn(e, env, conc)
        shape = np.broadcast_shapes(*(np.shape(v) for v in arrays.values()), np.shape(conc))
        out = np.empty(shape)
        wide = {k: np.broadcast_to(v, shape) for k, v in arrays.items()}
        conc_b = np.broadcast_to(np.asarray(conc, dtype=float), shape)
        for idx in np.ndindex(*shape):
            point = dict(env)
            point.update({k: float(v[idx]) for k, v in wide.items()})
            out[idx] = fn(e, point, float(conc_b[idx]))
        return out

    def _outside_stage(self, e, env, conc):
        raise EvalError(f"a schedule item ({type(e).__name__.lower()}) outside a stage", e.span)

    _eval_Loop = _eval_Send = _eval_Compute = _eval_Block = _outside_stage

    def _eval_NodeOf(self, e, env, conc):
        rank = self._eval(e.rank, env, conc)
        P = env.get(ir.RANKS)
        if self.mapping is None or P is None:
            raise EvalError("node(…) needs a process mapping: evaluate the algorithm with one "
                            "(--mapping sequential(8), or mapping=tlop.sequential(8))", e.span)
        rank_a, P_a = np.broadcast_arrays(np.asarray(rank, dtype=float), np.asarray(P, dtype=float))
        bad = ~(np.isfinite(rank_a) & (np.floor(rank_a) == rank_a) & (rank_a >= 0) & (rank_a < P_a))
        if bad.any():
            k = int(np.flatnonzero(bad.ravel())[0])
            r, p = float(rank_a.flat[k]), int(P_a.flat[k])
            raise EvalError(f"node({r:g}): the rank is outside 0 … {p - 1} (P = {p})", e.span)
        out = np.empty(rank_a.shape)
        for p in np.unique(P_a):
            sel = P_a == p
            out[sel] = self.mapping.node_of(rank_a[sel].astype(np.int64), int(p))
        return float(out) if out.ndim == 0 else out


    def _eval_ConfigRef(self, e, env, conc):
        from tlop.runtime.configs import ConfigError

        table = getattr(self.mapping, "table", None)
        if table is None:
            raise EvalError(f"{e.config}.{e.field} reads the configuration: evaluate the algorithm with one "
                            f"(--config NAME, or --layout FILE --partition FILE)", e.span)
        try:
            values = table(e.config, e.field)
        except ConfigError as err:
            raise EvalError(err.diagnostics[0].message, e.span) from None
        if e.index is None:
            if not isinstance(values, int):
                raise EvalError(f"{e.config}.{e.field} has one value per process: write {e.config}.{e.field}[p]",
                                e.span)
            return float(values)
        if isinstance(values, int):
            raise EvalError(f"{e.config}.{e.field} is one value, not one per process: write it without [ ]", e.span)
        idx = np.asarray(self._eval(e.index, env, conc), dtype=float)
        bad = ~(np.isfinite(idx) & (np.floor(idx) == idx) & (idx >= 0) & (idx < len(values)))
        if bad.any():
            v = float(idx.flat[int(np.flatnonzero(bad.ravel())[0])])
            raise EvalError(f"{e.config}.{e.field}[{v:g}]: the index is outside 0 … {len(values) - 1}", e.span)
        out = values[idx.astype(np.int64)]
        return float(out) if out.ndim == 0 else out


    def _eval_PerRankArg(self, e, env, conc):
        from tlop.runtime.per_rank import PerRankValues

        values = env.get(e.name)
        if not isinstance(values, PerRankValues):
            raise EvalError(f"no value for '{e.name}' (one value for each process)", e.span)
        idx = self._eval(e.index, env, conc)
        P = env.get(values.ranks) if values.values is None else None
        out = values.at(idx, P if P is not None else np.inf)
        if out is None:
            n = len(values.values) if values.values is not None else P
            r = values.first_bad_index(idx, P if P is not None else np.inf)
            raise EvalError(f"{e.name}[{r:g}]: the rank is outside 0 … {_count(n) - 1} (P = {_count(n)})", e.span)
        return out


def _count(n) -> int:
    """A process count for a message (the first of an array's)."""
    return int(np.ravel(np.asarray(n, dtype=float))[0])


