"""The selection ``tlop tune`` prints and writes: per library, the algorithm to run at each (P, m).

What it does: prices every algorithm of one library's catalogue for a collective
(:mod:`tlop.decisions.catalogue`) — its stdlib schedule (or, for a composite that calls the
library's own collectives, the sum of what the library runs for those calls:
:mod:`tlop.decisions.composite`; MPICH's ``smp`` is priced as a default, never offered), in one
model, over one process mapping,
with the arguments the library fixes and every combination of the parameters it takes per call
(segment size ``seg``, radix or fan-out ``k``) — at every point of a (P, m) grid, and ranks them.
A :class:`Cell` holds the ranking, the library's own default priced the same way (when the caller
gives the library's decision, :mod:`tlop.decisions.defaults`), and what a tuning file should name
there (:attr:`Cell.chosen`):

* the cheapest algorithm, unless
* the library's default is within ``min_gain`` of it (the predicted gain is below what the model
  can tell apart: the default is kept, and the cell says so), or
* the library's default is an algorithm tlop cannot price (not expressible, or not priced at this
  point): a file must never override an algorithm it has not priced, so the default is kept.

Every candidate is priced in the same model and over the same mapping: nothing else competes.

What it does not do: write files (:mod:`tlop.decisions.files`), print (:mod:`tlop.cli.tune`), or
know the libraries' defaults itself (the caller passes ``default_of``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from tlop.decisions.catalogue import LibraryAlgorithm, catalogue
from tlop.runtime.diagnostics import TlopError

__all__ = ["Priced", "Cell", "Pricer", "select", "MODULE_OF", "MAX_SEGMENTS", "segment_cap"]

#: in a dataflow model (LogGP, pLogP) the search does not try a segment size that cuts m into more
#: segments than this: there a repeated stage runs once per repetition (the clocks carry over), so
#: pricing a pipeline of n segments enumerates O(n) stages (65,536 segments over 1,024 ranks: about
#: a minute per point).  τ-Lop prices the catalogue's pipelines in O(depth) stages whatever n is
#: (stdlib/coll/*.tlop repeat one steady stage), so it searches every segment size: no cap.
#: tune's header says when the cap applies.
MAX_SEGMENTS = 4096


def segment_cap(model: str) -> Optional[int]:
    """The most segments a searched segment size may cut m into in ``model`` (None: no limit)."""
    from tlop.backends.dataflow_names import DATAFLOW_MODELS

    return MAX_SEGMENTS if model in DATAFLOW_MODELS else None


def MODULE_OF(collective: str) -> str:
    """The stdlib module of a collective's schedules."""
    return f"coll/{collective}"


@dataclass(frozen=True)
class Priced:
    """One library algorithm with the parameters chosen for it, and its predicted cost (s)."""
    algorithm: LibraryAlgorithm
    params: dict = field(default_factory=dict)   # the per-call parameters chosen (seg, k …)
    cost: float = math.inf

    def label(self) -> str:
        from tlop.runtime.units import format_size

        extra, name = [], self.algorithm.name
        for k, v in sorted(self.params.items()):
            if k == "proto" and self.algorithm.library == "nccl":  # NCCL's protocol: ring/ll128
                from tlop.decisions.catalogue.nccl import PROTOCOLS

                name += "/" + PROTOCOLS[int(v)]
                continue
            extra.append(f"{k}={format_size(v)}" if k == "seg" and v else f"{k}={int(v)}")
        return name + (f" ({', '.join(extra)})" if extra else "")


@dataclass(frozen=True)
class Cell:
    """The decision at one (P, m) for one library."""
    P: int
    m: int
    ranking: tuple                   # Priced, cheapest first (finite costs only)
    default: Optional[Priced]        # the library's own choice, priced (cost inf: not priced)
    chosen: Optional[Priced]         # what a file names here (None: nothing priced, nothing written)
    note: str = ""                   # why the chosen one is not the cheapest, when it is not

    @property
    def best(self) -> Optional[Priced]:
        return self.ranking[0] if self.ranking else None

    @property
    def runner_up(self) -> Optional[Priced]:
        """The cheapest priced algorithm other than the one :attr:`chosen` runs (another
        algorithm, not the same one with other parameters — except the parameters whose values
        are candidates of their own, ``LibraryAlgorithm.separate``: NCCL's protocols); cheaper than
        it where the default is kept."""
        if not self.ranking or self.chosen is None:
            return None
        return next((p for p in self.ranking if _candidate(p) != _candidate(self.chosen)), None)

    @property
    def margin(self) -> float:
        """Runner-up cost / chosen cost (inf when there is no runner-up; below 1 where a default
        is kept although another algorithm is predicted cheaper)."""
        r = self.runner_up
        if r is None or self.chosen is None or not math.isfinite(self.chosen.cost) or self.chosen.cost <= 0:
            return math.inf
        return r.cost / self.chosen.cost

    @property
    def gain(self) -> float:
        """Default's cost / chosen cost (nan when the default was not priced)."""
        if self.default is None or self.chosen is None or not math.isfinite(self.default.cost):
            return math.nan
        return self.default.cost / self.chosen.cost if self.chosen.cost > 0 else math.nan


