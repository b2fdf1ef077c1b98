"""The IR verifier: every node's type annotation agrees with what its children give.

What it does: walks an expression, an algorithm or a whole program and, for every node,
recomputes its type from its children's annotations, the program's declarations and the
variables in scope (:func:`tlop.ir.typecheck.node_type`), and reports every node whose
annotation is missing or different; constants must fit their type (an ``int`` is a whole
number, a channel a valid channel index, a ``bool`` 0 or 1); an algorithm's cost and a
transmission's body must be a time, defaults and constraint bounds closed and of the
parameter's dimension.  Tests run it after lowering and after every simplifier pass, so a pass
that breaks dimensions fails at the pass that did it.

What it does not do: fill in missing annotations (:func:`tlop.ir.typecheck.annotate` does) or
report user errors (the front end does, with source locations).
"""

from __future__ import annotations

from typing import Mapping, Optional

from tlop.ir import nodes as N
from tlop.ir import types as T
from tlop.ir.typecheck import IRTypeError, _where, child_env, node_type, param_type
from tlop.ir.types import Type, TypeRuleError

__all__ = ["verify_expr", "verify_algorithm", "verify_program", "problems_of", "IRTypeError"]


def problems_of(e: N.Expr, program: Optional[N.Program], env: Mapping[str, Type]) -> list:
    """Every typing problem of ``e`` (strings), empty when it is well typed."""
    out: list = []
    _check(e, program, dict(env), out)
    return out


def _check(e: N.Expr, program, env, out: list) -> Optional[Type]:
    kids = N.children(e)
    tys: list = []
    for i, k in enumerate(kids):
        tys.append(_check(k, program, child_env(e, i, env, tys), out))
    if e.ty is None:
        out.append(f"{_where(e)}: no type annotation")
        return None
    if not isinstance(e.ty, Type) or e.ty.is_error:
        out.append(f"{_where(e)}: annotated with {e.ty!r}, which is not a type")
        return None
    if isinstance(e, N.Num):
        bad = _constant_problem(e, program)
        if bad:
            out.append(f"{_where(e)}: {bad}")
        return e.ty
    if any(t is None for t in tys):
        return e.ty  # a child is already reported
    try:
        want = node_type(e, tuple(tys), program, env)
    except TypeRuleError as err:
        out.append(f"{_where(e)}: {err.message}")
        return e.ty
    if want != e.ty:
        out.append(f"{_where(e)}: annotated {e.ty.describe()}, but its operands give {want.describe()}")
    return e.ty


def _constant_problem(e: N.Num, program) -> Optional[str]:
    v, t = e.value, e.ty
    if t == T.INT and not float(v).is_integer():
        return f"the constant {v!r} is typed int"
    if t == T.CHANNEL:
        n = len(program.channels) if program is not None else None
        if not float(v).is_integer() or v < 0 or (n is not None and v >= n):
            return f"the constant {v!r} is not a channel index"
    if t == T.BOOL and v not in (0.0, 1.0):
        return f"the constant {v!r} is typed bool"
    return None


def verify_expr(e: N.Expr, program: Optional[N.Program], env: Mapping[str, Type],
                want: Optional[Type] = None, what: str = "expression"):
    """Raise :class:`IRTypeError` unless ``e`` is well typed (and of type ``want``, if given)."""
    problems = problems_of(e, program, env)
    if want is not None and e.ty is not None and e.ty != want:
        problems.append(f"{what} must be {want.describe()}, but it is {e.ty.describe()}")
    if problems:
        raise IRTypeError([f"in {what}: {p}" for p in problems])


def _algorithm_problems(alg: N.Algorithm, program: N.Program) -> list:
    out: list = []
    try:
        env = {p.name: param_type(p.type) for p in alg.params}
    except IRTypeError as err:
        return [f"in algorithm '{alg.name}': {p}" for p in err.problems]
    for p in alg.params:
        for label, x in (("default", p.default), ("constraint bound", p.constraint[1] if p.constraint else None)):
            if x is None:
                continue
            out += [f"the {label} of '{p.name}': {m}" for m in problems_of(x, program, {})]
            if N.free_vars(x):
                out.append(f"the {label} of '{p.name}' uses {', '.join(sorted(N.free_vars(x)))}")
            if x.ty is not None and not (T.accepts(env[p.name], x.ty) if label == "default"
                                         else x.ty.same_dimension(env[p.name])):
                out.append(f"the {label} of '{p.name}' is {x.ty.describe()}, "
                           f"the parameter is {env[p.name].describe()}")
    out += problems_of(alg.body, program, env)
    if alg.body.ty is not None and alg.body.ty != T.TIME:
        out.append(f"the cost must be a time (s), but it is {alg.body.ty.describe()}")
    return [f"in algorithm '{alg.name}': {m}" for m in out]


def verify_algorithm(alg: N.Algorithm, program: N.Program):
    """Raise :class:`IRTypeError` unless the algorithm is well typed and costs a time."""
    problems = _algorithm_problems(alg, program)
    if problems:
        raise IRTypeError(problems)


def verify_program(program: N.Program):
    """Raise :class:`IRTypeError` unless every declaration, transmission and algorithm of the
    program is well typed."""
    out: list = []
    for name, sig in program.tables.items():
        if sig.ty is None or sig.param_tys is None:
            out.append(f"table '{name}' has no types")
    for name, sig in program.scalars.items():
        if sig.ty is None:
            out.append(f"parameter '{name}' has no type")
    for name, variants in program.transmissions.items():
        for v in variants:
            where = f"in transmission {name}[{program.channels[v.channel]}]"
            out += [f"{where}: {m}" for m in problems_of(v.body, program, {v.param: T.BYTES})]
            if v.body.ty is not None and v.body.ty != T.TIME:
                out.append(f"{where}: the cost must be a time (s), but it is {v.body.ty.describe()}")
    for alg in program.algorithms.values():
        out += _algorithm_problems(alg, program)
    if out:
        raise IRTypeError(out)
