"""How a measured table is read between, below and beyond its grid points.

What it does: defines the interpolation policy of a profile (:class:`Interpolation`, the
``"interpolation"`` object of the profile format) and the lookup algorithm itself, as plain
vectorised numpy functions (:func:`lookup_1d`, :func:`lookup_2d`).  These functions are the
*definition* of a table lookup: the LLVM back end mirrors them operation for operation, so the
algorithm is written once, here, in the order it must be evaluated:

1. **Coordinates.**  ``m`` and ``tau`` are broadcast against each other (numpy rules) and
   converted to float64.
2. **Clamping.**  Under ``m_below = "clamp"`` the m coordinate is raised to the first grid
   point (``x = max(x, m[0])``); under ``m_beyond = "clamp"`` it is lowered to the last
   (``x = min(x, m[-1])``).  The τ coordinate is always raised to the first τ column
   (``t = max(t, tau[0])``, "τ below the smallest column clamps") and, unless ``tau_beyond`` is
   ``"linear"``, lowered to the last (``t = min(t, tau[-1])``).
3. **Segment.**  For a grid ``g`` of ``n >= 2`` points and a coordinate ``x``, the segment is
   ``i = clip(searchsorted(g, x, side="right") - 1, 0, n - 2)``: the last ``i`` with
   ``g[i] <= x``, limited so that points below the grid use the first segment and points at or
   past the last grid point use the last segment (:func:`segment`).
4. **Linear piece.**  ``v0 + (v1 - v0) * (x - x0) / (x1 - x0)`` evaluated in exactly that order
   (subtract, subtract, multiply, divide, add), except that ``x == x1`` returns ``v1`` itself
   (:func:`lerp`).  So every grid point returns its measured value bit for bit: interior
   points and the first point give ``t = 0``; the last point is the ``x == x1`` case.  Outside
   the grid the same formula extrapolates the first/last segment (``"linear"``).
5. **Two axes** (``L(m, tau)``): first interpolate in m inside τ columns ``j`` and ``j + 1``
   (same m segment ``i`` for both), then interpolate those two numbers in τ.
6. **τ beyond the last column, ``"proportional"``.**  With ``t`` clamped at ``tau[-1]`` in step 2,
   the result ``r`` is replaced by ``r * tau / tau[-1]`` (multiply first, then divide) where the
   *unclamped* τ exceeds ``tau[-1]``: ``L(m, τ) = L(m, τmax)·τ/τmax``, the upper bound allowed
   by the model axiom ``L(m, A·τ) <= A·L(m, τ)``.  ``"clamp"`` is what libtaulop does;
   ``"linear"`` extends the last two columns' line.
7. **Non-negativity.**  With ``nonnegative`` the result is ``max(r, 0)`` (NaN stays NaN):
   extrapolated times cannot go negative.
8. **m beyond the last grid point, ``"chunks"``** (libtaulop's rule): a size past the last
   grid point ``s = m[-1] > 0`` is charged as whole messages of size ``s`` plus the remainder,
   ``f(k·s + r) = k·f(s) + f(r)`` with ``0 < r <= s``.  Where ``x > s`` (x after step 2):
   ``r = fmod(x, s)``, replaced by ``s`` where it is 0 or NaN (x = +inf);
   ``k = floor((x - r) / s + 0.5)`` (a whole number); steps 3–7 run at ``r`` (giving ``v``)
   and at ``s`` (giving ``w``, same τ), and the result is ``w * k + v`` (multiply, then add).
   Elsewhere steps 3–7 run at x.  This is libtaulop's recursion ``T(m) = T(s) + T(m - s)``
   in closed form (same value up to rounding, O(1) for any m).

A one-point axis is constant along that axis (there is no segment to extrapolate; a single τ
column with ``"linear"`` behaves like ``"clamp"``, with ``"proportional"`` it still scales).

What it does not do: decide what to do about points outside the grid (warn, raise — that is
:meth:`tlop.runtime.profile.TableData.lookup`, using :func:`first_outside`), or validate grids
(the profile loader guarantees strictly increasing, finite grids before calling this).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Optional

import numpy as np

from tlop.runtime.errors import ProfileError

__all__ = [
    "Interpolation", "M_RULES", "M_BEYOND_RULES", "TAU_RULES", "OUT_OF_GRID_MODES",
    "segment", "lerp", "lookup_1d", "lookup_2d", "first_outside",
]

#: rules for m below the first grid point
M_RULES = ("linear", "clamp")
#: rules for m beyond the last grid point (``"chunks"``: whole largest-size messages plus the
#: remainder, libtaulop's rule)
M_BEYOND_RULES = ("linear", "clamp", "chunks")
#: rules for τ beyond the largest measured column
TAU_RULES = ("proportional", "clamp", "linear")
#: what a lookup outside the measured grid does
OUT_OF_GRID_MODES = ("allow", "warn", "error")

_CHOICES = {"m_below": M_RULES, "m_beyond": M_BEYOND_RULES, "tau_beyond": TAU_RULES,
            "out_of_grid": OUT_OF_GRID_MODES}


@dataclass(frozen=True)
class Interpolation:
    """The ``"interpolation"`` object of a profile: how every table of it is read."""
    m_below: str = "linear"
    m_beyond: str = "linear"
    tau_beyond: str = "proportional"
    nonnegative: bool = True
    #: a lookup outside the measured grid warns (once per table and evaluation) unless a profile
    #: or the user chooses ``"allow"`` explicitly (issue 22: no silent extrapolation)
    out_of_grid: str = "warn"

    def __post_init__(self):
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ProfileError(
                    f"interpolation.{name}: unknown rule {value!r}; expected one of {', '.join(choices)}")
        if not isinstance(self.nonnegative, bool):
            raise ProfileError(
                f"interpolation.nonnegative: expected true or false, got {self.nonnegative!r}")

    @classmethod
    def keys(cls) -> tuple:
        """The field names, in format order."""
        return tuple(f.name for f in fields(cls))

    def to_dict(self) -> dict:
        return asdict(self)


def segment(grid: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The segment index for each ``x`` on a grid of at least two points: the last ``i`` with
    ``grid[i] <= x``, clipped to ``0 .. len(grid) - 2``."""
    i = np.searchsorted(grid, x, side="right") - 1
    return np.minimum(np.maximum(i, 0), len(grid) - 2)


