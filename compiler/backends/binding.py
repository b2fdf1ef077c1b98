"""Argument binding for an algorithm: names, defaults, channels, integrality, constraints.

What it does: turns user arguments (numbers, numpy arrays, channel names, or CLI strings such as
``1MiB``) into the numeric environment an engine evaluates, fills in defaults, and checks every
declared constraint (``P: int >= 1``) element-wise, reporting a violation with the span of the
constraint in the ``.tlop`` file.  Shared by the interpreter path and the JIT, so both accept
and reject exactly the same inputs.

Speed: everything that depends only on the signature (parameter kinds, default values,
constraint bounds, channel names) is computed once per algorithm by a :class:`Binder`
(:func:`binder_for` keeps one per algorithm object).  Plain ``float``/``int`` arguments are
checked with Python arithmetic; anything else (numpy scalars and arrays, lists) goes through
``numpy.asarray`` element-wise, with the same messages.  numpy is imported only then.

Parameter types: :data:`PARAM_KINDS` says, per declared type, whether values must be integral,
whether the parameter names a channel, and which unit kind a CLI value may carry
(``16``, ``1MiB``, ``2us``).  A new parameter type is one entry there (plus its unit kind in
:mod:`tlop.runtime.units` if it has units); nothing else in this module looks at type names.

Process mappings: an algorithm declared ``over map: mapping`` is evaluated with a mapping
(:mod:`tlop.runtime.mapping`), which is not a numeric argument — it takes no part in numpy
broadcasting, and one mapping serves a whole evaluation call (every point of a grid).
:func:`bind_mapping` checks it against the process count ``P`` (a layout fixes P) and adds ``P``
to the environment under the reserved name :data:`tlop.ir.RANKS`, where schedules read it.

What it does not do: evaluate the cost.
"""

from __future__ import annotations

import math
import operator
import weakref
from typing import Any, Mapping, Optional

from tlop import ir
from tlop.runtime.diagnostics import Diagnostic, TlopError
from tlop.ir.types import Type, parse_type
from tlop.runtime.units import format_size, format_time, split_quantity, unit_dimension

__all__ = ["bind_arguments", "broadcast_shape", "parse_cli_value", "constraint_mask", "Binder", "binder_for",
           "PARAM_KINDS", "ParamKind", "bind_mapping", "as_mapping"]


class ParamKind:
    """How arguments of one declared parameter type are checked.

    ``integer``: values must be integral; ``channel``: the value is a channel (a name or an
    index into the program's channels); ``unit``: the unit kind a CLI value may carry
    (``"bytes"``, ``"time"``; None: no unit allowed)."""

    __slots__ = ("integer", "channel", "unit")

    def __init__(self, integer: bool = False, channel: bool = False, unit: Optional[str] = None):
        self.integer, self.channel, self.unit = integer, channel, unit

    def __repr__(self) -> str:
        return f"ParamKind(integer={self.integer}, channel={self.channel}, unit={self.unit!r})"


#: declared type -> how its arguments are checked (a type missing here takes any unit)
PARAM_KINDS = {
    "int": ParamKind(integer=True),
    "real": ParamKind(),
    "bytes": ParamKind(unit="bytes"),
    "time": ParamKind(unit="time"),
    "channel": ParamKind(integer=True, channel=True),
}
_ANY_UNIT = ParamKind(unit="*")

_PY_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
           "==": operator.eq, "!=": operator.ne}
_NP_OPS = {"<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
           "!=": "not_equal"}


def _kind(ptype: str) -> ParamKind:
    return PARAM_KINDS.get(ptype, _ANY_UNIT)


