"""Do two costs agree on a profile's actual tables?  (``tlop show --verify --profile X``)

What it does: :func:`check_on_profile` evaluates an algorithm's original cost and a rewritten
one with the reference interpreter over a grid of points built from the profile — every
``bytes`` parameter ranges over the message sizes of the tables the algorithm reads, every
``int`` parameter over the τ values of those tables plus small values (negative ones too), and
values around its declared bound; ``time`` and ``real`` parameters over a few values; channel
parameters over every channel the profile serves — keeping only the points argument binding
accepts (declared constraints).  It reports the largest relative difference and the point
where the two disagree most.  Symbolic translation validation proves equality under the model
assumptions; this checks the tables themselves, where A1 or linearity may not hold.

What it does not do: prove anything (it samples a grid), or choose the rewrite; points where
both costs fail to evaluate (e.g. a ``max`` over an empty range) are counted and skipped, a
point where only one fails is a disagreement.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from tlop import ir
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.units import format_size, format_time

__all__ = ["ProfileCheck", "check_on_profile", "grid_values", "TOLERANCE", "MAX_POINTS"]

#: relative difference below which two costs count as equal (IEEE rounding of reordered sums)
TOLERANCE = 1e-9
#: at most this many points per channel assignment
MAX_POINTS = 4096
#: at most this many values per numeric parameter
MAX_PER_AXIS = 10

_OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}


@dataclass
class ProfileCheck:
    """The outcome of :func:`check_on_profile`."""
    profile: str
    points: int = 0                      # points where both sides evaluated
    skipped: int = 0                     # points where both sides failed to evaluate
    max_rel: float = 0.0                 # the largest relative difference seen
    worst: Optional[dict] = None         # the point of ``max_rel`` (parameter -> value text)
    worst_values: Optional[dict] = None  # the same point as numbers (parameter -> float)
    original: Optional[float] = None     # both costs at ``worst`` (None: it failed there)
    rewritten: Optional[float] = None
    failure: str = ""                    # the error of the side that failed at ``worst``
    skipped_error: str = ""              # the first error of a skipped point
    grid: dict = field(default_factory=dict)  # parameter -> number of values tried

    @property
    def ok(self) -> bool:
        return self.points > 0 and self.max_rel <= TOLERANCE and not self.failure

    def render(self) -> str:
        if self.points == 0 and not self.failure:
            why = f" ({self.skipped_error})" if self.skipped_error else ""
            return f"not checked on {self.profile}: neither cost evaluates at any point of its grid{why}"
        where = ", ".join(f"{k} = {v}" for k, v in (self.worst or {}).items())
        if self.ok:
            return (f"agrees on {self.profile}: max relative difference {self.max_rel:.2g} over "
                    f"{self.points} points")
        if self.failure:
            return (f"DISAGREES on {self.profile} at {where or 'the only point'}: {self.failure}; "
                    f"{self.points} points checked")
        return (f"DISAGREES on {self.profile} at {where or 'the only point'}: original "
                f"{_fmt_time(self.original)}, rewritten {_fmt_time(self.rewritten)} (relative difference "
                f"{_pct(self.max_rel)}); {self.points} points checked")


def _fmt_time(v) -> str:
    return "error" if v is None else (format_time(v) if math.isfinite(v) else str(v))


def _pct(r: float) -> str:
    return f"{r * 100:.3g}%" if r >= 1e-3 else f"{r:.3g}"


# ----------------------------------------------------------------------------- the grid

def _tables_read(program: ir.Program, e: ir.Expr) -> set:
    """Names of the tables ``e`` reads, directly or through a transmission."""
    out, seen = set(), set()
    todo = [e]
    while todo:
        x = todo.pop()
        for n in ir.walk(x):
            if isinstance(n, ir.Lookup):
                out.add(n.table)
            elif isinstance(n, (ir.Transmit, ir.Xmit)) and n.name not in seen:
                seen.add(n.name)
                todo.extend(v.body for v in program.transmissions.get(n.name, ()))
    return out


def _profile_grids(program: ir.Program, profile, tables: set):
    """``(message sizes, τ values)`` of the profile tables ``tables`` on every channel."""
    sizes, taus = set(), set()
    channels = [profile.resolve_channel(c) for c in program.channels] or [None]
    for name in tables:
        sig = program.tables.get(name)
        if sig is None:
            continue
        for pch in ([None] if not sig.channel_indexed else channels):
            if sig.channel_indexed and pch is None:
                continue
            key = sig.profile_key(profile, pch)
            if not profile.has_table(key, pch):
                continue
            t = profile.table(key, pch)
            sizes.update(float(v) for v in np.asarray(t.m).ravel())
            if t.tau is not None:
                taus.update(float(v) for v in np.asarray(t.tau).ravel())
    return sorted(sizes), sorted(taus)


def _spread(values, k: int) -> list:
    """At most ``k`` of the sorted distinct ``values``, evenly spread, keeping both ends."""
    vs = sorted(set(values))
    if len(vs) <= k:
        return vs
    idx = sorted({round(i * (len(vs) - 1) / (k - 1)) for i in range(k)})
    return [vs[i] for i in idx]


def _const(e: ir.Expr) -> float:
    from tlop.backends.interp import Interpreter
    return float(Interpreter(ir.Program((), {}, {}, {}, {}), None).eval(e, {}))


def grid_values(p: ir.ParamSig, program: ir.Program, profile, sizes, taus, per_axis: int) -> list:
    """The values parameter ``p`` takes on the check's grid (all accepted by binding)."""
    if p.type == "channel":
        return [float(i) for i, c in enumerate(program.channels) if profile.resolve_channel(c) is not None]
    if p.type == "bytes":
        base = list(sizes) or [0.0, 1.0, 1024.0, 1048576.0]
    elif p.type == "int":
        base = [float(t) for t in taus if float(t).is_integer()] + [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 8.0, 16.0, 64.0]
    elif p.type == "time":
        base = [0.0, 1e-6, 1e-3, 1.0]
    else:
        base = [-1.0, 0.0, 0.5, 1.0, 2.0, 10.0]
    extra = []
    if p.default is not None:
        extra.append(_const(p.default))
    if p.constraint is not None:
        b = _const(p.constraint[1])
        extra += [b - 1, b, b + 1, 2 * b]
        if p.type == "bytes" and b > 0:
            extra += [b * 1024]
    vals = [v for v in base + extra if math.isfinite(v)]
    if p.type == "int":
        vals = [float(math.floor(v)) for v in vals]
    if p.constraint is not None:
        op, bound = p.constraint
        b = _const(bound)
        vals = [v for v in vals if _OPS[op](v, b)]
    keep = set(_spread(vals, per_axis))
    keep.update(v for v in extra[:1] if v in vals)  # the default, when accepted
    return sorted(keep)


