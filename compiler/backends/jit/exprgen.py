"""Arithmetic, conditionals, bindings and ``sum|max|min`` loops, lowered to LLVM operation for operation.

What it does: :class:`ExprLowering` (mixed into :class:`tlop.backends.jit.codegen.CodeGen`)
emits the IR's plain expressions with the meaning :mod:`tlop.ir.ops` gives them (the test
suite checks each operator, edge cases included): arithmetic in IEEE double (no fast-math),
``^`` as ``pow`` (exact powers of two from their bits), ``%`` as the floored remainder,
comparisons and logic as 1.0/0.0 with NaN true, bit operations and shifts on whole numbers below
2^53, ``min``/``max`` as :func:`tlop.ir.ops.minimum` / :func:`~tlop.ir.ops.maximum` (NaN
propagates), ``if`` as a branch (only the chosen side runs), ``let``, and ``sum|max|min`` as
loops over an integer counter with the interpreter's checks of their bounds (each iteration
polls for Ctrl-C); a ``sum`` of a schedule that does not depend on its index is the schedule
once, times the number of terms.

What it does not do: read the profile (:mod:`tlop.backends.jit.profilegen`), compile schedules
(:mod:`tlop.backends.jit.schedgen`, :mod:`tlop.backends.jit.dataflowgen`), or build the
function around the code (:mod:`tlop.backends.jit.assembly`).
"""

from __future__ import annotations

import math

from llvmlite import ir

from tlop import ir as tir
from tlop.runtime.diagnostics import TlopError
from tlop.backends.interp import BOUND_LIMIT, MAX_TERMS

from tlop.backends.jit.compilable import _CMP
from tlop.backends.jit.llvmutil import NAN as _NAN, ONE as _ONE, ZERO as _ZERO, Env as _Env
from tlop.backends.jit.llvmutil import intrinsic as _intrinsic, is_const as _is_const
from tlop.backends.jit.profilegen import _PROFILE_NODES
from tlop.backends.jit.tables import F64, I64

__all__ = ["ExprLowering"]

_FN_INTRINSIC = {"ceil": "llvm.ceil", "floor": "llvm.floor", "log2": "llvm.log2", "abs": "llvm.fabs",
                 "sqrt": "llvm.sqrt", "exp": "llvm.exp", "ln": "llvm.log"}


