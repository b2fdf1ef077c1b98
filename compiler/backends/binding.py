"""Argument binding for an algorithm: names, defaults, channels, integrality, constraints.

What it does: turns user arguments (numbers, numpy arrays, channel names, or CLI strings such as
``1MiB``) into the numeric environment an engine evaluates, fills in defaults, and checks every
declared constraint (``P: int >= 1``) element-wise, reporting a violation with the span of the
constraint in the ``.tlop`` file.  Shared by the interpreter path and the JIT, so both accept
and reject exactly the same inputs.

What it does not do: evaluate the cost.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from tlop import ir
from tlop.runtime.diagnostics import Diagnostic, TlopError
from tlop.ir.types import Type, parse_type
from tlop.runtime.units import split_quantity, unit_dimension

__all__ = ["bind_arguments", "parse_cli_value", "constraint_mask"]

_OPS = {
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
}


def parse_cli_value(text: str, ptype: str, name: str, program: ir.Program) -> float:
    """A command-line value for a parameter of type ``ptype``: ``16``, ``1MiB``, ``2us``, ``shm``,
    or a rate such as ``0.2ns/B`` for a ``time/bytes`` parameter (the unit must have the
    parameter's dimension; a plain number is in seconds and bytes)."""
    if ptype == "channel":
        if program is not None and text in program.channels:
            return float(program.channels.index(text))
        raise TlopError(f"{name}={text}: unknown channel; channels: "
                        f"{', '.join(program.channels) if program is not None else '(none)'}")
    q = split_quantity(text)
    if q is None:
        raise TlopError(f"{name}={text}: not a number (examples: 16, 1MiB, 64KiB, 2.5us)")
    value, unit = q
    dim = unit_dimension(unit)
    if dim is None:
        raise TlopError(f"{name}={text}: unknown unit '{unit}'")
    factor, t_exp, b_exp = dim
    want = parse_type(ptype)
    if unit and want is not None and want.is_num:
        if want.dimensionless:
            raise TlopError(f"{name}={text}: {name} is {ptype} and takes no unit")
        if (want.time, want.bytes) != (t_exp, b_exp):
            got = Type("num", t_exp, b_exp)
            kind = "a plain number" if got.dimensionless else str(got)
            raise TlopError(f"{name}={text}: {name} is {ptype}, but '{unit}' is a unit of {kind}")
    return value * factor


def _eval_const(e: ir.Expr) -> float:
    from tlop.backends.interp import Interpreter  # a closed expression needs no profile
    return float(Interpreter(ir.Program((), {}, {}, {}, {}), None).eval(e, {}))


def bind_arguments(program: ir.Program, alg: ir.Algorithm, args: Mapping[str, Any],
                   strings: bool = False) -> dict:
    """The environment for evaluating ``alg``: every parameter bound to a float or float array.

    ``strings=True`` parses string values as the CLI does.  Raises TlopError listing every
    problem: unknown or missing arguments, channel names, non-integers for ``int`` parameters,
    and constraint violations (with the span of the constraint)."""
    problems: list[Diagnostic] = []
    names = {p.name for p in alg.params}
    for k in args:
        if k not in names:
            problems.append(Diagnostic(
                f"'{alg.name}' has no parameter '{k}'; parameters: {', '.join(p.name for p in alg.params)}", alg.span))
    env: dict = {}
    for p in alg.params:
        if p.name in args:
            v = args[p.name]
            if isinstance(v, str):
                if p.type == "channel" or strings:
                    try:
                        v = parse_cli_value(v, p.type, p.name, program)
                    except TlopError as e:
                        problems.extend(Diagnostic(d.message, p.span) for d in e.diagnostics)
                        continue
                else:
                    problems.append(Diagnostic(f"argument {p.name}: expected a number, got the string '{v}'", p.span))
                    continue
            try:
                arr = np.asarray(v, dtype=float)
            except (TypeError, ValueError):
                problems.append(Diagnostic(f"argument {p.name}: expected a number or an array of numbers, "
                                           f"got {type(v).__name__}", p.span))
                continue
            except OverflowError:
                problems.append(Diagnostic(f"argument {p.name}: {v!r:.40} is too large for a double", p.span))
                continue
            if p.type == "channel" and arr.ndim != 0:
                problems.append(Diagnostic(f"argument {p.name}: a channel parameter takes one channel, not an array",
                                           p.span))
                continue
            v = float(arr) if arr.ndim == 0 else arr
        elif p.default is not None:
            v = _eval_const(p.default)
        else:
            problems.append(Diagnostic(f"missing argument '{p.name}' ({p.type}) for '{alg.name}'", p.span))
            continue
        arr = np.asarray(v, dtype=float)
        if np.any(np.isnan(arr)):
            problems.append(Diagnostic(f"argument {p.name} is NaN", p.span))
            continue
        if p.type in ("int", "channel") and np.any(arr != np.floor(arr)):
            bad = arr[arr != np.floor(arr)].flat[0] if arr.ndim else float(arr)
            problems.append(Diagnostic(f"argument {p.name} = {bad:g} must be an integer ({p.name}: {p.type})", p.span))
            continue
        if p.type == "channel" and not 0 <= float(arr) < len(program.channels):
            problems.append(Diagnostic(f"argument {p.name} = {float(arr):g} is not a channel index", p.span))
            continue
        if p.constraint is not None:
            op, bound_expr = p.constraint
            bound = _eval_const(bound_expr)
            ok = _OPS[op](arr, bound)
            if not np.all(ok):
                bad = arr[~ok].flat[0] if arr.ndim else float(arr)
                where = f" ({int(np.count_nonzero(~ok))} of {arr.size} values)" if arr.ndim else ""
                problems.append(Diagnostic(
                    f"argument {p.name} = {bad:g} violates the constraint {p.name} {op} {bound:g}{where}",
                    p.constraint_span or p.span))
                continue
        env[p.name] = v
    if problems:
        raise TlopError(problems)
    return env


def constraint_mask(alg: ir.Algorithm, columns: Mapping[str, Any]) -> np.ndarray:
    """Which points of a grid (``columns``: parameter -> array) satisfy every declared
    constraint of ``alg``; parameters absent from ``columns`` take their defaults."""
    n = max((np.size(v) for v in columns.values()), default=1)
    ok = np.ones(n, dtype=bool)
    for p in alg.params:
        if p.constraint is None:
            continue
        value = columns[p.name] if p.name in columns else _eval_const(p.default) if p.default is not None else None
        if value is None:
            continue
        op, bound = p.constraint
        ok &= np.broadcast_to(_OPS[op](np.asarray(value, dtype=float), _eval_const(bound)), (n,))
    return ok
