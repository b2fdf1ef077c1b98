"""LLVM JIT evaluators for the cost IR (llvmlite).

``compile_algorithm(program, name, profile)`` returns an :class:`Evaluator`: ``ev(**args)``
prices one point (a native CPython wrapper), ``ev.batch(**arrays)`` prices a numpy broadcast
of points in one native loop.  Results agree with the reference interpreter
(:mod:`tlop.interp`) to a few ulps; errors are the interpreter's errors.

Modules: :mod:`~tlop.jit.codegen` (IR → LLVM IR), :mod:`~tlop.jit.tables` (profile tables as
data and the lookup), :mod:`~tlop.jit.pywrap` (the scalar call wrapper), :mod:`~tlop.jit.engine`
(the MCJIT engine and O3 pipeline), :mod:`~tlop.jit.cache` (the on-disk object cache),
:mod:`~tlop.jit.evaluator` (the Python-facing object).
"""

from .evaluator import CompileStats, Evaluator, compile_algorithm

__all__ = ["compile_algorithm", "Evaluator", "CompileStats"]
