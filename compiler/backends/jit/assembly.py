"""The native module of one algorithm: the cost function's frame, the batch loop, errors and the Ctrl-C poll.

What it does: :class:`ModuleAssembly` (mixed into :class:`tlop.backends.jit.codegen.CodeGen`)
builds the module (:meth:`~ModuleAssembly.build`): the cost function ``sym_core`` (its entry
block, the arguments bound as IR variables, the whole-evaluation term budget of
:mod:`tlop.backends.budget`, the body the expression generators emit, the release of the
stages' scratch) and the exported batch loop ``sym_batch`` (every point evaluated, arguments and
the mapping's process count checked, the first failure reported in ``status`` — see
:mod:`tlop.backends.jit.codegen` for the calling convention); values computed once in the entry
block (:meth:`~ModuleAssembly.at_entry`); evaluation errors (:meth:`~ModuleAssembly.flag_error`,
:meth:`~ModuleAssembly.check`, :meth:`~ModuleAssembly.fail`); and the Ctrl-C poll every loop
makes (:meth:`~ModuleAssembly.poll`, through :mod:`tlop.backends.jit.interrupt`).

What it does not do: lower expressions (:mod:`tlop.backends.jit.exprgen`,
:mod:`tlop.backends.jit.profilegen`, the schedule generators), or load, run or cache the module
(:mod:`tlop.backends.jit.evaluator`).
"""

from __future__ import annotations

import math

from llvmlite import ir

from tlop import ir as tir
from tlop.backends.interp import MAX_TERMS

from tlop.backends.jit import interrupt as _interrupt
from tlop.backends.jit.compilable import emit_arg_checks
from tlop.backends.jit.llvmutil import NAN as _NAN, ONE as _ONE, Env as _Env
from tlop.backends.jit.tables import F64, F64P, I1, I64, I8

__all__ = ["ModuleAssembly", "ERR_ARG", "ERR_EVAL", "ERR_NAN", "BATCH_CALL_ATTRS"]

ERR_ARG, ERR_EVAL, ERR_NAN = 1, 2, 3
BATCH_CALL_ATTRS = ("alwaysinline",)