def parse_cli_value(text: str, ptype: str, name: str, program: ir.Program) -> float:
    """A command-line value for a parameter of type ``ptype``: ``16``, ``1MiB``, ``2us``, ``shm``,
    or a rate such as ``0.2ns/B`` for a ``time/bytes`` parameter (the unit must have the
    parameter's dimension; a plain number is in seconds and bytes)."""
    kind = _kind(ptype)
    if kind.channel:
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
        from tlop.runtime.suggest import unit_hint

        raise TlopError(f"{name}={text}: unknown unit '{unit}'{unit_hint(unit)}")
    factor, t_exp, b_exp = dim
    want = parse_type(ptype)
    if unit and want is not None and want.is_num:
        if want.dimensionless:
            raise TlopError(f"{name}={text}: {name} is {ptype} and takes no unit")
        if (want.time, want.bytes) != (t_exp, b_exp):
            got = Type("num", t_exp, b_exp)
            what = "a plain number" if got.dimensionless else str(got)
            raise TlopError(f"{name}={text}: {name} is {ptype}, but '{unit}' is a unit of {what}")
    return value * factor


def _eval_const(e: ir.Expr) -> float:
    from tlop.backends.interp import Interpreter  # a closed expression needs no profile
    return float(Interpreter(ir.Program((), {}, {}, {}, {}), None).eval(e, {}))


class _Param:
    """One parameter as the binder checks it (closed default and bound evaluated once)."""

    __slots__ = ("sig", "name", "type", "kind", "span", "op", "op_fn", "bound_expr", "cspan",
                 "_default", "_bound")

    def __init__(self, p: ir.ParamSig):
        self.sig = p
        self.name, self.type, self.span = p.name, p.type, p.span
        self.kind = _kind(p.type)
        self._default = self._bound = None
        if p.constraint is not None:
            self.op, self.bound_expr = p.constraint
            self.op_fn = _PY_OPS[self.op]
            self.cspan = p.constraint_span or p.span
        else:
            self.op = self.bound_expr = self.op_fn = self.cspan = None

    @property
    def default(self) -> float:
        if self._default is None:
            self._default = _eval_const(self.sig.default)
        return self._default

    @property
    def bound(self) -> float:
        if self._bound is None:
            self._bound = _eval_const(self.bound_expr)
        return self._bound


