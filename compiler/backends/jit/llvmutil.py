"""Small LLVM values and helpers every native code generator of the JIT shares.

What it does: the variable environment of generated code (:class:`Env`: IR variable name → LLVM
value, an ``ir.Constant`` when known at compile time), the declaration of a one-double LLVM
intrinsic (:func:`intrinsic`), a test for a compile-time double (:func:`is_const`), and the
double constants 0, 1 and NaN.

What it does not do: generate code for any IR node (:mod:`tlop.backends.jit.codegen` and the
modules it names do), or define the profile's table layout (:mod:`tlop.backends.jit.tables`).
"""

from __future__ import annotations

from llvmlite import ir

from tlop.backends.jit.tables import F64

__all__ = ["Env", "intrinsic", "is_const", "NAN", "ZERO", "ONE"]

NAN = ir.Constant(F64, float("nan"))
ZERO = ir.Constant(F64, 0.0)
ONE = ir.Constant(F64, 1.0)


class Env(dict):
    """Variable name -> LLVM value (an ``ir.Constant`` when known at compile time)."""


def intrinsic(module: ir.Module, name: str, n: int = 1):
    """The LLVM intrinsic ``name`` on doubles, taking ``n`` of them (declared once per module)."""
    return module.declare_intrinsic(name, [F64], ir.FunctionType(F64, [F64] * n))


def is_const(v) -> bool:
    """``v`` is a double known at compile time."""
    return isinstance(v, ir.Constant) and v.type == F64
