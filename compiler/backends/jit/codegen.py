"""Cost IR to LLVM IR: the native form of one algorithm on one profile structure.

What it does: translates an :class:`tlop.ir.Algorithm` body into an LLVM function that computes
the cost of one parameter point with the semantics of :mod:`tlop.backends.interp`, operation for
operation and in the same order, so results agree with the interpreter to the last few ulps:

* every operator and function as :mod:`tlop.ir.ops` defines it (the test suite checks each
  one, edge cases included): arithmetic in IEEE double (no fast-math), ``^`` as ``pow``, ``%``
  as the floored remainder, comparisons and logic as 1.0/0.0 with NaN true, ``min``/``max``
  as :func:`tlop.ir.ops.minimum` / :func:`~tlop.ir.ops.maximum` (NaN propagates), ``if`` as a
  branch (only the chosen side runs);
* ``sum|max|min`` as loops over an integer counter (runtime bounds; empty ``sum`` is 0, empty
  ``max``/``min`` and non-finite bounds are evaluation errors);
* in a dataflow model (LogGP, pLogP, LogGPH) a schedule program — the outermost stage, or ``+``,
  ``*``, ``sum`` holding one, as the interpreter finds it — through
  :mod:`tlop.backends.jit.dataflowgen` (:meth:`CodeGen.dataflow_program`);
* ``Lookup`` through :func:`tlop.backends.jit.tables.emit_lookup` with the concurrency factor applied to
  the τ slot, ``Conc`` as a factor carried at code-generation time, ``Transmit`` expanded to
  the decomposition the profile's channel kind selects, ``ParComp`` through the shared τ-Lop
  reduction :func:`tlop.ir.taulop.expand_parcomp` (channels and orders known at compile time
  folded by :meth:`CodeGen.static`), generated like any other expression.

It dispatches through :class:`tlop.ir.visitor.ExprFunctor` (a node class without a ``gen_``
method is an error, never a silent fallback).

Channel values are usually compile-time constants (channel parameters are specialised, see
:mod:`tlop.backends.jit.evaluator`); a channel computed at run time becomes a ``switch`` over the
program's channels.  Evaluation errors set ``status[0] = 2`` and continue with NaN; the
evaluator then re-runs the interpreter on that point to report its exact message.  Lookups
outside the grid under ``out_of_grid = "warn"`` flag their table slot in ``status[2 + slot]``
(in the order tables first went out) and record the lookup's m and τ
(:func:`tlop.backends.jit.tables.status_words`).

The one exported function of a module (prefix ``sym``):

``void sym_batch(i64 lo, i64 hi, double** argp, i64* strides, double** tabs, double* scal,
double* out, i64* status)``
    the native batch loop over points ``lo … hi-1`` (argument ``k`` of point ``i`` at
    ``argp[k][i * strides[k]]``), checking every argument (NaN, integrality, constraint),
    evaluation errors and NaN results.  It runs every point (no early exit) and then reports
    the first failure compactly: ``status[0] = 0`` if none; else the first failing point is
    the first NaN in ``out[lo:status[1]]`` (an argument failure or a NaN result,
    ``status[0] = 3``) or, if there is none, ``status[1]`` (an evaluation error,
    ``status[0] = 2``).  The scalar entry points (the CPython wrapper of
    :mod:`tlop.backends.jit.pywrap`, the ctypes slow path) run it for one point; a module built with
    a ``scalar_mask`` holds a loop specialised for some arguments being scalars.

What it does not do: simplify (run the simplifier first), type-check, or decide cache keys.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from llvmlite import ir

from tlop import ir as tir
from tlop.ir.constfold import const_value
from tlop.ir.taulop import expand_parcomp
from tlop.ir.visitor import ExprFunctor
from tlop.runtime.diagnostics import TlopError
from tlop.backends.interp import BOUND_LIMIT, MAX_TERMS, Interpreter

from tlop.backends.jit import interrupt as _interrupt
from tlop.backends.jit.tables import F64, F64P, I1, I64, I8, ProfileLayout, emit_lookup, oog_count_word, oog_word

__all__ = ["CodeGen", "ParamInfo", "param_infos", "ERR_ARG", "ERR_EVAL", "ERR_NAN", "NotCompilable",
           "check_compilable"]


class NotCompilable(TlopError):
    """An algorithm the JIT does not compile: per-rank arguments, a schedule without a mapping, a
    dataflow composition the interpreter refuses, a module too large.  Callers that chose the
    engine themselves (the command line's ``--engine auto``) fall back to the interpreter."""


def check_compilable(alg: tir.Algorithm, program: Optional[tir.Program] = None) -> None:
    """Raise :class:`NotCompilable` when ``alg`` holds a schedule (stages, ``node(…)``) in an
    algorithm that is not declared over a mapping, a schedule in a dataflow model (LogGP, pLogP,
    LogGPH) composed in a way the interpreter refuses (:func:`tlop.backends.dataflow.check_composition`:
    it reports the error), or an algorithm with a per-rank parameter (``counts: bytes[P]``: the
    native calling convention takes one double per parameter).  τ-Lop schedules are compiled by
    :mod:`tlop.backends.jit.schedgen`, dataflow programs by :mod:`tlop.backends.jit.dataflowgen`."""
    if tir.has_schedule(alg.body):
        _check_schedule_compilable(alg, program)
    per_rank = [p for p in alg.params if getattr(p, "per_rank", None) is not None]
    if per_rank:
        p = per_rank[0]
        raise NotCompilable(f"'{alg.name}' takes a per-rank argument ({p.name}: {p.type}[{p.per_rank}]), which the JIT "
                            f"does not compile; the interpreter evaluates it (--engine interp, or "
                            f"AlgorithmHandle.evaluate)", alg.span)


def _check_schedule_compilable(alg: tir.Algorithm, program: Optional[tir.Program]) -> None:
    from tlop.backends.dataflow_names import DATAFLOW_MODELS

    model = program.model if program is not None else ""
    if model in DATAFLOW_MODELS:
        # a dataflow program (tlop.backends.jit.dataflowgen), unless its composition is one the
        # interpreter refuses (it reports the error)
        from tlop.backends.jit.dataflowgen import composition_problem

        err = composition_problem(alg, model)
        if err is not None:
            raise NotCompilable(f"'{alg.name}': {err.diagnostics[0].message}; the interpreter "
                                f"reports it (--engine interp)", alg.span)
    if alg.over is None:
        raise NotCompilable(f"'{alg.name}' has a schedule but no process mapping ('over map: mapping'); the "
                            f"interpreter reports what is missing", alg.span)

ERR_ARG, ERR_EVAL, ERR_NAN = 1, 2, 3
_NAN = ir.Constant(F64, float("nan"))
_ZERO = ir.Constant(F64, 0.0)
_ONE = ir.Constant(F64, 1.0)
_PROFILE_NODES = (tir.Lookup, tir.Scalar, tir.Transmit, tir.ParComp, tir.Conc, tir.Xmit, tir.Reduce)
BATCH_CALL_ATTRS = ("alwaysinline",)
#: reuse the m segment of a lookup for the next lookup of a table with the same m grid
SHARE_M_SEGMENTS = True
_FN_INTRINSIC = {"ceil": "llvm.ceil", "floor": "llvm.floor", "log2": "llvm.log2", "abs": "llvm.fabs",
                 "sqrt": "llvm.sqrt", "exp": "llvm.exp", "ln": "llvm.log"}
_CMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=="}


def _closed_value(e: tir.Expr) -> float:
    v = const_value(e)
    return v if v is not None else float(Interpreter(tir.Program((), {}, {}, {}, {}), None).eval(e, {}))


class ParamInfo:
    """An algorithm parameter as the native checks see it."""

    def __init__(self, p: tir.ParamSig):
        self.name = p.name
        self.type = p.type
        self.integer = p.type in ("int", "channel")
        self.channel = p.type == "channel"
        self.default = _closed_value(p.default) if p.default is not None else None
        if p.constraint is not None:
            self.op, self.bound = p.constraint[0], _closed_value(p.constraint[1])
        else:
            self.op = self.bound = None


def param_infos(alg: tir.Algorithm) -> list:
    return [ParamInfo(p) for p in alg.params]


def _is_const(v) -> bool:
    return isinstance(v, ir.Constant) and v.type == F64


def emit_arg_checks(b: ir.IRBuilder, infos: list, values: list):
    """An ``i1`` that is true when every argument passes what ``bind_arguments`` checks: not
    NaN, integral for ``int``/``channel``, and the declared constraint."""
    ok = ir.Constant(I1, 1)
    for info, v in zip(infos, values):
        if info.channel:
            continue
        good = b.fcmp_ordered("ord", v, v)
        if info.integer:
            fl = b.call(_intrinsic(b.module, "llvm.floor"), [v])
            good = b.and_(good, b.fcmp_ordered("==", fl, v))
        if info.op is not None:
            bound = ir.Constant(F64, info.bound)
            if info.op == "!=":
                c = b.fcmp_unordered("!=", v, bound)
            else:
                c = b.fcmp_ordered(_CMP[info.op], v, bound)
            good = b.and_(good, c)
        ok = b.and_(ok, good)
    return ok


def _intrinsic(module: ir.Module, name: str, n: int = 1):
    return module.declare_intrinsic(name, [F64], ir.FunctionType(F64, [F64] * n))


class _Env(dict):
    """Variable name -> LLVM value (an ``ir.Constant`` when known at compile time)."""


class CodeGen(ExprFunctor):
    """Generates the native functions of one algorithm under one :class:`ProfileLayout`.

    ``channel_args`` maps each channel parameter to the channel index this code is
    specialised for."""

    def __init__(self, program: tir.Program, alg: tir.Algorithm, layout: ProfileLayout,
                 channel_args: dict, sym: str, scalar_mask: int = 0, mapping_kind: Optional[str] = None,
                 closed_q: Optional[str] = None, config_fields: tuple = ()):
        self.program = program
        #: the configuration fields the evaluator passes as data (:mod:`tlop.backends.jit.configdata`)
        self.config_fields = tuple(config_fields)
        #: the ranks-per-node variable of a closed form over the mapping (bound from the mapping)
        self.closed_q = closed_q
        #: the kind of process mapping schedules are compiled for (:data:`tlop.backends.jit.schedgen.MAPPING_KINDS`)
        self.mapping_kind = mapping_kind
        self._stagegen = None
        self.scalar_mask = scalar_mask  # bit k: argument k is one value for the whole batch
        self._levels: dict = {}  # id(value) -> (value, loop level), see level()
        self._depth = 0  # enclosing sum/max/min loops
        self._msegs: dict = {}  # (id(m), m policy) -> (m, slot, m segment, table pointer, block)
        self.alg = alg
        self.layout = layout
        self.channel_args = channel_args
        self.sym = sym
        self.infos = param_infos(alg)
        self.module = ir.Module(name=sym)
        self.nslots = len(layout.tables)
        self._tstack: list = []
        self._spec_globals: dict = {}
        self._entry_values: dict = {}  # key -> a value computed once, in the entry block
        self._const_interp = Interpreter(program, None)

    # ================================================================== module
    def build(self) -> str:
        """Generate the module (``sym_batch`` and its inlined cost function); returns its LLVM
        IR text.  With ``scalar_mask != 0`` the batch loop is specialised for those arguments
        being one value for the whole batch (stride 0): they are read once, before the loop,
        so that LLVM hoists everything that depends on them alone (e.g. the lookup ``g(s)``)."""
        self._emit_batch(self._emit_core())
        return str(self.module)

    # ------------------------------------------------------------------ loop levels
    def set_level(self, value, level: int):
        self._levels[id(value)] = (value, level)
        return value

    def level(self, value) -> int:
        """The innermost loop ``value`` varies in: -1 for values fixed for a whole batch
        (constants, profile data, arguments of ``scalar_mask``), 0 for per-point values,
        ``k`` for values depending on the counter of the k-th enclosing ``sum``; unknown
        phis count as varying everywhere.  Used only to choose how lookups search their
        grids (a hoistable search or an inlined one), never for correctness."""
        top = 1 << 20
        memo = self._levels
        stack = [value]
        while stack:
            v = stack[-1]
            if isinstance(v, (ir.Constant, ir.Argument, ir.GlobalValue)) or id(v) in memo:
                stack.pop()
                continue
            if isinstance(v, ir.PhiInstr) or not isinstance(v, ir.Instruction):
                memo[id(v)] = (v, top)
                stack.pop()
                continue
            todo = [o for o in v.operands if not isinstance(o, (ir.Constant, ir.Argument, ir.GlobalValue))
                    and id(o) not in memo]
            if todo:
                stack.extend(todo)
                continue
            lv = -1
            for o in v.operands:
                if id(o) in memo:
                    lv = max(lv, memo[id(o)][1])
            memo[id(v)] = (v, lv)
            stack.pop()
        if isinstance(value, (ir.Constant, ir.Argument, ir.GlobalValue)):
            return -1
        return memo[id(value)][1]

    def hoistable(self, value) -> bool:
        """True when ``value`` is invariant in the innermost loop around the current code
        (the batch loop counts as the outermost one)."""
        return self.level(value) < self._depth

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
        whether anything failed — no early exit, so the body is straight-line code: LLVM
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

    # ================================================================== helpers
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

    def _bool(self, c):
        return self.b.uitofp(c, F64)

    def _truth(self, v):
        return self.b.fcmp_unordered("!=", v, _ZERO)

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

    # ================================================================== expressions
    visit_prefix = "gen_"
    #: ``gen(e, env, conc)``: the LLVM value of ``e`` (dispatch by node class)
    gen = ExprFunctor.visit

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

    # ------------------------------------------------------------------ profile access
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

    # ------------------------------------------------------------------ τ-Lop operators
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

    def stages(self):
        """The stage code generator (:mod:`tlop.backends.jit.schedgen`), made on first use."""
        if self.mapping_kind is None:
            raise NotCompilable("a schedule needs the kind of its process mapping to be compiled", self.alg.span)
        if self._stagegen is None:
            from tlop.backends.jit.schedgen import StageGen

            self._stagegen = StageGen(self)
        return self._stagegen

    def gen_Stage(self, e, env, conc):
        if self.dataflow_program(e):
            return self.dataflows().cost(e, env, conc)
        return self.stages().gen_Stage(e, env, conc)

    def dataflow_program(self, e) -> bool:
        """Whether ``e`` is the root of a schedule program in a dataflow model (LogGP, pLogP,
        LogGPH: the interpreter's ``_schedule_program``): a stage, or a ``+``/``*``/``sum`` holding one."""
        from tlop.backends.dataflow_names import DATAFLOW_MODELS

        if self.program.model not in DATAFLOW_MODELS:
            return False
        from tlop.backends.dataflow import holds_stage

        return holds_stage(e)

    def dataflows(self):
        """The dataflow program generator (:mod:`tlop.backends.jit.dataflowgen`), made on first use."""
        if getattr(self, "_dataflowgen", None) is None:
            from tlop.backends.jit.dataflowgen import DataflowGen

            self._dataflowgen = DataflowGen(self)
        return self._dataflowgen

    def gen_NodeOf(self, e, env, conc):
        return self.stages().gen_NodeOf(e, env, conc)

    def _outside_stage(self, e, env, conc):
        return self.fail()  # the interpreter: "a schedule item … outside a stage"

    gen_Loop = gen_Send = gen_Compute = gen_Block = _outside_stage

    def gen_ConfigRef(self, e, env, conc):
        from tlop.backends.jit.configdata import emit_config_ref

        return emit_config_ref(self, e, env, conc)

    def gen_PerRankArg(self, e, env, conc):
        raise NotCompilable(f"a per-rank argument ({e.name}[…]) is not compiled by the JIT; the interpreter "
                            "evaluates it", getattr(e, "span", None))

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