class Pricer:
    """Prices library algorithms' schedules on one profile, mapping and model."""

    def __init__(self, profile, mapping, model: str):
        self.profile = profile
        self.mapping = mapping
        self.model = model
        self._modules: dict = {}
        self._evaluators: dict = {}
        self._subs: dict = {}
        #: {collective: [Rule]} of the Open MPI file being written: the calls composites make
        #: follow them (tlop.decisions.composite); empty: Open MPI's fixed decisions
        self.openmpi_rules: dict = {}

    def sub(self, mapping_text: str) -> "Pricer":
        """The pricer of a sub-communicator placed by ``mapping_text`` (same profile, model and
        Open MPI rules; its modules shared)."""
        if mapping_text not in self._subs:
            from tlop.backends.binding import as_mapping

            p = Pricer(self.profile, as_mapping(mapping_text), self.model)
            p._modules = self._modules
            p.openmpi_rules = self.openmpi_rules
            self._subs[mapping_text] = p
        return self._subs[mapping_text]

    def handle(self, alg: LibraryAlgorithm):
        if alg.schedule is None:
            return None
        module_name, _, name = alg.schedule.partition(":")
        key = module_name
        if key not in self._modules:
            from tlop.api import load

            self._modules[key] = load(module_name, model=self.model)
        return self._modules[key][name]

    def _compiled(self, h, over):
        """The JIT evaluator of handle ``h`` over ``over`` (None when it cannot be compiled, e.g.
        a LogGP/pLogP dataflow schedule: the interpreter prices it)."""
        key = (id(h), id(over))
        if key not in self._evaluators:
            from tlop.backends.jit import NotCompilable

            try:
                self._evaluators[key] = (h, h.compile(self.profile, mapping=over))
            except NotCompilable:
                self._evaluators[key] = (h, None)
        return self._evaluators[key][1]

    def price(self, alg: LibraryAlgorithm, P: int, ms: np.ndarray, params: dict, searched: bool = False) -> np.ndarray:
        """Costs (s) of ``alg`` at P ranks for every m of ``ms`` with ``params``; inf where the
        schedule refuses the point (its ``where`` clause, e.g. a segment larger than m) and, when
        ``searched``, where ``params``' segment cuts m into more than :func:`segment_cap` allows;
        inf everywhere for a ``one_per_node`` algorithm unless the mapping puts each rank on a node
        of its own.
        Compiled (the JIT agrees with the interpreter to 1e-12) when it can be, else interpreted."""
        from tlop.backends.binding import binder_for

        if alg.one_per_node and (self.mapping is None or self.mapping.nodes(P) != P):
            return np.full(len(np.asarray(ms)), np.inf)  # the library does not run it here
        if alg.schedule is None and alg.parts is not None:
            from tlop.decisions.composite import price as price_composite

            return price_composite(self, alg, P, ms)
        h = self.handle(alg)
        names = {p.name for p in h.params}
        ms = np.asarray(ms, dtype=float)
        args = {k: np.full(len(ms), float(v)) for k, v in {**alg.fixed, **params}.items() if k in names}
        if "P" in names:
            args["P"] = np.full(len(ms), float(P))
        if "m" in names:
            args["m"] = ms
        over = self.mapping if h.ir.over is not None else None
        ok = np.broadcast_to(binder_for(h.module.program, h.ir).valid_mask(args), ms.shape)
        seg = float(params.get("seg", 0) or 0)
        cap = segment_cap(self.model)
        if seg > 0 and searched and cap is not None:
            ok = ok & (np.ceil(ms / seg) <= cap)
        out = np.full(len(ms), np.inf)
        if not ok.any():
            return out
        sub = {k: v[ok] for k, v in args.items()}
        ev = self._compiled(h, over)
        if ev is not None:
            vals = ev(**sub)
        else:
            vals = h.evaluate(self.profile, mapping=over, **sub)
        vals = np.broadcast_to(np.asarray(vals, dtype=float), (int(ok.sum()),))
        out[ok] = np.where(np.isfinite(vals), vals, np.inf)
        return out

    def best_params(self, alg: LibraryAlgorithm, P: int, ms: np.ndarray, only_params: Optional[dict] = None):
        """For every m: (cost, params) of ``alg`` with the cheapest combination of its searched
        parameters (or exactly ``only_params`` when given)."""
        if only_params is not None:
            combos = [dict(only_params)]
        else:
            keys = sorted(alg.searched)
            combos = [dict(zip(keys, vals)) for vals in itertools.product(*(alg.searched[k] for k in keys))] or [{}]
        best = np.full(len(ms), np.inf)
        which = [None] * len(ms)
        for combo in combos:
            costs = self.price(alg, P, ms, combo, searched=only_params is None)
            better = costs < best
            best = np.where(better, costs, best)
            for i in np.flatnonzero(better):
                which[i] = combo
        return best, which