def lerp(x, x0, x1, v0, v1):
    """``v0 + (v1 - v0) * (x - x0) / (x1 - x0)``, and exactly ``v1`` where ``x == x1``."""
    return np.where(x == x1, v1, v0 + (v1 - v0) * (x - x0) / (x1 - x0))


def _clamp_m(x, grid, policy: Interpolation):
    if policy.m_below == "clamp":
        x = np.maximum(x, grid[0])
    if policy.m_beyond == "clamp":
        x = np.minimum(x, grid[-1])
    return x


def _along_m(x, grid, values):
    """A function ``j -> values[:, j] interpolated along m at x`` (``values[:]`` for ``j`` None).
    The m segment is found once and shared by both τ columns of a 2-D lookup."""
    if len(grid) == 1:
        zero = np.zeros(np.shape(x), dtype=np.intp)
        return lambda j=None: values[zero] if j is None else values[zero, j]
    i = segment(grid, x)
    x0, x1 = grid[i], grid[i + 1]
    if values.ndim == 1:
        return lambda j=None: lerp(x, x0, x1, values[i], values[i + 1])
    return lambda j: lerp(x, x0, x1, values[i, j], values[i + 1, j])


def _chunked(x, grid, read, policy: Interpolation):
    """Step 8: ``read(x)`` (steps 3–7 at x), or under ``m_beyond = "chunks"``, where x is past
    the last grid point ``s > 0``, ``read(s) * k + read(r)`` with ``x = k·s + r``, ``0 < r <= s``."""
    s = grid[-1]
    if policy.m_beyond != "chunks" or not s > 0:
        return read(x)
    over = x > s
    if not over.any():
        return read(x)
    with np.errstate(invalid="ignore"):
        r = np.fmod(x, s)
    r = np.where((r == 0) | np.isnan(r), s, r)
    k = np.floor((x - r) / s + 0.5)
    v = read(np.where(over, r, x))
    w = read(np.full_like(x, s))
    return np.where(over, w * k + v, v)


def lookup_1d(m_grid: np.ndarray, values: np.ndarray, m, policy: Interpolation) -> np.ndarray:
    """The value of a table ``f(m)`` (grid ``m_grid``, one value per grid point) at ``m``."""
    x = _clamp_m(np.asarray(m, dtype=np.float64), m_grid, policy)

    def read(x):
        r = _along_m(x, m_grid, values)()
        if policy.nonnegative:
            r = np.maximum(r, 0.0)
        return r

    return np.asarray(_chunked(x, m_grid, read, policy), dtype=np.float64)


def lookup_2d(m_grid: np.ndarray, tau_grid: np.ndarray, values: np.ndarray, m, tau,
              policy: Interpolation) -> np.ndarray:
    """The value of a table ``f(m, tau)`` (``values[i][j]`` at ``m_grid[i]``, ``tau_grid[j]``)
    at ``(m, tau)``, broadcasting ``m`` against ``tau``."""
    x, t = np.broadcast_arrays(np.asarray(m, dtype=np.float64), np.asarray(tau, dtype=np.float64))
    x = _clamp_m(x, m_grid, policy)
    tt = np.maximum(t, tau_grid[0])
    if policy.tau_beyond != "linear":
        tt = np.minimum(tt, tau_grid[-1])
    j = segment(tau_grid, tt) if len(tau_grid) > 1 else None

    def read(x):
        column_at_m = _along_m(x, m_grid, values)
        if j is None:
            r = column_at_m(0)
        else:
            a = column_at_m(j)
            b = column_at_m(j + 1)
            r = lerp(tt, tau_grid[j], tau_grid[j + 1], a, b)
        if policy.tau_beyond == "proportional":
            r = np.where(t > tau_grid[-1], r * t / tau_grid[-1], r)
        if policy.nonnegative:
            r = np.maximum(r, 0.0)
        return r

    return np.asarray(_chunked(x, m_grid, read, policy), dtype=np.float64)


def first_outside(grid: np.ndarray, x) -> Optional[float]:
    """The first value of ``x`` (in C order) outside ``[grid[0], grid[-1]]``, or None."""
    x = np.asarray(x, dtype=np.float64)
    mask = (x < grid[0]) | (x > grid[-1])
    if not mask.any():
        return None
    return float(x[mask].flat[0])