class Binder:
    """Binds arguments to the parameters of one algorithm of one program (see the module
    docstring).  :meth:`bind` is :func:`bind_arguments`."""

    def __init__(self, program: ir.Program, alg: ir.Algorithm):
        self.program = program
        self.alg = alg
        self.params = [_Param(p) for p in alg.params]
        self.names = frozenset(p.name for p in alg.params)
        self.nchannels = len(program.channels) if program is not None else 0
        self.requires = getattr(alg, "requires", None)

    def bind(self, args: Mapping[str, Any], strings: bool = False) -> dict:
        """The environment for evaluating the algorithm: every parameter bound to a float or a
        float array.  ``strings=True`` parses string values as the CLI does.  Raises TlopError
        listing every problem: unknown or missing arguments, channel names, non-integers for
        ``int`` parameters, and constraint violations (with the span of the constraint)."""
        problems: list = []
        alg = self.alg
        if not self.names.issuperset(args):     # a retired name (S, s: now seg) is read with a warning
            from tlop.backends.renamed import renamed_arguments

            args = renamed_arguments(args, self.names, alg.name)
        for k in args:
            if k not in self.names:
                from tlop.runtime.suggest import hint

                problems.append(Diagnostic(
                    f"'{alg.name}' has no parameter '{k}'{hint(str(k), self.names) or ';'} "
                    f"parameters: {', '.join(p.name for p in alg.params)}",
                    alg.span))
        env: dict = {}
        for p in self.params:
            if p.sig.per_rank is not None:
                v = self._per_rank(p, args, strings, problems)
                if v is not None:
                    env[p.name] = v
                continue
            if p.name in args:
                v = args[p.name]
                t = type(v)
                if t is float or t is int:
                    try:
                        v = float(v)
                    except OverflowError:
                        problems.append(Diagnostic(f"argument {p.name}: {v!r:.40} is too large for a double", p.span))
                        continue
                elif t is str:
                    if p.kind.channel or strings:
                        try:
                            v = parse_cli_value(v, p.type, p.name, self.program)
                        except TlopError as e:
                            problems.extend(Diagnostic(d.message, p.span) for d in e.diagnostics)
                            continue
                    else:
                        problems.append(Diagnostic(f"argument {p.name}: expected a number, got the string '{v}'",
                                                   p.span))
                        continue
                else:
                    v = self._general_value(p, v, problems)
                    if v is None:
                        continue
            elif p.sig.default is not None:
                v = p.default
            else:
                problems.append(Diagnostic(f"missing argument '{p.name}' ({p.type}) for '{alg.name}'", p.span))
                continue
            problem = self._check_scalar(p, v) if type(v) is float else self._check_array(p, v)
            if problem is not None:
                problems.append(problem)
                continue
            env[p.name] = v
        for p in self.params:
            if p.sig.per_rank is not None and p.name in env and p.sig.per_rank in env:
                problem = self._check_length(p, env[p.name], env[p.sig.per_rank])
                if problem is not None:
                    problems.append(problem)
        if not problems and self.requires is not None:
            problem = self._check_requires(env)
            if problem is not None:
                problems.append(problem)
        if problems:
            raise TlopError(problems)
        return env

    # ------------------------------------------------------------------ per-rank parameters
    def _per_rank(self, p: _Param, args: Mapping[str, Any], strings: bool, problems: list):
        """The :class:`tlop.runtime.per_rank.PerRankValues` of a per-rank parameter (``counts:
        bytes[P]``), every value checked as a plain argument's; None after reporting a problem."""
        import numpy as np

        from tlop.runtime.per_rank import PerRankValues, parse_per_rank_text

        if p.name not in args:
            if p.sig.default is None:
                problems.append(Diagnostic(f"missing argument '{p.name}' ({p.type}[{p.sig.per_rank}], one value for "
                                           f"each process) for '{self.alg.name}'", p.span))
                return None
            got = PerRankValues(fill=p.default)
        else:
            v = args[p.name]
            if isinstance(v, PerRankValues):
                got = PerRankValues(v.values, v.fill)
            elif isinstance(v, str):
                if not strings:
                    problems.append(Diagnostic(f"argument {p.name}: expected numbers (a list, a 1-D array or one "
                                               f"number), got the string '{v}'", p.span))
                    return None
                try:
                    got = parse_per_rank_text(p.name, v, lambda t: parse_cli_value(t, p.type, p.name, self.program))
                except TlopError as e:
                    problems.extend(Diagnostic(d.message, p.span) for d in e.diagnostics)
                    return None
            else:
                try:
                    arr = np.asarray(v, dtype=float)
                except (TypeError, ValueError, OverflowError):
                    problems.append(Diagnostic(f"argument {p.name}: expected numbers (a list, a 1-D array or one "
                                               f"number), got {type(v).__name__}", p.span))
                    return None
                if arr.ndim > 1:
                    problems.append(Diagnostic(
                        f"argument {p.name}: per-rank values are a list or a 1-D array (axis 0 is the rank), "
                        f"not an array of shape {arr.shape}; evaluate one call per vector", p.span))
                    return None
                got = PerRankValues(fill=float(arr)) if arr.ndim == 0 else PerRankValues(arr)
        got.ranks = p.sig.per_rank
        problem = self._check_elements(p, got)
        if problem is not None:
            problems.append(problem)
            return None
        return got

    def _check_elements(self, p: _Param, got) -> Optional[Diagnostic]:
        """NaN, integrality and the constraint of every value of a per-rank argument, naming the
        first offending rank."""
        import numpy as np

        if got.values is None:
            return self._check_scalar(p, got.fill)
        arr = got.values
        with np.errstate(invalid="ignore"):
            bad = np.isnan(arr)
            if bad.any():
                return Diagnostic(f"argument {p.name}[{int(np.flatnonzero(bad)[0])}] is NaN", p.span)
            if p.kind.integer:
                bad = arr != np.floor(arr)
                if bad.any():
                    r = int(np.flatnonzero(bad)[0])
                    return Diagnostic(f"argument {p.name}[{r}] = {arr[r]:g} must be an integer ({p.name}: {p.type})",
                                      p.span)
            if p.op is not None:
                bad = ~getattr(np, _NP_OPS[p.op])(arr, p.bound)
                if bad.any():
                    r = int(np.flatnonzero(bad)[0])
                    more = f" ({int(bad.sum())} of {arr.size} values)" if bad.sum() > 1 else ""
                    return Diagnostic(f"argument {p.name}[{r}] = {arr[r]:g} violates the constraint "
                                      f"{p.name} {p.op} {p.bound:g}{more}", p.cspan)
        return None

    def _check_length(self, p: _Param, got, P) -> Optional[Diagnostic]:
        """A vector of per-rank values has one value for each of the ``P`` processes (``P`` a
        float, or an array whose values are all that length)."""
        import numpy as np

        if got.values is None:
            return None
        n = len(got.values)
        ranks = p.sig.per_rank
        if type(P) is float:
            if P == n:
                return None
            return Diagnostic(f"argument {p.name}: {n} per-rank value{'s' if n != 1 else ''}, but {ranks} = {P:g}; "
                              f"give one for each rank 0 … {ranks} − 1", p.span)
        values = np.unique(np.asarray(P, dtype=float))
        if np.all(values == n):
            return None
        if len(values) == 1:
            return self._check_length(p, got, float(values[0]))
        shown = ", ".join(f"{v:g}" for v in values[:4]) + (", …" if len(values) > 4 else "")
        return Diagnostic(f"argument {p.name}: {n} per-rank values, but {ranks} takes several values ({shown}); a "
                          f"vector fits one process count: give one number for every rank, or one call per {ranks}",
                          p.span)

    # ------------------------------------------------------------------ invalid points
    def valid_mask(self, args: Mapping[str, Any]):
        """Where the numeric arguments ``args`` (floats or arrays, broadcast together) pass the
        element-wise checks of :meth:`bind` — not NaN, integral for ``int``, the declared
        constraint, the ``where`` condition: a bool array of the broadcast shape (a bool for
        scalars).  Parameters left out take their defaults; anything else (unknown or missing
        arguments, channels, strings) is :meth:`bind`'s to report."""
        import numpy as np

        if not self.names.issuperset(args):
            from tlop.backends.renamed import rename_map

            renames = rename_map(args, self.names)      # bind() warns about them
            args = {renames.get(k, k): v for k, v in args.items()}
        env = {}
        for p in self.params:
            if p.sig.per_rank is not None:
                continue  # one vector for the whole call: bind() checks it
            if p.name in args and not isinstance(args[p.name], str) and not p.kind.channel:
                env[p.name] = np.asarray(args[p.name], dtype=float)
            elif p.name not in args and p.sig.default is not None and not p.kind.channel:
                env[p.name] = np.asarray(p.default)
        shape = np.broadcast_shapes(*(v.shape for v in env.values())) if env else ()
        ok = np.ones(shape, dtype=bool)
        with np.errstate(invalid="ignore"):
            for p in self.params:
                v = env.get(p.name)
                if v is None:
                    continue
                good = ~np.isnan(v)
                if p.kind.integer:
                    good &= v == np.floor(v)
                if p.op is not None:
                    good &= getattr(np, _NP_OPS[p.op])(v, p.bound)
                ok &= np.broadcast_to(good, shape)
        if self.requires is not None and ok.any() and all(p.name in env or p.kind.channel for p in self.params):
            full = {k: np.broadcast_to(v, shape) for k, v in env.items()}
            sub = {k: v[ok] for k, v in full.items()}
            for p in self.params:
                if p.kind.channel:
                    c = args.get(p.name, p.default if p.sig.default is not None else None)
                    if isinstance(c, str):
                        chans = self.program.channels if self.program is not None else ()
                        c = chans.index(c) if c in chans else None
                    if c is None:
                        return bool(ok) if ok.ndim == 0 else ok  # bind() reports the channel
                    sub[p.name] = float(c)
            where = np.zeros(shape, dtype=bool)
            where[ok] = np.broadcast_to(self.requires_mask(sub), (int(ok.sum()),))
            ok &= where
        return bool(ok) if ok.ndim == 0 else ok

    # ------------------------------------------------------------------ where COND
    def requires_mask(self, env: Mapping[str, Any]):
        """Where the algorithm's ``where`` condition holds for the bound arguments ``env``
        (a bool, or a bool array of their broadcast shape); True without a condition."""
        import numpy as np

        if self.requires is None:
            return True
        from tlop.backends.interp import Interpreter  # the condition reads parameters only

        with np.errstate(all="ignore"):
            r = Interpreter(ir.Program((), {}, {}, {}, {}), None).eval(self.requires, dict(env))
        r = np.asarray(r, dtype=float)
        ok = (r != 0) & ~np.isnan(r)
        return bool(ok) if ok.ndim == 0 else ok

    def _check_requires(self, env: dict) -> Optional[Diagnostic]:
        import numpy as np

        ok = self.requires_mask(env)
        if np.all(ok):
            return None
        used = sorted({n.name for n in ir.walk(self.requires) if isinstance(n, ir.Var) and n.name in env},
                      key=[p.name for p in self.params].index)
        first = int(np.argmin(np.ravel(ok))) if np.ndim(ok) else 0
        shape = np.shape(ok)

        types = {p.name: p.type for p in self.params}

        def at(name):
            v = np.broadcast_to(np.asarray(env[name], dtype=float), shape).ravel()[first] if shape else env[name]
            v = float(v)
            if types[name] == "bytes":
                return f"{name} = {format_size(v)}"
            if types[name] == "time":
                return f"{name} = {format_time(v)}"
            return f"{name} = {v:g}"

        count = f" (at {int(np.size(ok) - np.count_nonzero(ok))} of {np.size(ok)} points)" if shape else ""
        span = getattr(self.alg, "requires_span", None)
        cond = _span_text(span) if span is not None else "its condition"
        return Diagnostic(f"arguments {', '.join(at(n) for n in used)} of '{self.alg.name}' violate its condition "
                          f"'where {cond}'{count}", span or self.alg.span)

    # ------------------------------------------------------------------ values
    @staticmethod
    def _general_value(p: _Param, v, problems: list):
        """Anything but a plain float, int or string: through ``numpy.asarray`` (a float for a
        0-d result, else the array); None after reporting a problem."""
        import numpy as np

        if isinstance(v, np.ma.MaskedArray):
            if np.ma.getmaskarray(v).any():  # a mask would be dropped by asarray: never ignore it
                problems.append(Diagnostic(f"argument {p.name}: a masked array with masked values; fill them "
                                           f"(e.g. .filled(np.nan)) or drop them first", p.span))
                return None
            v = np.ma.getdata(v)
        kind = getattr(getattr(v, "dtype", None), "kind", None)
        if kind is not None and kind not in "biuf":  # datetime64, timedelta64, complex, object, strings
            problems.append(Diagnostic(f"argument {p.name}: expected a number or an array of numbers, "
                                       f"got {type(v).__name__} of {v.dtype}", p.span))
            return None
        try:
            arr = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            problems.append(Diagnostic(f"argument {p.name}: expected a number or an array of numbers, "
                                       f"got {type(v).__name__}", p.span))
            return None
        except OverflowError:
            problems.append(Diagnostic(f"argument {p.name}: {v!r:.40} is too large for a double", p.span))
            return None
        if p.kind.channel and arr.ndim != 0:
            problems.append(Diagnostic(f"argument {p.name}: a channel parameter takes one channel, not an array",
                                       p.span))
            return None
        return float(arr) if arr.ndim == 0 else arr

    def _check_scalar(self, p: _Param, v: float) -> Optional[Diagnostic]:
        """The checks of :meth:`_check_array` for one float, in Python arithmetic."""
        if v != v:
            return Diagnostic(f"argument {p.name} is NaN", p.span)
        if p.kind.integer and math.isfinite(v) and not v.is_integer():
            return Diagnostic(f"argument {p.name} = {v:g} must be an integer ({p.name}: {p.type})", p.span)
        if p.kind.channel and not 0 <= v < self.nchannels:
            return Diagnostic(f"argument {p.name} = {v:g} is not a channel index", p.span)
        if p.op is not None:
            bound = p.bound
            if not p.op_fn(v, bound):
                return Diagnostic(f"argument {p.name} = {v:g} violates the constraint {p.name} {p.op} {bound:g}",
                                  p.cspan)
        return None

    def _check_array(self, p: _Param, v) -> Optional[Diagnostic]:
        """NaN, integrality, channel range and the declared constraint, element-wise."""
        import numpy as np

        arr = np.asarray(v, dtype=float)
        if np.any(np.isnan(arr)):
            return Diagnostic(f"argument {p.name} is NaN", p.span)
        if p.kind.integer and np.any(arr != np.floor(arr)):
            bad = arr[arr != np.floor(arr)].flat[0] if arr.ndim else float(arr)
            return Diagnostic(f"argument {p.name} = {bad:g} must be an integer ({p.name}: {p.type})", p.span)
        if p.kind.channel and not 0 <= float(arr) < self.nchannels:
            return Diagnostic(f"argument {p.name} = {float(arr):g} is not a channel index", p.span)
        if p.op is not None:
            bound = p.bound
            ok = getattr(np, _NP_OPS[p.op])(arr, bound)
            if not np.all(ok):
                bad = arr[~ok].flat[0] if arr.ndim else float(arr)
                where = f" ({int(np.count_nonzero(~ok))} of {arr.size} values)" if arr.ndim else ""
                return Diagnostic(f"argument {p.name} = {bad:g} violates the constraint {p.name} {p.op} {bound:g}{where}",
                                  p.cspan)
        return None

    # ------------------------------------------------------------------ grids
    def constraint_mask(self, columns: Mapping[str, Any]):
        """See :func:`constraint_mask`."""
        import numpy as np

        n = max((np.size(v) for v in columns.values()), default=1)
        ok = np.ones(n, dtype=bool)
        for p in self.params:
            if p.op is None or p.sig.per_rank is not None:
                continue
            value = columns[p.name] if p.name in columns else p.default if p.sig.default is not None else None
            if value is None:
                continue
            ok &= np.broadcast_to(getattr(np, _NP_OPS[p.op])(np.asarray(value, dtype=float), p.bound), (n,))
        if self.requires is not None:
            env = {}
            for p in self.params:
                if p.sig.per_rank is not None:
                    continue  # a 'where' cannot read it
                if p.name in columns:
                    env[p.name] = np.asarray(columns[p.name], dtype=float)
                elif p.sig.default is not None:
                    env[p.name] = p.default
                else:
                    return ok  # a parameter the grid does not give: binding will say so
            ok &= np.broadcast_to(self.requires_mask(env), (n,))
        return ok