def _applies(alg: LibraryAlgorithm, P: int) -> bool:
    return not (alg.pow2_only and P & (P - 1))


def _candidate(p: Priced) -> tuple:
    """What tells candidates apart: the algorithm and its ``separate`` parameters' values."""
    return p.algorithm, tuple(p.params.get(k) for k in p.algorithm.separate)


def _split(alg: LibraryAlgorithm) -> list:
    """``[(key, params fixed, the algorithm searching the rest)]``: one candidate per combination
    of the values of ``alg.separate`` (just ``alg`` when it has none)."""
    from dataclasses import replace

    keys = [k for k in alg.separate if k in alg.searched]
    if not keys:
        return [(alg.name, {}, alg)]
    out = []
    for vals in itertools.product(*(alg.searched[k] for k in keys)):
        fixed = dict(zip(keys, vals))
        rest = {k: v for k, v in alg.searched.items() if k not in keys}
        out.append(((alg.name,) + tuple(vals), fixed, replace(alg, searched=rest, fixed={**alg.fixed, **fixed})))
    return out


def select(library: str, collective: str, pricer: Pricer, Ps, ms, *, only=None, min_gain: float = 1.0,
           default_of: Optional[Callable] = None, error_at: Optional[Callable] = None) -> list:
    """Every :class:`Cell` of the grid, P-major.  ``default_of(P, m)`` gives the library's own
    choice as ``(algorithm name or id, params)`` (None: unknown); ``min_gain`` is the smallest
    predicted gain over a priced default for which a file overrides it, except where
    ``error_at(P, m)`` gives the model's measured error at that cell
    (:class:`tlop.decisions.model_error.CellError`): there the gain must exceed that error."""
    algs = [a for a in catalogue(collective, library) if a.priceable and a.candidate
            and (not only or a.name in only or str(a.id) in only)]
    if not algs:
        known = ", ".join(a.name for a in catalogue(collective, library)) or "(none)"
        raise TlopError(f"{library} has no {collective} algorithm tlop can price" +
                        (f" among {', '.join(only)}; its algorithms: {known}" if only else ""))
    everything = {a.name: a for a in catalogue(collective, library)}
    by_id = {str(a.id): a for a in catalogue(collective, library)}
    ms = np.asarray(ms, dtype=float)
    cells = []
    for P in Ps:
        priced_by_alg = {}
        for a in algs:
            if _applies(a, P):
                for key, fixed, searched in _split(a):
                    priced_by_alg[key] = (a, fixed, pricer.best_params(searched, P, ms))
        for j, m in enumerate(ms):
            ranking = sorted((Priced(a, {**fixed, **(which[j] or {})}, float(cost[j]))
                              for a, fixed, (cost, which) in priced_by_alg.values() if math.isfinite(cost[j])),
                             key=lambda p: (p.cost, p.algorithm.name, p.label()))
            default = None
            if default_of is not None:
                d = default_of(P, int(m))
                if d is not None:
                    name, params = d
                    alg = everything.get(str(name)) or by_id.get(str(name))
                    if alg is None:
                        raise TlopError(f"{library}'s default {collective} at P = {P}, m = {int(m)} B is {name!r}, "
                                        f"which is not in tlop's catalogue of {library} {collective} algorithms")
                    cost = math.inf
                    if alg.priceable and _applies(alg, P):
                        cost = float(pricer.best_params(alg, P, np.asarray([m]), only_params=params or {})[0][0])
                    default = Priced(alg, dict(params or {}), cost)
            chosen, note = (ranking[0] if ranking else None), ""
            if default is not None and chosen is not None:
                if not math.isfinite(default.cost):
                    chosen = default
                    note = (f"default {default.label()} not priced ("
                            f"{default.algorithm.status if not default.algorithm.priceable else 'refused here'}"
                            f"): kept, a file never overrides what tlop has not priced")
                elif (default.algorithm == chosen.algorithm and default.params == chosen.params) \
                        or default.cost <= chosen.cost:
                    note = "the default is the cheapest" + ("" if default.algorithm == chosen.algorithm
                                                            else f" (tied with {chosen.label()})")
                    chosen = default
                else:
                    measured = error_at(P, int(m)) if error_at is not None else None
                    threshold = measured.factor if measured is not None else min_gain
                    if default.cost <= chosen.cost * threshold:
                        gain = default.cost / chosen.cost if chosen.cost > 0 else 1.0
                        note = (f"default kept: predicted gain {gain:.3f}x of {chosen.label()} is below "
                                + (f"the model's error at this cell, {measured.describe()}" if measured is not None
                                   else f"{min_gain:g}x"))
                        chosen = default
                    elif measured is not None:
                        note = (f"predicted gain {default.cost / chosen.cost:.3f}x exceeds the model's error at "
                                f"this cell, {measured.describe()}")
            cells.append(Cell(int(P), int(m), tuple(ranking), default, chosen, note))
    return cells
