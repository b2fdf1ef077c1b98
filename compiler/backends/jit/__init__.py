"""LLVM JIT evaluators for the cost IR (llvmlite).

``compile_algorithm(program, name, profile)`` returns an :class:`Evaluator`: ``ev(**args)``
prices one point (a native CPython wrapper), ``ev.batch(**arrays)`` prices a numpy broadcast
of points in one native loop.  Results agree with the reference interpreter
(:mod:`tlop.backends.interp`) to a few ulps; errors are the interpreter's errors.

Modules: :mod:`~tlop.backends.jit.codegen` (IR → LLVM IR), :mod:`~tlop.backends.jit.tables` (profile tables as
data and the lookup), :mod:`~tlop.backends.jit.pywrap` (the scalar call wrapper), :mod:`~tlop.backends.jit.engine`
(the MCJIT engine and O3 pipeline), :mod:`~tlop.backends.jit.cache` (the on-disk object cache),
:mod:`~tlop.backends.jit.evaluator` (the Python-facing object); schedules: :mod:`~tlop.backends.jit.schedgen`
(τ-Lop stages) and :mod:`~tlop.backends.jit.dataflowgen` (LogGP/pLogP/LogGPH dataflow programs).
"""

from tlop.backends.jit.codegen import NotCompilable
from tlop.backends.jit.evaluator import CompileStats, Evaluator, compile_algorithm

__all__ = ["compile_algorithm", "Evaluator", "CompileStats", "NotCompilable"]