def _span_text(span) -> str:
    """The source text of a span (on one line; the first line of a longer one, with …)."""
    line = span.source.line(span.line)
    if span.end_line == span.line:
        return line[span.col - 1: span.end_col]
    return line[span.col - 1:] + " …"


_BINDERS: dict = {}  # (id(program), id(alg)) -> (weakref(program), weakref(alg), Binder)


def broadcast_shape(name: str, columns: Mapping[str, Any]) -> tuple:
    """The shape the argument arrays ``columns`` broadcast to, or the TlopError every engine
    raises when they do not: ``'name': arguments do not broadcast together: P (3,), m (2,)``."""
    import numpy as np

    try:
        return np.broadcast_shapes(*(np.shape(v) for v in columns.values()))
    except ValueError:
        raise TlopError(f"'{name}': arguments do not broadcast together: "
                        + ", ".join(f"{k} {np.shape(v)}" for k, v in columns.items())) from None


def binder_for(program: ir.Program, alg: ir.Algorithm) -> Binder:
    """The :class:`Binder` of ``alg`` in ``program``, made once per pair of objects (kept while
    both live)."""
    key = (id(program), id(alg))
    hit = _BINDERS.get(key)
    if hit is not None and hit[0]() is program and hit[1]() is alg:
        return hit[2]
    binder = Binder(program, alg)
    try:
        def forget(_ref, key=key, pop=_BINDERS.pop):
            pop(key, None)

        _BINDERS[key] = (weakref.ref(program, forget) if program is not None else (lambda: None),
                         weakref.ref(alg, forget), binder)
    except TypeError:  # objects without weak references: no caching
        pass
    return binder


