"""The reference interpreter of the cost IR: the oracle every faster engine must agree with.

What it does: evaluates an IR expression of :mod:`tlop.ir` against a platform profile, over
Python floats or numpy arrays (any argument may be an array; numpy broadcasting applies).  It
implements the τ-Lop semantics described in :mod:`tlop.ir` literally: a concurrency factor
carried down the tree (``Conc``), transmissions expanded through the profile's channel
decomposition (``Transmit``), and parallel composition by A2/A3 in lock-step phases
(``ParComp``).

What it does not do: simplify, cache, compile, or check types (the front end did).  It is
written for clarity and exactness, not speed; it never mutates the IR.

Rules an engine must reproduce exactly:

* ``sum`` over an empty range is 0; ``max``/``min`` over an empty range is an error.
* a reduction longer than :data:`MAX_TERMS` is an error (an engine limit the JIT shares).
* with array bounds, a reduction runs from the smallest ``lo`` to the largest ``hi`` and each
  element only counts the indices inside its own range.
* comparisons and logic give 1.0/0.0; ``%`` is the floored remainder; ``/`` is true division.
* ``if`` with a scalar test evaluates only the chosen branch; with an array test, both.
* a channel value must be a scalar (channel parameters take one channel).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from tlop import ir
from tlop.runtime.diagnostics import TlopError

__all__ = ["Interpreter", "evaluate", "EvalError"]


#: the longest reduction any engine runs (the JIT checks the same limit, so that no native loop
#: runs for hours without a way to interrupt it)
MAX_TERMS = 10_000_000


class EvalError(TlopError):
    """An evaluation failed (missing table, empty max range, bad channel …)."""


_FN = {
    "ceil": np.ceil, "floor": np.floor, "log2": np.log2, "abs": np.abs, "sqrt": np.sqrt,
    "exp": np.exp, "ln": np.log,
}
_CMP = {
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
}


def _scalar(x):
    """Collapse 0-d arrays to Python floats so scalar inputs give scalar outputs."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return float(x)
    return x