class ModuleAssembly:
    """The module, the cost function's frame, errors and the Ctrl-C poll of a :class:`~tlop.backends.jit.codegen.CodeGen`."""

    def build(self) -> str:
        """Generate the module (``sym_batch`` and its inlined cost function); returns its LLVM
        IR text.  With ``scalar_mask != 0`` the batch loop is specialised for those arguments
        being one value for the whole batch (stride 0): they are read once, before the loop,
        so that LLVM hoists everything that depends on them alone (e.g. the lookup ``g(s)``)."""
        self._emit_batch(self._emit_core())
        return str(self.module)

    def _emit_core(self) -> ir.Function:
        fnty = ir.FunctionType(F64, [F64P, F64P.as_pointer(), F64P, I64.as_pointer(), I64, I64])
        fn = ir.Function(self.module, fnty, f"{self.sym}_core")
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")  # its one caller is the batch loop
        args, tabs, scal, st, idx, started = fn.args
        for a in (args, tabs, scal, st):
            a.add_attribute("noalias")
        self.fn = fn
        self.tabs, self.scal, self.st, self.idx = tabs, scal, st, idx
        b = self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.oog_flag = b.alloca(I8, name="outside")  # one slot, at the top: never inside a loop
        self.bad = b.alloca(I1, name="bad")  # a check of check() failed at this point
        b.store(ir.Constant(I1, 0), self.bad)
        # Ctrl-C: loops count their iterations in ``work`` and poll the interrupt counter
        self.stop = b.alloca(I1, name="stop")
        b.store(ir.Constant(I1, 0), self.stop)
        self.work = b.alloca(I64, name="work")
        b.store(ir.Constant(I64, 0), self.work)
        self.sigcount = None
        if tir.has_schedule(self.alg.body) or any(isinstance(n, tir.Reduce) for n in tir.walk_unique(self.alg.body)):
            # the interrupt counter when the batch started (a signal during any point of the
            # batch stops every later point's loops too)
            self.sigcount = started
        env = _Env()
        for k, info in enumerate(self.infos):
            if info.channel:
                env[info.name] = ir.Constant(F64, float(self.channel_args[info.name]))
            else:
                v = b.load(b.gep(args, [ir.Constant(I64, k)]), name=info.name)
                env[info.name] = self.set_level(v, -1 if self.scalar_mask >> k & 1 else 0)
        if self.alg.over is not None and "P" in env:
            env[tir.RANKS] = env["P"]  # schedules read the process count (bind_mapping)
            if self.closed_q is not None:
                env[self.closed_q] = self.stages().ranks_per_node(env["P"])
        body = self.alg.body
        self._emit_budget(body, env)
        if getattr(self.alg, "requires", None) is not None:
            # where COND fails: NaN, which the caller reports with the binder's message
            body = tir.Cond(self.alg.requires, body, tir.Num(math.nan, ty=body.ty), ty=body.ty)
        r = self.gen(body, env, None)
        b = self.b
        if self._stagegen is not None:
            self._stagegen.release()  # the stages' scratch table (one per evaluation)
        with b.if_then(b.load(self.bad), likely=False):
            self.flag_error()
        b.ret(r)
        return fn

    def _emit_budget(self, body, env):
        """The whole-evaluation term budget (:mod:`tlop.backends.budget`): the count expression
        first; over :data:`MAX_TERMS` the point is an evaluation error (the interpreter gives
        the message) and nothing else runs."""
        from tlop.backends.budget import term_count

        from tlop.backends.dataflow_names import DATAFLOW_MODELS

        count = term_count(body, self.program.model in DATAFLOW_MODELS)
        if count is None:
            return
        if getattr(self.alg, "requires", None) is not None:
            count = tir.Cond(self.alg.requires, count, tir.Num(0.0))
        b = self.b
        n = self.gen(count, env, None)
        over_bb = b.append_basic_block("over_budget")
        go_bb = b.append_basic_block("within_budget")
        b.cbranch(b.fcmp_ordered(">", n, ir.Constant(F64, float(MAX_TERMS))), over_bb, go_bb)
        b.position_at_end(over_bb)
        self.flag_error()
        b.ret(_NAN)
        b.position_at_end(go_bb)

    def _emit_batch(self, core):
        """The batch loop.  Every point is evaluated and stored (the cost function is inlined;
        a point whose arguments fail the checks stores NaN), and the loop only accumulates
        whether anything failed — no early exit except after a Ctrl-C a point's loops saw (only
        in programs with loops, and tested only after a point flagged an error), so the body of a
        point that succeeds is straight-line code: LLVM
        hoists whatever does not depend on the point and can vectorise cost functions without
        searches.  Arguments of ``scalar_mask`` are read once, before the loop.

        On return ``status[0]`` is 0 when every point succeeded.  Otherwise the first failing
        point is the first NaN in ``out[lo:status[1]]`` (an argument failing its checks, or a
        NaN result: ``status[0] = 3``), else ``status[1]`` itself (the first evaluation error,
        ``status[0] = 2``)."""
        i64p = I64.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [I64, I64, F64P.as_pointer(), i64p, F64P.as_pointer(),
                                               F64P, F64P, i64p])
        fn = ir.Function(self.module, fnty, f"{self.sym}_batch")
        lo, hi, argp, strides, tabs, scal, out, st = fn.args
        for a in (argp, strides, out, st):
            a.add_attribute("noalias")
        entry = fn.append_basic_block("entry")
        head = fn.append_basic_block("head")
        body = fn.append_basic_block("body")
        done = fn.append_basic_block("done")
        find = fn.append_basic_block("find")
        ret = fn.append_basic_block("ret")
        b = ir.IRBuilder(entry)
        n = len(self.infos)
        buf = b.alloca(F64, ir.Constant(I64, max(n, 1)))
        ptrs, strs, fixed = [], [], {}
        for k in range(n):
            ptrs.append(b.load(b.gep(argp, [ir.Constant(I64, k)])))
            strs.append(b.load(b.gep(strides, [ir.Constant(I64, k)])))
            if self.scalar_mask >> k & 1:
                fixed[k] = b.load(ptrs[k])

        # the Ctrl-C counter when the batch starts: each point's loops poll against it
        started = b.call(self._interrupt_function(_interrupt.NOW_FUNCTION, I64, []), [])

        def point_values(i):
            return [fixed[k] if k in fixed else b.load(b.gep(ptrs[k], [b.mul(i, strs[k])])) for k in range(n)]

        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64, "i")
        bad = b.phi(I1, "bad")
        i.add_incoming(lo, entry)
        bad.add_incoming(ir.Constant(I1, 0), entry)
        b.cbranch(b.icmp_signed("<", i, hi), body, done)
        b.position_at_end(body)
        vals = point_values(i)
        for k, v in enumerate(vals):
            b.store(v, b.gep(buf, [ir.Constant(I64, k)]))
        ok = emit_arg_checks(b, self.infos, vals)
        if self.mapping_kind is not None and "P" in [i.name for i in self.infos]:
            ok = b.and_(ok, self._mapping_check(b, vals[[i.name for i in self.infos].index("P")], scal))
        r = b.call(core, [buf, tabs, scal, st, i, started], attrs=BATCH_CALL_ATTRS)
        v = b.select(ok, r, _NAN)
        b.store(v, b.gep(out, [i]))
        if self.sigcount is not None:
            # the point's loops poll for Ctrl-C and stop on it, flagging an evaluation error:
            # then the batch stops too (else every later point would run up to its first poll,
            # which for 10^5 points is seconds).  Polled only after a flagged error: the
            # straight-line path of a point that succeeded gains one load and a branch.
            more = fn.append_basic_block("more")
            check = fn.append_basic_block("interrupted")
            b.cbranch(b.icmp_signed("!=", b.load(st), ir.Constant(I64, 0)), check, more)
            b.position_at_end(check)
            hit = b.call(self._interrupt_function(_interrupt.POLL_FUNCTION, I1, [I64]), [started])
            b.cbranch(hit, done, more)
            b.position_at_end(more)
        i.add_incoming(b.add(i, ir.Constant(I64, 1)), b.block)
        dv = b.fsub(v, v)  # NaN exactly when v is ±inf or NaN: a non-finite cost fails
        bad.add_incoming(b.or_(bad, b.fcmp_unordered("uno", dv, dv)), b.block)
        b.branch(head)

        b.position_at_end(done)
        flag = b.load(st)
        has_eval = b.icmp_signed("!=", flag, ir.Constant(I64, 0))
        b.cbranch(b.or_(bad, has_eval), find, ret)
        # something failed: say where the first evaluation error is (``hi`` if none); the
        # caller finds the first NaN before it in ``out`` and tells argument failures from
        # NaN results (cold code stays out of the module, which keeps compiles short)
        b.position_at_end(find)
        e0 = b.select(has_eval, b.load(b.gep(st, [ir.Constant(I64, 1)])), hi)
        b.store(b.select(has_eval, ir.Constant(I64, ERR_EVAL), ir.Constant(I64, ERR_NAN)), st)
        b.store(e0, b.gep(st, [ir.Constant(I64, 1)]))
        b.branch(ret)
        b.position_at_end(ret)
        b.ret_void()
        return fn

    def _mapping_check(self, b, P, scal):
        """The process count is one the mapping places (``Mapping.check``): 1 … MAX_RANKS, and
        a layout's own P."""
        from tlop.backends.jit.schedgen import MAP_WORDS  # noqa: F401 - the words' layout
        from tlop.runtime.mapping import MAX_RANKS

        ok = b.and_(b.fcmp_ordered(">=", P, _ONE), b.fcmp_ordered("<=", P, ir.Constant(F64, float(MAX_RANKS))))
        if self.mapping_kind == "layout":
            base = self.layout.grid_base + len(self.layout.tables)
            ok = b.and_(ok, b.fcmp_ordered("==", P, b.load(b.gep(scal, [ir.Constant(I64, base + 2)]))))
        return ok

    def at_entry(self, key, make):
        """``make(builder)`` emitted once, at the end of the cost function's entry block (so it
        dominates every use, outside every loop), and remembered under ``key``: data that is
        fixed for a whole evaluation (a configuration field's length and array, a layout's node
        table).  ``make`` may use only the function's arguments and constants."""
        v = self._entry_values.get(key)
        if v is None:
            b = self.b
            with b.goto_block(self.fn.entry_basic_block):
                v = make(b)
            self._entry_values[key] = v
        return v

    def _interrupt_function(self, name, ret, args):
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
            for a in _interrupt.FUNCTION_ATTRIBUTES:
                fn.attributes.add(a)
        return fn

    def poll(self):
        """One loop iteration: count it, and every :data:`~tlop.backends.jit.interrupt.POLL_MASK` + 1
        iterations of the point check whether Ctrl-C was pressed since the point started; if
        so set ``stop`` (every loop then exits), the interrupt's hit word and an evaluation
        error."""
        b = self.b
        w = b.add(b.load(self.work), ir.Constant(I64, 1))
        b.store(w, self.work)
        if self.sigcount is None:
            return
        due = b.icmp_signed("==", b.and_(w, ir.Constant(I64, _interrupt.POLL_MASK)), ir.Constant(I64, 0))
        with b.if_then(due, likely=False):
            # through a function that only touches memory this code cannot reach: never deleted,
            # and no obstacle to hoisting the loop's invariant lookups (interrupt.POLL_FUNCTION)
            hit = b.call(self._interrupt_function(_interrupt.POLL_FUNCTION, I1, [I64]), [self.sigcount])
            with b.if_then(hit, likely=False):
                b.store(ir.Constant(I1, 1), self.stop)
                self.flag_error()

    def flag_error(self):
        """Record an evaluation error at this point: ``status[0] = 2`` and, for the first
        one (points run in increasing order), ``status[1] = index``."""
        b = self.b
        first = b.icmp_signed("==", b.load(self.st), ir.Constant(I64, 0))
        where = b.gep(self.st, [ir.Constant(I64, 1)])
        b.store(b.select(first, self.idx, b.load(where)), where)
        b.store(ir.Constant(I64, ERR_EVAL), self.st)

    def check(self, bad):
        """An evaluation error at this point when the ``i1`` ``bad`` holds (the interpreter's
        :func:`~tlop.backends.interp.check_size` / ``check_concurrency`` give the message).
        Branch-free: or-ed into one flag tested once at the end of the point, so the checked
        code stays in one block (lookups keep sharing their grid segments)."""
        b = self.b
        b.store(b.or_(b.load(self.bad), bad), self.bad)

    def fail(self):
        """An evaluation error here: flag it and continue with NaN."""
        self.flag_error()
        return _NAN
