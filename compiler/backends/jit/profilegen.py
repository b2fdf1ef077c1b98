"""The profile in native code: table lookups, scalars, transmissions, ``‖`` and channels.

What it does: :class:`ProfileAccess` (mixed into :class:`tlop.backends.jit.codegen.CodeGen`)
emits ``Lookup`` through :func:`tlop.backends.jit.tables.emit_lookup` (the concurrency factor
applied to the τ slot; the m segment of a lookup reused by the next lookup of a table with the
same m grid in the same block; lookups outside the grid flagged per ``out_of_grid``),
``Scalar``, ``Conc`` as a factor carried at code-generation time, ``Transmit`` expanded to the
decomposition the profile's channel kind selects, and ``ParComp`` through the shared τ-Lop
reduction :func:`tlop.ir.taulop.expand_parcomp`; channel values known at compile time are folded
(:meth:`~ProfileAccess.static`), others become a run-time ``switch`` over the program's
channels (:meth:`~ProfileAccess.on_channel`).

What it does not do: lay out or search the tables (:mod:`tlop.backends.jit.tables`), or price
schedules (:mod:`tlop.backends.jit.schedgen`, :mod:`tlop.backends.jit.dataflowgen`).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from llvmlite import ir

from tlop import ir as tir
from tlop.ir.constfold import const_value
from tlop.ir.taulop import expand_parcomp
from tlop.runtime.diagnostics import TlopError

from tlop.backends.jit.llvmutil import ZERO as _ZERO, Env as _Env
from tlop.backends.jit.llvmutil import intrinsic as _intrinsic, is_const as _is_const
from tlop.backends.jit.tables import F64, I64, I8, emit_lookup, oog_count_word, oog_word

__all__ = ["ProfileAccess", "SHARE_M_SEGMENTS"]

_PROFILE_NODES = (tir.Lookup, tir.Scalar, tir.Transmit, tir.ParComp, tir.Conc, tir.Xmit, tir.Reduce)
#: reuse the m segment of a lookup for the next lookup of a table with the same m grid
SHARE_M_SEGMENTS = True


class ProfileAccess:
    """Profile data, ``‖`` and channels for a :class:`~tlop.backends.jit.codegen.CodeGen`."""

    def static(self, e: tir.Expr, env: _Env) -> Optional[float]:
        """The value of ``e`` when it is known at compile time (channel expressions)."""
        if isinstance(e, tir.Num):
            return float(e.value)
        if isinstance(e, tir.Var):
            v = env.get(e.name)
            return float(v.constant) if _is_const(v) else None
        if isinstance(e, tir.Cond):
            t = self.static(e.test, env)
            if t is None:
                return None
            return self.static(e.then_ if t != 0 else e.else_, env)
        if isinstance(e, tir.Let):
            # every binding is evaluated (the interpreter's order), so a binding that is not
            # known here — it may fail at run time — makes the whole Let dynamic
            inner = _Env(env)
            for name, v in e.bindings:
                s = self.static(v, env)
                if s is None:
                    return None
                inner[name] = ir.Constant(F64, s)
            return self.static(e.body, inner)
        if any(isinstance(n, _PROFILE_NODES) for n in tir.walk(e)):
            return None
        consts = {}
        for name in tir.free_vars(e):
            v = env.get(name)
            if not _is_const(v):
                return None
            consts[name] = float(v.constant)
        v = const_value(e, consts)
        if v is not None:
            return v
        try:
            with np.errstate(all="ignore"):
                r = self._const_interp.eval(e, consts)
        except TlopError:
            return None
        return float(r) if np.ndim(r) == 0 else None

    def _channel_index(self, c: float) -> Optional[int]:
        if math.isfinite(c) and float(c).is_integer() and 0 <= c < len(self.program.channels):
            return int(c)
        return None

    def on_channel(self, expr: tir.Expr, env: _Env, conc, emit):
        """``emit(channel_index)`` for the channel ``expr`` denotes: directly when it is known
        at compile time, else through a run-time switch (an invalid channel is an error)."""
        b = self.b
        s = self.static(expr, env)
        if s is not None:
            c = self._channel_index(s)
            return self.fail() if c is None else emit(c)
        v = self.gen(expr, env, conc)
        nch = len(self.program.channels)
        valid = b.and_(b.fcmp_ordered("==", b.call(_intrinsic(self.module, "llvm.floor"), [v]), v),
                       b.and_(b.fcmp_ordered(">=", v, _ZERO), b.fcmp_ordered("<", v, ir.Constant(F64, nch))))
        iv = b.select(valid, b.fptosi(v, I64), ir.Constant(I64, -1))
        join = b.append_basic_block("ch_join")
        default = b.append_basic_block("ch_bad")
        sw = b.switch(iv, default)
        incoming = []
        for c in range(nch):
            bb = b.append_basic_block(f"ch{c}")
            sw.add_case(ir.Constant(I64, c), bb)
            b.position_at_end(bb)
            r = emit(c)
            incoming.append((r, b.block))
            b.branch(join)
        b.position_at_end(default)
        incoming.append((self.fail(), b.block))
        b.branch(join)
        b.position_at_end(join)
        phi = b.phi(F64)
        for r, bb in incoming:
            phi.add_incoming(r, bb)
        return phi

    def _table_ptr(self, slot: int):
        b = self.b
        t = self.layout.tables[slot]
        if not self.layout.specialize:
            return b.load(b.gep(self.tabs, [ir.Constant(I64, slot)]))
        g = self._spec_globals.get(("t", slot))
        if g is None:
            arrty = ir.ArrayType(F64, len(t.block))
            g = ir.GlobalVariable(self.module, arrty, f"{self.sym}_table{slot}")
            g.global_constant = True
            g.linkage = "internal"
            g.initializer = ir.Constant(arrty, [float(x) for x in t.block])
            self._spec_globals[("t", slot)] = g
        return b.gep(g, [ir.Constant(I64, 0), ir.Constant(I64, 0)])

    def gen_Lookup(self, e, env, conc):
        b = self.b
        sig = self.program.tables.get(e.table)
        if sig is None:
            return self.fail()
        args = [self.gen(a, env, conc) for a in e.args]
        tau = None
        if sig.tau_index is not None:
            if sig.tau_index >= len(args):
                return self.fail()
            tau = args.pop(sig.tau_index)
            if conc is not None:
                tau = b.fmul(tau, conc)
            self.check(b.fcmp_ordered("<=", tau, _ZERO))  # concurrency must be positive
        if not args:
            raise TlopError(f"table '{e.table}' takes no size argument; the JIT needs one", e.span)
        m = args[0]
        self.check(b.fcmp_ordered("<", m, _ZERO))  # no negative size

        def emit(c):
            mch = None if c is None else self.program.channels[c]
            slot = self.layout.table_slot(e.table, mch)
            if isinstance(slot, str):
                return self.fail()
            t = self.layout.tables[slot]
            if (t.ndim == 2) != (tau is not None):
                return self.fail()
            fn = emit_lookup(self.module, t.ndim, t.policy, self.hoistable(m),
                             tau is not None and self.hoistable(tau))
            if t.policy.out_of_grid != "allow":
                flag = self.oog_flag
                b.store(ir.Constant(I8, 0), flag)
            else:
                flag = ir.Constant(I8.as_pointer(), None)
            ptr = self._table_ptr(slot)
            # same m, same m policy, a table looked up just before in this block: if its m grid
            # is this one's (the profile's grid ids, two loads), reuse its m segment — unless
            # m is invariant in the loop around, where LLVM hoists the search out anyway (and a
            # shared index would keep what depends on it in the loop)
            key = (id(m), t.policy.m_below, t.policy.m_beyond)
            prev = self._msegs.get(key)
            hint = ir.Constant(I64, -1)
            if SHARE_M_SEGMENTS and prev is not None and prev[4] is b.block and not self.hoistable(m):
                if prev[1] == slot:
                    hint = prev[2]
                else:
                    same = self._same_grid(prev[1], slot)
                    if same is not None:
                        hint = b.select(same, prev[2], hint) if not isinstance(same, bool) else prev[2]
            res = b.call(fn, [ptr, m, tau if tau is not None else _ZERO, flag, hint])
            r = b.extract_value(res, 0)
            mseg = b.extract_value(res, 1)
            if t.policy.out_of_grid != "allow":
                outside = b.icmp_unsigned("!=", b.load(flag), ir.Constant(I8, 0))
                with b.if_then(outside):
                    if t.policy.out_of_grid == "error":
                        self.flag_error()
                    else:
                        w = b.gep(self.st, [ir.Constant(I64, 2 + slot)])
                        with b.if_then(b.icmp_signed("==", b.load(w), ir.Constant(I64, 0))):
                            count = b.gep(self.st, [ir.Constant(I64, oog_count_word(self.nslots))])
                            rank = b.add(b.load(count), ir.Constant(I64, 1))  # the order tables went out
                            b.store(rank, count)
                            b.store(rank, w)
                            at = oog_word(self.nslots, slot)  # the lookup's m, τ: the warning's words
                            b.store(b.bitcast(m, I64), b.gep(self.st, [ir.Constant(I64, at)]))
                            b.store(b.bitcast(tau if tau is not None else _ZERO, I64),
                                    b.gep(self.st, [ir.Constant(I64, at + 1)]))
            self._msegs[key] = (m, slot, mseg, ptr, b.block)
            return r

        if e.channel is None:
            return emit(None)
        return self.on_channel(e.channel, env, conc, emit)

    def _same_grid(self, a: int, c: int):
        """Whether table slots ``a`` and ``c`` have the same m grid: an ``i1`` comparing their
        grid ids (run-time data), or True/None when the profile is specialised."""
        lay = self.layout
        if lay.specialize:
            return True if lay.grid_ids[a] == lay.grid_ids[c] else None
        b = self.b

        def gid(slot):
            return b.load(b.gep(self.scal, [ir.Constant(I64, lay.grid_base + slot)]))
        return b.fcmp_ordered("==", gid(a), gid(c))

    def gen_Scalar(self, e, env, conc):
        b = self.b

        def emit(c):
            mch = None if c is None else self.program.channels[c]
            slot = self.layout.scalar_slot(e.name, mch)
            if isinstance(slot, str):
                return self.fail()
            if self.layout.specialize:
                return ir.Constant(F64, self.layout.scalar_values[slot])
            return b.load(b.gep(self.scal, [ir.Constant(I64, slot)]))

        if e.channel is None:
            return emit(None)
        return self.on_channel(e.channel, env, conc, emit)

    def gen_Conc(self, e, env, conc):
        f = self.gen(e.factor, env, conc)
        self.check(self.b.fcmp_ordered("<=", f, _ZERO))  # concurrency must be positive
        return self.gen(e.body, env, f if conc is None else self.b.fmul(conc, f))

    def _transmit(self, name: str, c: int, size, conc, span):
        v = self.layout.variant(name, c)
        if v is None:
            return self.fail()
        key = (name, c)
        if key in self._tstack:
            raise TlopError(f"transmission '{name}' is defined in terms of itself", span)
        self._tstack.append(key)
        try:
            return self.gen(v.body, _Env({v.param: size}), conc)
        finally:
            self._tstack.pop()

    def gen_Transmit(self, e, env, conc):
        size = self.gen(e.size, env, conc)
        self.check(self.b.fcmp_ordered("<", size, _ZERO))  # no negative size
        return self.on_channel(e.channel, env, conc, lambda c: self._transmit(e.name, c, size, conc, e.span))

    def gen_Xmit(self, e, env, conc):
        return self.fail()

    def gen_ParComp(self, e, env, conc):
        """The shared τ-Lop reduction, with channel identities and size orders that are known
        at compile time (specialised channel arguments, constants) folded away."""
        def decide(cond):
            v = self.static(cond, env)
            return None if v is None else v != 0
        for operand in e.operands:  # the counts the user wrote must be positive (as the interpreter)
            for x in operand:
                self.check(self.b.fcmp_ordered("<=", self.gen(x.count, env, conc), _ZERO))
        return self.gen(expand_parcomp(e, decide).expr, env, conc)