class Interpreter:
    """Evaluates IR of one :class:`~tlop.ir.Program` on one profile."""

    def __init__(self, program: ir.Program, profile):
        self.program = program
        self.profile = profile

    # ------------------------------------------------------------------ public
    def eval(self, e: ir.Expr, env: Mapping[str, Any], conc=1.0):
        with np.errstate(all="ignore"):
            return _scalar(self._eval(e, dict(env), conc))

    # ------------------------------------------------------------------ core
    def _eval(self, e, env, conc):
        method = getattr(self, "_eval_" + type(e).__name__)
        return method(e, env, conc)

    def _eval_Num(self, e, env, conc):
        return e.value

    def _eval_Var(self, e, env, conc):
        try:
            return env[e.name]
        except KeyError:
            raise EvalError(f"no value for '{e.name}'", e.span) from None

    def _eval_Bin(self, e, env, conc):
        a = self._eval(e.lhs, env, conc)
        b = self._eval(e.rhs, env, conc)
        op = e.op
        if op == "+":
            return np.add(a, b)
        if op == "-":
            return np.subtract(a, b)
        if op == "*":
            return np.multiply(a, b)
        if op == "/":
            return np.true_divide(a, b)
        if op == "^":
            return np.power(np.asarray(a, dtype=float), b)
        if op == "%":
            return np.mod(a, b)
        if op in _CMP:
            return _CMP[op](a, b).astype(float)
        if op == "and":
            return np.logical_and(a != 0, b != 0).astype(float)
        if op == "or":
            return np.logical_or(a != 0, b != 0).astype(float)
        raise EvalError(f"unknown operator '{op}'", e.span)

    def _eval_Neg(self, e, env, conc):
        return np.negative(self._eval(e.operand, env, conc))

    def _eval_Not(self, e, env, conc):
        return np.equal(self._eval(e.operand, env, conc), 0).astype(float)

    def _eval_Fn(self, e, env, conc):
        args = [self._eval(a, env, conc) for a in e.args]
        if e.name == "min":
            out = args[0]
            for a in args[1:]:
                out = np.minimum(out, a)
            return out
        if e.name == "max":
            out = args[0]
            for a in args[1:]:
                out = np.maximum(out, a)
            return out
        return _FN[e.name](np.asarray(args[0], dtype=float))

    def _eval_Cond(self, e, env, conc):
        t = self._eval(e.test, env, conc)
        if np.ndim(t) == 0:
            return self._eval(e.then_ if t != 0 else e.else_, env, conc)
        a = self._eval(e.then_, env, conc)
        b = self._eval(e.else_, env, conc)
        return np.where(np.asarray(t) != 0, a, b)

    def _eval_Let(self, e, env, conc):
        values = [(name, self._eval(v, env, conc)) for name, v in e.bindings]
        inner = dict(env)
        inner.update(values)
        return self._eval(e.body, inner, conc)

    def _eval_Reduce(self, e, env, conc):
        lo = self._eval(e.lo, env, conc)
        hi = self._eval(e.hi, env, conc)
        scalar = np.ndim(lo) == 0 and np.ndim(hi) == 0
        lo_min = np.min(lo)
        hi_max = np.max(hi)
        if not (np.isfinite(lo_min) and np.isfinite(hi_max)):
            raise EvalError(f"{e.kind} range bounds are not finite ({lo_min} .. {hi_max})", e.span)
        start, stop = int(math.ceil(lo_min)), int(math.floor(hi_max))
        if stop - start + 1 > MAX_TERMS:
            raise EvalError(f"{e.kind} over {stop - start + 1:,} terms ({start} .. {stop}) is longer than tlop "
                            f"evaluates (at most {MAX_TERMS:,} terms, in every engine)", e.span)
        inner = dict(env)
        if e.kind == "sum":
            acc = 0.0
            for i in range(start, stop + 1):
                inner[e.var] = float(i)
                v = self._eval(e.body, inner, conc)
                acc = acc + (v if scalar else np.where((i >= lo) & (i <= hi), v, 0.0))
            return acc
        if np.any(np.asarray(hi) < np.asarray(lo)):
            raise EvalError(f"{e.kind} over an empty range", e.span)
        pick = np.maximum if e.kind == "max" else np.minimum
        neutral = -np.inf if e.kind == "max" else np.inf
        acc = neutral
        for i in range(start, stop + 1):
            inner[e.var] = float(i)
            v = self._eval(e.body, inner, conc)
            acc = pick(acc, v if scalar else np.where((i >= lo) & (i <= hi), v, neutral))
        return acc

    # ------------------------------------------------------------------ profile access
    def _channel(self, expr, env, conc, what):
        c = self._eval(expr, env, conc)
        if np.ndim(c) != 0:
            raise EvalError(f"the channel of {what} must be a single channel, not an array", expr.span)
        c = float(c)
        if not c.is_integer() or not 0 <= c < len(self.program.channels):
            raise EvalError(f"{c:g} is not a channel of this program", expr.span)
        return self.program.channels[int(c)]

    def _profile_channel(self, model_channel, span, what):
        pch = self.profile.resolve_channel(model_channel)
        if pch is None:
            raise EvalError(
                f"profile '{self.profile.name}' has no channel for '{model_channel}' (needed by {what})", span)
        return pch

    def _eval_Lookup(self, e, env, conc):
        sig = self.program.tables[e.table]
        if e.channel is not None:
            mch = self._channel(e.channel, env, conc, f"table '{e.table}'")
            pch = self._profile_channel(mch, e.span, f"table '{e.table}'")
            label = f"{e.table}[{mch}]"
        else:
            pch, label = None, e.table
        key = sig.profile_key(self.profile, pch)
        if not self.profile.has_table(key, pch):
            raise EvalError(f"table '{label}' is missing from profile '{self.profile.name}'", e.span)
        table = self.profile.table(key, pch)
        args = [self._eval(a, env, conc) for a in e.args]
        tau = None
        if sig.tau_index is not None:
            tau = np.multiply(args.pop(sig.tau_index), conc)
        try:
            return table.lookup(args[0], tau) if tau is not None else table.lookup(args[0])
        except TlopError as err:
            raise EvalError(f"{label}: {err.diagnostics[0].message}", e.span) from None

    def _eval_Scalar(self, e, env, conc):
        if e.channel is not None:
            mch = self._channel(e.channel, env, conc, f"parameter '{e.name}'")
            pch = self._profile_channel(mch, e.span, f"parameter '{e.name}'")
            label = f"{e.name}[{mch}]"
        else:
            pch, label = None, e.name
        key = self.program.scalars[e.name].profile_key(self.profile, pch)
        if not self.profile.has_scalar(key, pch):
            raise EvalError(f"parameter '{label}' is missing from profile '{self.profile.name}'", e.span)
        return self.profile.scalar(key, pch)

    # ------------------------------------------------------------------ τ-Lop operators
    def _eval_Conc(self, e, env, conc):
        f = self._eval(e.factor, env, conc)
        return self._eval(e.body, env, np.multiply(conc, f))

    def variant(self, name, model_channel, span):
        """The transmission decomposition of ``name`` on ``model_channel`` under this profile."""
        idx = self.program.channels.index(model_channel)
        variants = self.program.variants(name, idx)
        if not variants:
            raise EvalError(f"transmission '{name}' is not defined on channel '{model_channel}'", span)
        pch = self._profile_channel(model_channel, span, f"transmission '{name}'")
        kind = self.profile.transmission_kind(pch)
        chosen = self.program.variant_for(name, idx, kind)
        if chosen is not None:
            return chosen
        kinds = ", ".join(sorted(str(v.via) for v in variants))
        raise EvalError(
            f"profile channel '{pch}' is a '{kind}' channel but {name}[{model_channel}] "
            f"is only defined via {kinds}", span)

    def _transmit(self, name, model_channel, size, env, conc, span):
        v = self.variant(name, model_channel, span)
        return self._eval(v.body, {v.param: size}, conc)

    def _eval_Transmit(self, e, env, conc):
        ch = self._channel(e.channel, env, conc, f"transmission '{e.name}'")
        return self._transmit(e.name, ch, self._eval(e.size, env, conc), env, conc, e.span)

    def _eval_Xmit(self, e, env, conc):
        raise EvalError("a concurrent transmission item outside a parallel composition", e.span)

    def _eval_ParComp(self, e, env, conc):
        phases = max(len(op) for op in e.operands)
        total = 0.0
        for k in range(phases):
            groups: dict = {}
            for op in e.operands:
                if k >= len(op):
                    continue
                x = op[k]
                ch = self._channel(x.channel, env, conc, f"transmission '{x.name}'")
                groups.setdefault((x.name, ch), []).append(
                    (self._eval(x.count, env, conc), self._eval(x.size, env, conc), x.span))
            phase_cost = None
            for (name, ch), items in groups.items():
                c = self._a2(name, ch, items, env, conc)
                phase_cost = c if phase_cost is None else np.maximum(phase_cost, c)  # A3
            total = total + phase_cost
        return total

    def _a2(self, name, ch, items, env, conc):
        """A2 on one channel: sizes sorted ascending, each increment carried by every item at
        least that large, with its multiplicity."""
        shape = np.broadcast_shapes(*(np.shape(w) for w, _, _ in items), *(np.shape(s) for _, s, _ in items))
        sizes = np.stack([np.broadcast_to(np.asarray(s, dtype=float), shape) for _, s, _ in items])
        weights = np.stack([np.broadcast_to(np.asarray(w, dtype=float), shape) for w, _, _ in items])
        order = np.argsort(sizes, axis=0, kind="stable")
        sizes = np.take_along_axis(sizes, order, axis=0)
        weights = np.take_along_axis(weights, order, axis=0)
        carried = np.flip(np.cumsum(np.flip(weights, axis=0), axis=0), axis=0)
        span = items[0][2]
        cost = 0.0
        prev = np.zeros(shape)
        for j in range(sizes.shape[0]):
            d = sizes[j] - prev
            prev = sizes[j]
            if not np.any(d > 0):
                continue
            t = self._transmit(name, ch, d, env, np.multiply(conc, carried[j]), span)
            cost = cost + np.where(d > 0, t, 0.0)
        return _scalar(np.asarray(cost)) if shape == () else cost


def evaluate(program: ir.Program, expr: ir.Expr, profile, env: Mapping[str, Any]):
    """Evaluate ``expr`` of ``program`` on ``profile`` with variables ``env`` (reference semantics)."""
    return Interpreter(program, profile).eval(expr, env)
