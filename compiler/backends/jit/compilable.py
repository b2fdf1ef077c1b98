"""What the JIT compiles, and the checks of an algorithm's arguments in native code.

What it does: :func:`check_compilable` refuses (:class:`NotCompilable`) an algorithm the code
generator does not compile — a schedule without a process mapping, a dataflow composition the
interpreter refuses, a per-rank parameter; :class:`ParamInfo` / :func:`param_infos` give each
parameter as the native checks see it (integer, channel, default, constraint), and
:func:`emit_arg_checks` emits the checks ``bind_arguments`` makes (not NaN, integral, the
declared constraint) as one LLVM ``i1``.

What it does not do: generate the cost function (:mod:`tlop.backends.jit.codegen`), or report
why an argument failed (the evaluator re-runs the binder for the message).
"""

from __future__ import annotations

from typing import Optional

from llvmlite import ir

from tlop import ir as tir
from tlop.ir.constfold import const_value
from tlop.runtime.diagnostics import TlopError
from tlop.backends.interp import Interpreter

from tlop.backends.jit.llvmutil import intrinsic as _intrinsic
from tlop.backends.jit.tables import F64, I1

__all__ = ["NotCompilable", "check_compilable", "ParamInfo", "param_infos", "emit_arg_checks"]

_CMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=="}


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

