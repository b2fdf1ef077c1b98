"""The model's measured error per cell, read from a ``tlop validate`` run, for ``tlop tune``.

What it does: :func:`load_validation` reads the samples a ``tlop validate`` run keeps
(``samples.jsonl`` in its ``--out`` directory, or the file itself): every measured point of a
schedule carries its algorithm (``taulop/allreduce:ring``, ``coll/bcast:mpich_binomial`` …), P, m,
the median of its measured times and the cost the model predicted for it.  A tuning decision
rests on a *ratio* of two predictions (the default against the cheapest), so the error that
matters is the model's error on ratios, not on absolute times: for two algorithms a and b of one
collective measured at the same (P, m),

    e(a, b) = (measured_a / measured_b) / (predicted_a / predicted_b),

and the cell's measured error is ``max(e, 1/e)`` over every such pair (≥ 1; 1.25 means the model
put some pair's ratio 25 % off).  :meth:`ModelError.at` answers it for a (collective, P, m) —
only where at least two algorithms of that collective were measured at exactly that P and m
(no interpolation, no extrapolation: elsewhere it answers None and the caller says so).

The collective of an algorithm is the module's last name (``taulop/allreduce`` and
``coll/allreduce`` are both ``allreduce``), so a validation of the stdlib's schedules or of the
catalogue's both count; m is the schedule's m, which for the catalogue's schedules is the
library's own per-rank buffer, as ``tune`` reads it.

What it does not do: measure (``tlop validate`` does), re-price the points (the run recorded its
predictions, made with the profile it was given; the samples do not name that profile, so the
error is the run's, and the caller says which run), or judge a cell with one algorithm (an
absolute error says nothing about a ranking).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Optional

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable

__all__ = ["ModelError", "CellError", "load_validation", "collective_of"]


def collective_of(algorithm: str) -> str:
    """``taulop/allreduce:ring`` → ``allreduce`` (the last name of the module)."""
    module = algorithm.split(":", 1)[0]
    return module.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class CellError:
    """The measured error of one cell: the factor (≥ 1) and the pair that sets it."""
    factor: float
    pairs: int          # pairs of algorithms measured at this cell
    worst: tuple        # (algorithm a, algorithm b) of the largest error

    def describe(self) -> str:
        a, b = self.worst
        return (f"{self.factor:.3f}x measured (worst of {self.pairs} pair{'s' if self.pairs != 1 else ''}: "
                f"{a.split(':', 1)[-1]} / {b.split(':', 1)[-1]})")


@dataclass
class ModelError:
    """Measured points per (collective, P, m): ``{algorithm: (median_s, predicted_s)}``."""
    source: str
    points: dict = field(default_factory=dict)

    def at(self, collective: str, P: int, m: int) -> Optional[CellError]:
        algs = self.points.get((collective, int(P), int(m)))
        if not algs or len(algs) < 2:
            return None
        names = sorted(algs)
        worst, pair, n = 1.0, (names[0], names[1]), 0
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                (ma, pa), (mb, pb) = algs[a], algs[b]
                e = (ma / mb) / (pa / pb)
                e = max(e, 1.0 / e)
                n += 1
                if e > worst:
                    worst, pair = e, (a, b)
        return CellError(worst, n, pair)

    def cells(self, collective: str) -> list:
        """The (P, m) where :meth:`at` answers for ``collective``."""
        return sorted((P, m) for (c, P, m), algs in self.points.items() if c == collective and len(algs) >= 2)


def load_validation(path: str) -> ModelError:
    """The measured points of a ``tlop validate`` run (its ``--out`` directory or its
    ``samples.jsonl``).  Raises :class:`TlopError` when there is nothing usable."""
    p = os.path.join(path, "samples.jsonl") if os.path.isdir(path) else path
    try:
        with open(p, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        raise TlopError(f"--error-from {printable(path)}: cannot read the validation samples ({e.strerror or e})")
    out = ModelError(source=p)
    for k, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            # a run interrupted while writing leaves a torn last line; anything else is not ours
            if k == len(lines):
                continue
            raise TlopError(f"--error-from {printable(path)}: {printable(p)}:{k} is not a JSON line of tlop validate's "
                            f"samples")
        if not isinstance(rec, dict) or rec.get("kind") != "point":
            continue
        params = rec.get("params") or {}
        alg = params.get("algorithm")
        stats = rec.get("stats") or {}
        try:
            P, m = int(params["P"]), int(params["m"])
            median, predicted = float(stats["median"]), float(rec["predicted"])
        except (KeyError, TypeError, ValueError):
            continue   # a point without a prediction (a library run) or unfinished
        if not isinstance(alg, str) or not (median > 0 and predicted > 0) \
                or not (math.isfinite(median) and math.isfinite(predicted)):
            continue
        out.points.setdefault((collective_of(alg), P, m), {})[alg] = (median, predicted)
    if not out.points:
        raise TlopError(f"--error-from {printable(path)}: no measured point with a prediction in {printable(p)} "
                        f"(expected the samples.jsonl that tlop validate --out DIR writes)")
    return out