class ExprLowering:
    """The plain expressions of a :class:`~tlop.backends.jit.codegen.CodeGen`."""

    def _bool(self, c):
        return self.b.uitofp(c, F64)

    def _truth(self, v):
        return self.b.fcmp_unordered("!=", v, _ZERO)

    def gen_Num(self, e, env, conc):
        return ir.Constant(F64, float(e.value))

    def gen_Var(self, e, env, conc):
        v = env.get(e.name)
        return self.fail() if v is None else v

    def gen_Bin(self, e, env, conc):
        if e.op in ("+", "*") and self.dataflow_program(e):
            return self.dataflows().cost(e, env, conc)
        b = self.b
        x = self.gen(e.lhs, env, conc)
        y = self.gen(e.rhs, env, conc)
        op = e.op
        if op == "+":
            return b.fadd(x, y)
        if op == "-":
            return b.fsub(x, y)
        if op == "*":
            return b.fmul(x, y)
        if op == "/":
            return b.fdiv(x, y)
        if op == "^":
            if _is_const(x) and x.constant == 2.0:
                return self._exp2_exact(y)
            return b.call(_intrinsic(self.module, "llvm.pow", 2), [x, y])
        if op == "%":
            return self._mod(x, y)
        if op in _CMP:
            return self._bool(b.fcmp_ordered(_CMP[op], x, y))
        if op == "!=":
            return self._bool(b.fcmp_unordered("!=", x, y))
        if op == "and":
            return self._bool(b.and_(self._truth(x), self._truth(y)))
        if op == "or":
            return self._bool(b.or_(self._truth(x), self._truth(y)))
        if op == "div":
            return b.call(_intrinsic(self.module, "llvm.floor"), [b.fdiv(x, y)])
        if op in ("xor", "&"):
            ok = b.and_(self._is_int(x), self._is_int(y))
            xi = b.fptosi(b.select(ok, x, _ZERO), I64)
            yi = b.fptosi(b.select(ok, y, _ZERO), I64)
            r = b.xor(xi, yi) if op == "xor" else b.and_(xi, yi)
            return b.select(ok, b.sitofp(r, F64), _NAN)
        if op in ("<<", ">>"):
            return self._shift(x, y, op == "<<")
        raise TlopError(f"unknown operator '{op}'", e.span)

    def _is_int(self, v):
        """``v`` is a whole number of magnitude ``< 2^53`` (the operands of xor, &, << and >>)."""
        b = self.b
        whole = b.fcmp_ordered("==", b.call(_intrinsic(self.module, "llvm.floor"), [v]), v)
        small = b.fcmp_ordered("<", b.call(_intrinsic(self.module, "llvm.fabs"), [v]),
                               ir.Constant(F64, float(2 ** 53)))
        return b.and_(whole, small)

    def _shift(self, x, y, left: bool):
        """``x << y = x · 2^y`` and ``x >> y = floor(x · 2^−y)`` for ``y`` in 0 … 63 (NaN
        otherwise), with ``2^±y`` built exactly from its bits (as :mod:`tlop.ir.ops` does with
        ``ldexp``)."""
        b = self.b
        in_range = b.and_(b.fcmp_ordered(">=", y, _ZERO), b.fcmp_ordered("<=", y, ir.Constant(F64, 63.0)))
        whole = b.fcmp_ordered("==", b.call(_intrinsic(self.module, "llvm.floor"), [y]), y)
        ok = b.and_(b.and_(in_range, whole), self._is_int(x))
        k = b.fptosi(b.select(ok, y, _ZERO), I64)
        expo = b.add(k, ir.Constant(I64, 1023)) if left else b.sub(ir.Constant(I64, 1023), k)
        scale = b.bitcast(b.shl(expo, ir.Constant(I64, 52)), F64)
        r = b.fmul(x, scale)
        if not left:
            r = b.call(_intrinsic(self.module, "llvm.floor"), [r])
        return b.select(ok, r, _NAN)

    def _exp2_exact(self, y):
        """``2 ^ y``: for an integer ``y`` in ``-1022 … 1023`` the result is the exact power of
        two, built from its bits (``pow`` returns the same exact value, at the price of a libm
        call); anything else calls ``pow`` as before."""
        b = self.b
        in_range = b.and_(b.fcmp_ordered(">=", y, ir.Constant(F64, -1022.0)),
                          b.fcmp_ordered("<=", y, ir.Constant(F64, 1023.0)))
        k = b.fptosi(b.select(in_range, y, _ZERO), I64)
        exact = b.and_(in_range, b.fcmp_ordered("==", b.sitofp(k, F64), y))
        fast_bb = b.append_basic_block("exp2_bits")
        slow_bb = b.append_basic_block("exp2_pow")
        join = b.append_basic_block("exp2_join")
        b.cbranch(exact, fast_bb, slow_bb)
        b.position_at_end(fast_bb)
        bits = b.bitcast(b.shl(b.add(k, ir.Constant(I64, 1023)), ir.Constant(I64, 52)), F64)
        b.branch(join)
        b.position_at_end(slow_bb)
        slow = b.call(_intrinsic(self.module, "llvm.pow", 2), [ir.Constant(F64, 2.0), y])
        b.branch(join)
        b.position_at_end(join)
        phi = b.phi(F64)
        phi.add_incoming(bits, fast_bb)
        phi.add_incoming(slow, slow_bb)
        return self.set_level(phi, self.level(y))

    def _mod(self, a, b_):
        """numpy's floored remainder (``npy_divmod``)."""
        b = self.b
        mod = self._rem(a, b_)
        adj = b.and_(b.fcmp_ordered("!=", mod, _ZERO),
                     b.xor(b.fcmp_ordered("<", b_, _ZERO), b.fcmp_ordered("<", mod, _ZERO)))
        mod2 = b.select(adj, b.fadd(mod, b_), mod)
        zero_signed = b.call(_intrinsic(self.module, "llvm.copysign", 2), [_ZERO, b_])
        mod3 = b.select(b.fcmp_ordered("==", mod, _ZERO), zero_signed, mod2)
        return b.select(b.fcmp_ordered("==", b_, _ZERO), mod, mod3)

    def _rem(self, a, b_):
        """C's ``fmod(a, b)``: ``a`` itself when 0 ≤ a < b; for whole numbers of magnitude below
        2^31 (ranks) and b ≠ 0 a 32-bit integer remainder (the same value, exactly; ``fmod`` is a library call that costs
        several times more), else ``frem``."""
        b = self.b
        if _is_const(a) and _is_const(b_):
            return b.frem(a, b_)
        # 0 <= a < b: a itself (ranks already in range: no division at all)
        inside = b.and_(b.fcmp_ordered(">=", a, _ZERO), b.fcmp_ordered("<", a, b_))
        near_bb = b.append_basic_block("rem_inside")
        far_bb = b.append_basic_block("rem_outside")
        done_bb = b.append_basic_block("rem_done")
        b.cbranch(inside, near_bb, far_bb)
        b.position_at_end(far_bb)
        far = self._rem_outside(a, b_)
        far_end = b.block
        b.branch(done_bb)
        b.position_at_end(near_bb)
        b.branch(done_bb)
        b.position_at_end(done_bb)
        phi = b.phi(F64)
        phi.add_incoming(a, near_bb)
        phi.add_incoming(far, far_end)
        return self.set_level(phi, max(self.level(a), self.level(b_)))

    def _rem_outside(self, a, b_):
        b = self.b
        fabs, floor = _intrinsic(self.module, "llvm.fabs"), _intrinsic(self.module, "llvm.floor")
        lim = ir.Constant(F64, float(2 ** 31 - 1))

        def small_int(v):
            return b.and_(b.fcmp_ordered("==", b.call(floor, [v]), v), b.fcmp_ordered("<=", b.call(fabs, [v]), lim))
        ints = b.and_(b.and_(small_int(a), small_int(b_)), b.fcmp_ordered("!=", b_, _ZERO))
        fast_bb = b.append_basic_block("rem_int")
        slow_bb = b.append_basic_block("rem_fmod")
        join = b.append_basic_block("rem_join")
        b.cbranch(ints, fast_bb, slow_bb)
        b.position_at_end(fast_bb)
        i32 = ir.IntType(32)
        fast = b.sitofp(b.srem(b.fptosi(a, i32), b.fptosi(b_, i32)), F64)
        b.branch(join)
        b.position_at_end(slow_bb)
        slow = b.frem(a, b_)
        b.branch(join)
        b.position_at_end(join)
        phi = b.phi(F64)
        phi.add_incoming(fast, fast_bb)
        phi.add_incoming(slow, slow_bb)
        return self.set_level(phi, max(self.level(a), self.level(b_)))

    def gen_Neg(self, e, env, conc):
        return self.b.fneg(self.gen(e.operand, env, conc))

    def gen_Not(self, e, env, conc):
        return self._bool(self.b.fcmp_ordered("==", self.gen(e.operand, env, conc), _ZERO))

    def gen_Fn(self, e, env, conc):
        args = [self.gen(a, env, conc) for a in e.args]
        if e.name in ("min", "max"):
            from tlop.backends.jit.tables import _np_max, _np_min
            pick = _np_max if e.name == "max" else _np_min
            out = args[0]
            for a in args[1:]:
                out = pick(self.b, out, a)
            return out
        name = _FN_INTRINSIC.get(e.name)
        if name is None:
            raise TlopError(f"unknown function '{e.name}'", e.span)
        return self.b.call(_intrinsic(self.module, name), [args[0]])

    def gen_Cond(self, e, env, conc):
        b = self.b
        s = self.static(e.test, env) if not any(isinstance(n, _PROFILE_NODES) for n in tir.walk(e.test)) else None
        if s is not None:
            return self.gen(e.then_ if s != 0 else e.else_, env, conc)
        t = self._truth(self.gen(e.test, env, conc))
        then_bb = b.append_basic_block("then")
        else_bb = b.append_basic_block("else")
        join = b.append_basic_block("endif")
        b.cbranch(t, then_bb, else_bb)
        b.position_at_end(then_bb)
        a = self.gen(e.then_, env, conc)
        a_end = b.block
        b.branch(join)
        b.position_at_end(else_bb)
        c = self.gen(e.else_, env, conc)
        c_end = b.block
        b.branch(join)
        b.position_at_end(join)
        phi = b.phi(F64)
        phi.add_incoming(a, a_end)
        phi.add_incoming(c, c_end)
        return phi

    def gen_Let(self, e, env, conc):
        values = [(name, self.gen(v, env, conc)) for name, v in e.bindings]
        inner = _Env(env)
        inner.update(values)
        return self.gen(e.body, inner, conc)

    def gen_Reduce(self, e, env, conc):
        if e.kind == "sum" and self.dataflow_program(e):
            return self.dataflows().cost(e, env, conc)
        b = self.b
        lo = self.gen(e.lo, env, conc)
        hi = self.gen(e.hi, env, conc)
        fabs = _intrinsic(self.module, "llvm.fabs")
        # the interpreter's checks (tlop.backends.interp.check_reduce_bounds): finite bounds
        # within ±2^53, at most MAX_TERMS terms, a non-empty range for max/min; the message
        # is re-derived by the interpreter
        lim = ir.Constant(F64, BOUND_LIMIT)
        ok = b.and_(b.fcmp_ordered("<=", b.call(fabs, [lo]), lim), b.fcmp_ordered("<=", b.call(fabs, [hi]), lim))
        span = b.fsub(b.call(_intrinsic(self.module, "llvm.floor"), [hi]),
                      b.call(_intrinsic(self.module, "llvm.ceil"), [lo]))
        ok = b.and_(ok, b.fcmp_ordered("<", span, ir.Constant(F64, float(MAX_TERMS))))
        if e.kind != "sum":
            ok = b.and_(ok, b.fcmp_ordered(">=", span, _ZERO))
        neutral = {"sum": _ZERO, "max": ir.Constant(F64, -math.inf), "min": ir.Constant(F64, math.inf)}[e.kind]
        if e.kind == "sum" and e.var not in tir.free_vars(e.body) and tir.has_schedule(e.body):
            return self._repeated_stage(e, env, conc, lo, hi, ok)
        pre = b.block
        loop_pre = b.append_basic_block(f"{e.kind}_pre")
        err_bb = b.append_basic_block(f"{e.kind}_err")
        head = b.append_basic_block(f"{e.kind}_head")
        body = b.append_basic_block(f"{e.kind}_body")
        exit_bb = b.append_basic_block(f"{e.kind}_exit")
        join = b.append_basic_block(f"{e.kind}_join")
        b.cbranch(ok, loop_pre, err_bb)
        b.position_at_end(err_bb)
        err_v = self.fail()
        b.branch(join)
        b.position_at_end(loop_pre)
        start = b.fptosi(b.call(_intrinsic(self.module, "llvm.ceil"), [lo]), I64)
        stop = b.fptosi(b.call(_intrinsic(self.module, "llvm.floor"), [hi]), I64)
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64, e.var)
        acc = b.phi(F64, "acc")
        i.add_incoming(start, loop_pre)
        acc.add_incoming(neutral, loop_pre)
        b.cbranch(b.icmp_signed("<=", i, stop), body, exit_bb)
        b.position_at_end(body)
        inner = _Env(env)
        self._depth += 1
        try:
            inner[e.var] = self.set_level(b.sitofp(i, F64), self._depth)
            v = self.gen(e.body, inner, conc)
        finally:
            self._depth -= 1
        from tlop.backends.jit.tables import _np_max, _np_min
        if e.kind == "sum":
            acc2 = b.fadd(acc, v)
        elif e.kind == "max":
            acc2 = _np_max(b, acc, v)
        else:
            acc2 = _np_min(b, acc, v)
        # the Ctrl-C poll at the end of the iteration: the body's code then runs on every
        # iteration the loop enters, so LLVM may hoist its invariant table searches
        self.poll()
        i.add_incoming(b.add(i, ir.Constant(I64, 1)), b.block)
        acc.add_incoming(acc2, b.block)
        b.cbranch(b.load(self.stop), exit_bb, head)
        b.position_at_end(exit_bb)
        b.branch(join)
        b.position_at_end(join)
        phi = b.phi(F64)
        phi.add_incoming(err_v, err_bb)
        phi.add_incoming(acc, exit_bb)
        del pre
        return phi

    def _repeated_stage(self, e, env, conc, lo, hi, ok):
        """``sum k in lo .. hi: S`` where the schedule ``S`` does not depend on ``k``: ``S``
        evaluated once, times the number of terms (the interpreter's rule; 0 for an empty
        range, without evaluating ``S``)."""
        b = self.b
        with b.goto_block(self.fn.entry_basic_block):
            out = b.alloca(F64, name="rep")
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                b.store(self.fail(), out)
            with then:
                n = b.fadd(b.fsub(b.call(_intrinsic(self.module, "llvm.floor"), [hi]),
                                  b.call(_intrinsic(self.module, "llvm.ceil"), [lo])), _ONE)
                with b.if_else(b.fcmp_ordered(">=", n, _ONE)) as (some, none):
                    with some:
                        b.store(b.fmul(n, self.gen(e.body, env, conc)), out)
                    with none:
                        b.store(_ZERO, out)
        return b.load(out)
