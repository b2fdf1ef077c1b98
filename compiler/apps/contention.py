"""The contention ratio γ of paper 004 fitted to a measured all-to-all.

What it does: :func:`estimate_contention_ratio` reads the all-to-all timings ``tlop measure``
stores in a profile (``fits.collectives``, entries with algorithm ``alltoall``), prices 004 Table
3's bounds ``alltoall_lower`` and ``alltoall_upper`` (``stdlib/plogp/alltoall.tlop``) on the same
profile at each measured (P, m), and fits the γ of ``T = Lower + (Upper − Lower)·γ`` by least
squares through the origin: γ = Σ (T − Lower)(Upper − Lower) / Σ (Upper − Lower)².  It returns
the fit, every point's own ratio and the relative RMS error of the prediction.

What it does not do: measure (``tlop measure`` does), clip γ into [0, 1] (a γ outside says the
bounds do not bracket the measurement, which :attr:`ContentionFit.bracketed` reports per point),
or use the measurements of another channel than the one the profile's pLogP parameters come from
(``fits.plogp.source_channel``) unless told to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tlop.runtime.diagnostics import TlopError

__all__ = ["ContentionFit", "estimate_contention_ratio"]


@dataclass(frozen=True)
class ContentionFit:
    """γ fitted to ``points``: tuples ``(P, m, measured, lower, upper)`` in seconds."""
    gamma: float
    points: tuple
    channel: str
    impl: str
    rel_rms: float
    ratios: tuple = field(default=())

    @property
    def bracketed(self) -> tuple:
        """Per point: whether the measurement lies between the two bounds."""
        return tuple(lo <= t <= up for _, _, t, lo, up in self.points)


def estimate_contention_ratio(profile, *, impl: str = "mpi", channel: str | None = None) -> ContentionFit:
    """Fit 004's contention ratio γ to the all-to-all timings in ``profile`` (a Profile, bundled
    name or path) measured with ``impl`` (``"mpi"``: the library's own; ``"mpi:pairwise"`` …) on
    ``channel`` (default: the channel the profile's pLogP parameters were measured on)."""
    from tlop.api import load
    from tlop.runtime.profile import as_profile

    prof = as_profile(profile)
    colls = (prof.fits or {}).get("collectives") or []
    if channel is None:
        channel = ((prof.fits or {}).get("plogp") or {}).get("source_channel")
    rows = [c for c in colls if c.get("algorithm") == "alltoall" and c.get("impl") == impl
            and (channel is None or c.get("channel") == channel) and int(c.get("P", 0)) >= 2]
    if not rows:
        have = sorted({(c.get("impl"), c.get("channel")) for c in colls if c.get("algorithm") == "alltoall"})
        raise TlopError(f"profile '{prof.name}' has no measured all-to-all with impl '{impl}'"
                        + (f" on channel '{channel}'" if channel else "")
                        + (f"; it has: {', '.join(f'{i} on {c}' for i, c in have)}" if have else
                           " (tlop measure stores them in fits.collectives)"))
    mod = load("plogp/alltoall")
    lower_h, upper_h = mod["alltoall_lower"], mod["alltoall_upper"]
    if not lower_h.applies_to(prof):
        raise TlopError(f"profile '{prof.name}' has no pLogP parameters (g, os, or_, L) to price the bounds")
    points = []
    for r in sorted(rows, key=lambda c: (c["P"], c["m"])):
        P, m, t = int(r["P"]), float(r["m"]), float(r["median"])
        points.append((P, m, t, float(lower_h.evaluate(prof, P=P, m=m)), float(upper_h.evaluate(prof, P=P, m=m))))
    num = sum((t - lo) * (up - lo) for _, _, t, lo, up in points)
    den = sum((up - lo) ** 2 for _, _, _, lo, up in points)
    if den <= 0:
        raise TlopError(f"profile '{prof.name}': Upper − Lower is 0 at every measured point "
                        f"(g(m) = os(m)), so γ is undetermined")
    gamma = num / den
    errs = [((lo + (up - lo) * gamma) - t) / t for _, _, t, lo, up in points if t > 0]
    ratios = tuple((t - lo) / (up - lo) if up != lo else math.nan for _, _, t, lo, up in points)
    return ContentionFit(gamma, tuple(points), channel or "", impl,
                         math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else math.nan, ratios)