def bind_arguments(program: ir.Program, alg: ir.Algorithm, args: Mapping[str, Any],
                   strings: bool = False) -> dict:
    """The environment for evaluating ``alg``: every parameter bound to a float or float array.

    ``strings=True`` parses string values as the CLI does.  Raises TlopError listing every
    problem: unknown or missing arguments, channel names, non-integers for ``int`` parameters,
    and constraint violations (with the span of the constraint)."""
    return binder_for(program, alg).bind(args, strings)


def constraint_mask(alg: ir.Algorithm, columns: Mapping[str, Any]):
    """Which points of a grid (``columns``: parameter -> array) satisfy every declared
    constraint of ``alg``; parameters absent from ``columns`` take their defaults."""
    return binder_for(None, alg).constraint_mask(columns)


def as_mapping(mapping):
    """A :class:`tlop.runtime.mapping.Mapping` from a mapping, its command-line text
    (``"sequential(8)"``, ``"round_robin(nodes=4)"``, a layout file's path) or None."""
    if mapping is None:
        return None
    from tlop.runtime.mapping import Mapping, parse_mapping

    if isinstance(mapping, Mapping):
        return mapping
    if isinstance(mapping, str):
        return parse_mapping(mapping)
    raise TlopError(f"mapping: expected a mapping such as tlop.sequential(8), or its text 'sequential(8)', "
                    f"got {type(mapping).__name__}")


def bind_mapping(alg: ir.Algorithm, env: dict, mapping) -> dict:
    """The environment ``env`` of ``alg`` completed for its process mapping: for an algorithm
    ``over`` a mapping, ``mapping`` is required and checked against every value of ``P``, and
    ``P`` is bound to :data:`tlop.ir.RANKS` as well; for any other algorithm ``mapping`` is
    ignored and ``env`` returned as it is.  Raises TlopError naming the algorithm."""
    if alg.over is None:
        return env
    if mapping is None:
        raise TlopError(Diagnostic(
            f"'{alg.name}' is declared over a process mapping ('over {alg.over}: mapping'), so it needs one: --mapping sequential(Q), "
            f"round_robin(Q), round_robin(nodes=M) or a layout file (Python: mapping=tlop.sequential(8))",
            alg.span))
    mapping = as_mapping(mapping)
    P = env.get("P")
    if P is None:
        raise TlopError(Diagnostic(f"'{alg.name}' runs over a process mapping but has no parameter P", alg.span))
    if type(P) is float:
        values = [P]
    else:
        import numpy as np

        values = sorted({float(v) for v in np.ravel(P)})
    for v in values:
        mapping.check(int(v))
    out = dict(env)
    out[ir.RANKS] = P
    return out