# ----------------------------------------------------------------------------- the check

def _rel(a: float, b: float) -> float:
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b))


def _fmt_value(p: ir.ParamSig, v: float, program: ir.Program) -> str:
    if p.type == "channel":
        return program.channels[int(v)]
    if p.type == "bytes":
        return format_size(v) if v >= 0 and float(v).is_integer() else f"{v:g} B"
    if p.type == "time":
        return format_time(v)
    return f"{v:g}"


def check_on_profile(program: ir.Program, algorithm: ir.Algorithm, rewritten: ir.Expr, profile, *,
                     original: Optional[ir.Expr] = None, max_points: int = MAX_POINTS,
                     mapping=None) -> ProfileCheck:
    """Evaluate ``original`` (default: the algorithm's body) and ``rewritten`` over the
    profile's grid (see the module docstring) and compare them.  ``mapping`` is the process
    mapping of an algorithm ``over`` one (schedules): both sides are evaluated with it, and
    values of ``P`` it cannot place are not on the grid."""
    from tlop.backends.interp import Interpreter

    original = algorithm.body if original is None else original
    params = list(algorithm.params)
    sizes, taus = _profile_grids(program, profile, _tables_read(program, original) | _tables_read(program, rewritten))
    numeric = [p for p in params if p.type != "channel"]
    per_axis = MAX_PER_AXIS
    while per_axis > 2 and per_axis ** max(len(numeric), 1) > max_points:
        per_axis -= 1
    axes = {p.name: grid_values(p, program, profile, sizes, taus, per_axis) for p in params}
    if mapping is not None and algorithm.over is not None and "P" in axes:
        axes["P"] = [v for v in axes["P"] if _placeable(mapping, v)]
    out = ProfileCheck(profile.name, grid={k: len(v) for k, v in axes.items()})
    if any(not v for v in axes.values()):
        return out
    interp = Interpreter(program, profile, mapping)
    chan = [p for p in params if p.type == "channel"]
    for chans in itertools.product(*(axes[p.name] for p in chan)):
        combos = list(itertools.product(*(axes[p.name] for p in numeric)))
        env = {p.name: c for p, c in zip(chan, chans)}
        cols = {p.name: np.array([c[i] for c in combos], dtype=float) for i, p in enumerate(numeric)}
        if getattr(algorithm, "requires", None) is not None:  # only points binding accepts ('where COND')
            from tlop.backends.binding import binder_for

            keep = np.broadcast_to(binder_for(program, algorithm).requires_mask({**env, **cols}), (len(combos),))
            combos = [c for c, k in zip(combos, keep) if k]
            cols = {k: v[keep] for k, v in cols.items()}
            if not combos:
                continue
        if mapping is not None and algorithm.over is not None and "P" in cols:
            cols[ir.RANKS] = cols["P"]
        a = _evaluate(interp, original, env, cols, len(combos))
        b = _evaluate(interp, rewritten, env, cols, len(combos))
        for i in range(len(combos)):
            (va, ea), (vb, eb) = a[i], b[i]
            if ea is not None and eb is not None:
                out.skipped += 1
                out.skipped_error = out.skipped_error or ea
                continue
            if ea is not None or eb is not None:
                if out.failure:
                    continue
                out.failure = f"the original fails ({ea})" if ea is not None else f"the rewritten cost fails ({eb})"
            else:
                out.points += 1
                r = _rel(va, vb)
                if out.failure or r <= out.max_rel:
                    continue
                out.max_rel = r
            out.original, out.rewritten = va, vb
            vals = {**env, **{p.name: cols[p.name][i] for p in numeric}}
            out.worst_values = {p.name: float(vals[p.name]) for p in params}
            out.worst = {p.name: _fmt_value(p, vals[p.name], program) for p in params}
    return out


def _placeable(mapping, P: float) -> bool:
    try:
        mapping.check(int(P))
    except TlopError:
        return False
    return float(P).is_integer() and P >= 1


def _evaluate(interp, e, env, cols, n) -> list:
    """``[(value, error)]`` for each of the ``n`` points: the whole column at once, or point by
    point when one point fails (so that a failure is attributed to its point)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # out-of-grid extrapolation is the same on both sides
        try:
            v = np.broadcast_to(np.asarray(interp.eval(e, {**env, **cols}), dtype=float), (n,))
            return [(float(x), None) for x in v]
        except TlopError:
            pass
        out = []
        for i in range(n):
            try:
                out.append((float(interp.eval(e, {**env, **{k: float(c[i]) for k, c in cols.items()}})), None))
            except TlopError as err:
                out.append((None, err.diagnostics[0].message if err.diagnostics else str(err)))
        return out
