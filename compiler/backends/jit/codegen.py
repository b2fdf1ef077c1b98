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

The code is made by one class, :class:`CodeGen`, from mixins with one job each:
:mod:`tlop.backends.jit.assembly` (the module, the cost function's frame, the batch loop, errors,
the Ctrl-C poll), :mod:`tlop.backends.jit.exprgen` (arithmetic, ``if``, ``let``,
``sum|max|min``), :mod:`tlop.backends.jit.profilegen` (lookups, scalars, ``Transmit``, ``‖``,
channels); what the JIT accepts and the argument checks are :mod:`tlop.backends.jit.compilable`'s.
This module holds the class, the loop levels lookups use to choose their search, and the
dispatch to the schedule generators.

What it does not do: simplify (run the simplifier first), type-check, or decide cache keys.
"""

from __future__ import annotations

from typing import Optional

from llvmlite import ir

from tlop import ir as tir
from tlop.ir.visitor import ExprFunctor
from tlop.backends.interp import Interpreter

from tlop.backends.jit.assembly import BATCH_CALL_ATTRS, ERR_ARG, ERR_EVAL, ERR_NAN, ModuleAssembly
from tlop.backends.jit.compilable import (NotCompilable, ParamInfo, _closed_value, check_compilable,  # noqa: F401
                                          emit_arg_checks, param_infos)
from tlop.backends.jit.exprgen import ExprLowering
from tlop.backends.jit.llvmutil import Env as _Env, intrinsic as _intrinsic, is_const as _is_const  # noqa: F401
from tlop.backends.jit.profilegen import SHARE_M_SEGMENTS, ProfileAccess  # noqa: F401
from tlop.backends.jit.tables import ProfileLayout

__all__ = ["CodeGen", "ParamInfo", "param_infos", "ERR_ARG", "ERR_EVAL", "ERR_NAN", "NotCompilable",
           "check_compilable"]

# the names above stay importable from here (their old home): BATCH_CALL_ATTRS, emit_arg_checks,
# _Env, _intrinsic, _is_const, _closed_value, SHARE_M_SEGMENTS
_REEXPORTED = (BATCH_CALL_ATTRS, emit_arg_checks, _Env, _intrinsic, _is_const, _closed_value, SHARE_M_SEGMENTS)


class CodeGen(ModuleAssembly, ExprLowering, ProfileAccess, ExprFunctor):
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

    # ================================================================== dispatch
    visit_prefix = "gen_"
    #: ``gen(e, env, conc)``: the LLVM value of ``e`` (dispatch by node class)
    gen = ExprFunctor.visit

    def require_mapping(self):
        """Schedule code needs the kind of its process mapping: else :class:`NotCompilable`."""
        if self.mapping_kind is None:
            raise NotCompilable("a schedule needs the kind of its process mapping to be compiled", self.alg.span)

    def stages(self):
        """The stage code generator (:mod:`tlop.backends.jit.schedgen`), made on first use."""
        self.require_mapping()
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
