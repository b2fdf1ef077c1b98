"""Elaboration, part 3: schedules — ``stage {…}``, ``stages v in a .. b {…}`` and their items
(``send``, ``reduce``, ``exchange``, ``par``/``seq`` loops), lowered to :class:`ir.Stage`.

What it does not do: price anything (the back ends read the IR), or expressions in general
(:mod:`.expressions`).
"""

from __future__ import annotations

from tlop.frontend import ast as A
from tlop import ir
from tlop.ir import types as T

from tlop.frontend.elaborate.common import ERR, EXCHANGE_VAR, GAMMA, LOCAL


class Schedules:
    """The part of the elaborator that lowers stages."""

    def _Stage(self, e: A.Stage, env):
        items = tuple(self._item(i, env) for i in e.items)
        return ir.Stage(items, span=e.span, ty=T.TIME), T.TIME

    def _Stages(self, e: A.Stages, env):
        lo, tl = self.expr(e.lo, env)
        hi, th = self.expr(e.hi, env)
        for t, sub in ((tl, e.lo), (th, e.hi)):
            self._rule(lambda: T.reduction_bound("stages", t), (sub,), sub.span)
        inner = dict(env)
        inner[e.var] = (LOCAL, T.INT)
        items = tuple(self._item(i, inner) for i in e.items)
        stage = ir.Stage(items, span=e.span, ty=T.TIME)
        return ir.Reduce("sum", e.var, lo, hi, stage, span=e.span, ty=T.TIME), T.TIME

    def _item(self, i: A.Item, env) -> ir.Expr:
        """The IR of a stage item (typed ``item``)."""
        if isinstance(i, A.LoopItem):
            lo, tl = self.expr(i.lo, env)
            hi, th = self.expr(i.hi, env)
            for t, sub in ((tl, i.lo), (th, i.hi)):
                self._rule(lambda: T.reduction_bound(i.kind, t), (sub,), sub.span)
            inner = dict(env)
            inner[i.var] = (LOCAL, T.INT)
            if i.where is not None:
                where, tw = self.expr(i.where, inner)
                if tw not in (T.BOOL, ERR):
                    self.sink.error(f"the 'where' of '{i.kind}' must be a condition (bool), found {tw.describe()}; "
                                    f"compare it, e.g. 'where p % 2 == 0'", i.where.span)
            else:
                where = ir.Num(1.0, ty=T.BOOL)
            body = self._item(i.body, inner)
            return ir.Loop(i.kind, i.var, lo, hi, where, body, span=i.span, ty=T.ITEM)
        if isinstance(i, A.SendItem):
            src = self._int_expr(i.src, env, "the source rank of a send")
            dst = self._int_expr(i.dst, env, "the destination rank of a send")
            size, t = self.expr(i.size, env)
            size, t = self._fit(size, t, i.size, T.BYTES)
            if t not in (T.BYTES, ERR):
                self.sink.error(f"the size of a send must be a size (B), found {t.describe()}", i.size.span)
            if i.weight is not None:
                weight, tw = self.expr(i.weight, env)
                if tw != ERR and not (tw.is_num and tw.dimensionless):
                    self.sink.error(f"the weight of a send must be a plain number (the transfers it counts "
                                    f"for), found {tw.describe()}", i.weight.span)
            else:
                weight = ir.Num(1.0, ty=T.INT)
            return ir.Send(src, dst, size, weight, span=i.span, ty=T.ITEM)
        if isinstance(i, A.ExchangeItem):
            return self._exchange(i, env)
        if isinstance(i, A.ComputeItem):
            rank = self._int_expr(i.rank, env, f"the rank of '{i.kind}'")
            if i.kind == "compute":
                cost, t = self.expr(i.amount, env)
                cost, t = self._fit(cost, t, i.amount, T.TIME)
                if t not in (T.TIME, ERR):
                    self.sink.error(f"the cost of 'compute' must be a time (s), found {t.describe()}", i.amount.span)
                return ir.Compute(rank, cost, span=i.span, ty=T.ITEM)
            size, t = self.expr(i.amount, env)
            size, t = self._fit(size, t, i.amount, T.BYTES)
            if t not in (T.BYTES, ERR):
                self.sink.error(f"the size of 'reduce' must be a size (B), found {t.describe()}", i.amount.span)
            cost = self._gamma(size, i.span, "'reduce'")
            return ir.Compute(rank, cost, span=i.span, ty=T.ITEM)
        if isinstance(i, A.BlockItem):
            return ir.Block(tuple(self._item(x, env) for x in i.items), span=i.span, ty=T.ITEM)
        raise TypeError(f"not a stage item: {i!r}")

    def _gamma(self, size: ir.Expr, span, what: str) -> ir.Expr:
        """γ(size), the platform's reduction cost, or 0 s after an error when it has none."""
        sig = self.tables.get(GAMMA)
        if sig is None or sig.channel_indexed or sig.tau_index is not None or sig.ty != T.TIME:
            self.sink.error(f"{what} needs the platform's reduction cost table "
                            f"'table {GAMMA}(m: bytes) -> time' (import a platform that declares it)", span)
            return ir.Num(0.0, ty=T.TIME)
        return ir.Lookup(GAMMA, None, (size,), span=span, ty=T.TIME)

    def _exchange(self, i: A.ExchangeItem, env) -> ir.Expr:
        """``exchange a <-> b : size [combine]`` lowered for the module's model.

        τ-Lop prices an MPI_Sendrecv between a pair as the reference library and the papers do:
        one transfer a → b counting twice in τ (``weight 2``), followed, with ``combine``, by one
        reduction γ(size) (the pair's two reductions run at the same time on two ranks).  A
        dataflow model (LogGP, pLogP) sees the two messages: ``par`` over the two directions,
        each a send and, with ``combine``, the receiver's reduction of what it received."""
        a = self._int_expr(i.a, env, "a rank of an exchange")
        b = self._int_expr(i.b, env, "a rank of an exchange")
        size, t = self.expr(i.size, env)
        size, t = self._fit(size, t, i.size, T.BYTES)
        if t not in (T.BYTES, ERR):
            self.sink.error(f"the size of an exchange must be a size (B), found {t.describe()}", i.size.span)
        gamma = self._gamma(size, i.span, "'exchange … combine'") if i.combine else None
        one = ir.Num(1.0, ty=T.INT)
        if self.model in ("taulop", ""):
            # marked as an exchange (both directions, both combine) for what runs the schedule;
            # the cost is the weight-2 transfer's
            send = ir.Send(a, b, size, ir.Num(2.0, ty=T.INT), span=i.span, ty=T.ITEM, exchange=True)
            if gamma is None:
                return send
            return ir.Block((send, ir.Compute(a, gamma, span=i.span, ty=T.ITEM, exchange=True)), span=i.span,
                            ty=T.ITEM)
        x = ir.Var(EXCHANGE_VAR, ty=T.INT)
        first = ir.Bin("==", x, ir.Num(0.0, ty=T.INT), ty=T.BOOL)
        src = ir.Cond(first, a, b, ty=T.INT)
        dst = ir.Cond(first, b, a, ty=T.INT)
        body = ir.Send(src, dst, size, one, span=i.span, ty=T.ITEM)
        if gamma is not None:
            body = ir.Block((body, ir.Compute(dst, gamma, span=i.span, ty=T.ITEM)), span=i.span, ty=T.ITEM)
        return ir.Loop("par", EXCHANGE_VAR, ir.Num(0.0, ty=T.INT), one, ir.Num(1.0, ty=T.BOOL), body,
                       span=i.span, ty=T.ITEM)
