"""An audit of a library's built-in decisions: what its default costs against the best algorithm of
the same library, cell by cell over a (P, m) grid.

What it does: :func:`audit` takes a pricing callback ``price(algorithm, params, P, m) -> seconds``
(the caller prices the stdlib schedules over its profile and mapping; ``inf``, NaN or None where
an algorithm cannot run), the library (``"openmpi"``: Open MPI 5.0's fixed decisions,
:mod:`tlop.decisions.openmpi_defaults`; ``"mpich"``: MPICH's selection tree,
:mod:`tlop.decisions.mpich_defaults`), a collective and the grid.  Per cell it finds the default
:class:`~tlop.decisions.openmpi_defaults.Decision`, the catalogue algorithm it is
(:meth:`Decision.algorithm`) and its price with the parameters the library passes; then prices
every algorithm of the library's catalogue for the collective (or the ``candidates`` given) — with
each combination of the values its ``searched`` parameters list over its ``fixed`` ones, and
skipping ``pow2_only`` algorithms at other P — and keeps the cheapest; the ratio default / best
says what a tuned file would gain there (``flagged`` from ``threshold``, 1.1 by default, on).
A default the catalogue does not list, or that the callback cannot price, gives a cell with
``default_cost`` None and its reason in ``note``: it is reported, not guessed.
:func:`as_json` is the cells as plain data, :func:`table_rows` as text rows.

What it does not do: price anything itself, read profiles, or draw (the heat map is
:func:`tlop.cli.plot_audit.ratio_figure`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, Optional

__all__ = ["Cell", "audit", "as_json", "table_rows", "default_decision"]


@dataclass
class Cell:
    P: int
    m: int
    default: object                   # Decision
    default_cost: Optional[float]     # seconds, None when not priced (see note)
    best: Optional[object]            # LibraryAlgorithm
    best_params: dict = field(default_factory=dict)
    best_cost: Optional[float] = None
    note: str = ""

    @property
    def ratio(self) -> Optional[float]:
        if self.default_cost is None or self.best_cost is None or self.best_cost <= 0:
            return None
        return self.default_cost / self.best_cost

    def flagged(self, threshold: float = 1.1) -> bool:
        return self.ratio is not None and self.ratio >= threshold


def default_decision(library: str, collective: str, P: int, m: int, commutative: bool = True, **kwargs):
    """The library's built-in decision for one call (``kwargs`` go to MPICH's :func:`decide`)."""
    if library == "openmpi":
        from tlop.decisions.openmpi_defaults import decide

        return decide(collective, P, m, commutative)
    if library == "mpich":
        from tlop.decisions.mpich_defaults import decide

        return decide(collective, P, m, commutative, **kwargs)
    raise ValueError(f"no built-in decisions of {library!r} are modelled (openmpi, mpich)")


def _finite(v) -> Optional[float]:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _variants(a):
    fixed = dict(getattr(a, "fixed", {}) or {})
    searched = dict(getattr(a, "searched", {}) or {})
    if not searched:
        yield fixed
        return
    keys = list(searched)
    for values in itertools.product(*(tuple(searched[k]) for k in keys)):
        yield {**fixed, **dict(zip(keys, values))}


def _costs(price, vectorized: bool, a, params: dict, P: int, ms) -> list:
    """``price`` of ``a`` with ``params`` at P for every m of ``ms`` (None where not finite)."""
    if vectorized:
        import numpy as np

        values = np.asarray(price(a, params, P, np.asarray(ms, dtype=float)), dtype=float).reshape(-1)
        if values.shape != (len(ms),):
            raise ValueError(f"the vectorized price of {a.name} returned {values.shape[0]} costs for {len(ms)} sizes")
        return [_finite(v) for v in values]
    return [_finite(price(a, params, P, m)) for m in ms]


def audit(library: str, collective: str, Ps, ms, price: Callable, *, candidates=None, commutative: bool = True,
          default: Optional[Callable] = None, decide_kwargs: Optional[dict] = None,
          vectorized: bool = False) -> list:
    """One :class:`Cell` per (P, m) of ``Ps`` × ``ms``, P-major.

    ``candidates``: the library's algorithms to search (default: the catalogue's for ``library``
    and ``collective`` that ``tlop tune`` may name — schedules and Open MPI's composites); ``default(P, m) -> (Decision, LibraryAlgorithm or None)`` replaces the
    built-in decision (tests, or a library version not modelled).  ``vectorized``: ``price`` takes
    a numpy array of message sizes and returns one cost per size (one call per algorithm,
    parameters and P instead of one per cell — the engines price arrays far faster)."""
    if candidates is None:
        from tlop.decisions.catalogue import catalogue

        candidates = [a for a in catalogue(collective, library) if a.priceable and a.candidate]
    candidates = list(candidates)
    ms = [int(m) for m in ms]
    cells = []
    for P in Ps:
        P = int(P)
        decisions = []
        for m in ms:
            if default is not None:
                decision, algorithm = default(P, m)
            else:
                decision = default_decision(library, collective, P, m, commutative, **(decide_kwargs or {}))
                try:
                    algorithm = decision.algorithm()
                except KeyError:
                    algorithm = None
            decisions.append((decision, algorithm))
        # the defaults, priced once per (algorithm, parameters) over the sizes where each is the default
        default_costs: list = [None] * len(ms)
        groups: dict = {}
        for j, (decision, algorithm) in enumerate(decisions):
            if algorithm is not None and getattr(algorithm, "priceable", True):
                params = {**dict(getattr(algorithm, "fixed", {}) or {}), **decision.params}
                key = (algorithm.library, algorithm.collective, algorithm.name, tuple(sorted(params.items())))
                groups.setdefault(key, (algorithm, params, []))[2].append(j)
        for algorithm, params, js in groups.values():
            for j, v in zip(js, _costs(price, vectorized, algorithm, params, P, [ms[j] for j in js])):
                default_costs[j] = v
        # the best of the library at every size
        best = [(None, {}, None)] * len(ms)
        for a in candidates:
            if getattr(a, "pow2_only", False) and P & (P - 1):
                continue
            for params in _variants(a):
                for j, v in enumerate(_costs(price, vectorized, a, params, P, ms)):
                    if v is not None and (best[j][2] is None or v < best[j][2]):
                        best[j] = (a, params, v)
        for j, m in enumerate(ms):
            decision, algorithm = decisions[j]
            default_cost, note = default_costs[j], ""
            if algorithm is None:
                note = f"the default {decision.name} ({decision.id}) is not in tlop's catalogue"
            elif not getattr(algorithm, "priceable", True):
                note = f"the default {decision.name} has no schedule ({algorithm.status})"
            elif default_cost is None:
                note = f"the default {decision.name} cannot be priced here"
            b, b_params, b_cost = best[j]
            if default_cost is not None and (b_cost is None or default_cost < b_cost):
                b, b_params, b_cost = algorithm, dict(decision.params), default_cost
            cells.append(Cell(P, m, decision, default_cost, b, b_params, b_cost, note))
    return cells


def as_json(cells, threshold: float = 1.1) -> list:
    """The cells as JSON-ready dicts."""
    out = []
    for c in cells:
        out.append({"P": c.P, "m": c.m,
                    "default": {"id": c.default.id, "name": c.default.name, "params": c.default.params,
                                "cost": c.default_cost, "source": c.default.source},
                    "best": None if c.best is None else {"id": c.best.id, "name": c.best.name,
                                                         "params": c.best_params, "cost": c.best_cost},
                    "ratio": c.ratio, "flagged": c.flagged(threshold), "note": c.note})
    return out


def table_rows(cells, threshold: float = 1.1) -> list:
    """``[P, m, default, its cost, best, its cost, ratio, mark]`` rows (costs in seconds)."""
    rows = []
    for c in cells:
        rows.append([c.P, c.m, c.default.name, c.default_cost, None if c.best is None else c.best.name,
                     c.best_cost, c.ratio, "*" if c.flagged(threshold) else (c.note or "")])
    return rows
