"""Speed functions as tables, and the functional-performance-model partition built on them.

A *speed function* (FuPerMod's functional performance model, the one paper 000's partitions come
from) gives a process's computation speed as a function of its problem size: here a table of
problem sizes (blocks of the matrix a process owns, its rectangle's area) and speeds (blocks per
second, or any unit common to all processes), linear between the points and constant beyond the
first and the last.  A speed-function file (``"tlop_speeds": 1``, schema in
``docs/configurations.rst``) holds one table per *process type* — an entry says which processes
it applies to by ``node_type``, ``kind`` and ``cores`` (each optional; a process takes the
matching entry that gives the most of them).

What it does:

* :func:`read_speeds_file` / :func:`speeds_from_text` — read and validate a speed-function file;
  every error names the file, the line and column of the offending value and the field
  (``functions[2].speed[3]``), like the layout and partition files (:mod:`tlop.runtime.configs`).
* :meth:`SpeedFunctions.for_layout` — the speed function of each rank of a layout.
* :func:`balanced_sizes` — the functional performance model's partition of a total size: the
  sizes ``d_i`` with ``Σ d_i = total`` at which every process takes the same time
  ``d_i / s_i(d_i)`` (bisection on that time; each size from its time exactly, segment by
  segment).  A table's time ``d / s(d)`` must grow with ``d`` (checked on reading: no segment's
  speed may grow as fast as the size), so the balanced sizes are unique.
* :func:`fpm_partition` — the column-based (or 1D slab) partition of an N × N matrix of blocks
  for those sizes: :func:`tlop.runtime.partition.column_partition` with each process's relative
  speed its speed at its balanced size, ``s_i(d_i)`` (proportional to ``d_i``; constant speed
  functions give exactly the constant-speed partition).

What it does not do: measure speed functions (FuPerMod's benchmarks), or refine the integer
rectangles by the speed functions (the rounding of the column partition stays: every width and
height within one block of the balanced ones, so the times are balanced within one block row
and one block column of each process).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from tlop.runtime.configs import ConfigError, Configuration, Partition, _describe, _Doc, _read_text

__all__ = ["SpeedFunction", "SpeedFunctions", "read_speeds_file", "bundled_speeds", "speeds_from_text", "constant_speeds",
           "balanced_sizes", "fpm_partition", "speeds_json"]

_TOP_KEYS = ("tlop_speeds", "name", "description", "provenance", "size_unit", "speed_unit", "functions")
_FN_KEYS = ("node_type", "kind", "cores", "description", "size", "speed")
_MATCH_KEYS = ("node_type", "kind", "cores")
#: most points one speed function may have
MAX_POINTS = 100_000


@dataclass(frozen=True)
class SpeedFunction:
    """One piecewise-linear speed function: ``speed`` at each problem size ``size`` (strictly
    increasing, positive), linear in between, constant outside."""
    size: tuple
    speed: tuple
    label: str = ""

    def __call__(self, d):
        return np.interp(np.asarray(d, dtype=float), self.size, self.speed)

    def time(self, d):
        """The computation time of a problem of size ``d``: ``d / s(d)``."""
        d = np.asarray(d, dtype=float)
        return d / self(d)

    def size_at(self, t: float) -> float:
        """The problem size computed in time ``t`` (the inverse of :meth:`time`, which grows)."""
        x = np.asarray(self.size, dtype=float)
        s = np.asarray(self.speed, dtype=float)
        if t <= 0:
            return 0.0
        times = x / s
        if t <= times[0]:
            return t * s[0]
        if t >= times[-1]:
            return t * s[-1]
        k = int(np.searchsorted(times, t, side="right")) - 1  # times[k] <= t < times[k+1]
        b = (s[k + 1] - s[k]) / (x[k + 1] - x[k])
        a = s[k] - b * x[k]  # the segment's line s(d) = a + b·d, a > 0 (checked on reading)
        d = t * a / (1.0 - t * b)  # d = t·s(d)
        return float(min(max(d, x[k]), x[k + 1]))

    @property
    def constant(self) -> bool:
        return len(set(self.speed)) == 1


@dataclass(frozen=True)
class SpeedFunctions:
    """The speed functions of a file: ``entries`` are ``(match, SpeedFunction)`` with ``match``
    a dict of the fields ``node_type``, ``kind`` and ``cores`` the entry requires."""
    entries: tuple
    name: str = ""
    description: str = ""
    provenance: str = ""
    source: str = "<speeds>"

    def function_for(self, node_type: Optional[str], kind: str, cores: int) -> SpeedFunction:
        """The speed function of a process of this type: the matching entry giving the most
        fields (ConfigError when none matches, or two equally specific entries do)."""
        have = {"node_type": node_type, "kind": kind, "cores": cores}
        best, tied = None, None
        for match, fn in self.entries:
            if all(have[k] == v for k, v in match.items()):
                if best is None or len(match) > len(best[0]):
                    best, tied = (match, fn), None
                elif len(match) == len(best[0]):
                    tied = (match, fn)
        what = ", ".join(f"{k} {v!r}" for k, v in have.items() if v is not None)
        if best is None:
            raise ConfigError(f"{self.source}: no speed function for a process with {what}; add an entry "
                              f"matching it to 'functions'")
        if tied is not None:
            raise ConfigError(f"{self.source}: two speed functions fit a process with {what} equally "
                              f"({best[1].label} and {tied[1].label}); give one more field to choose")
        return best[1]

    def for_layout(self, cfg: Configuration) -> list:
        """The speed function of each rank of ``cfg``."""
        kinds = cfg.kinds or ("cpu",) * cfg.P
        cores = cfg.cores or (1,) * cfg.P
        out = []
        for r in range(cfg.P):
            t = cfg.type_names[cfg.node_type[r]] if cfg.type_names else None
            try:
                out.append(self.function_for(t, kinds[r], cores[r]))
            except ConfigError as err:
                raise ConfigError(f"rank {r}: {err.diagnostics[0].message}") from None
        return out


# ---------------------------------------------------------------------------------------- reading

def _number(doc: _Doc, v, path, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        doc.fail(path, f"expected {what}, got {_describe(v)}")
    try:
        x = float(v)
    except OverflowError:  # an integer beyond the largest double
        x = float("inf")
    if not np.isfinite(x) or x <= 0:
        shown = repr(v) if len(repr(v)) <= 40 else f"an integer of {len(str(abs(v)))} digits"
        doc.fail(path, f"expected {what} > 0, got {shown}")
    return x


def _function(doc: _Doc, f, i: int) -> tuple:
    path = ("functions", i)
    doc.obj(f, path, _FN_KEYS, ("size", "speed"))
    match = {}
    if "node_type" in f:
        match["node_type"] = doc.text(f["node_type"], path + ("node_type",))
    if "kind" in f:
        if f["kind"] not in ("cpu", "gpu"):
            doc.fail(path + ("kind",), f"expected \"cpu\" or \"gpu\", got {_describe(f['kind'])}")
        match["kind"] = f["kind"]
    if "cores" in f:
        match["cores"] = doc.integer(f["cores"], path + ("cores",), 1, 1 << 20, "a number of cores")
    for key in ("size", "speed"):
        v = f[key]
        if not isinstance(v, list) or not v:
            doc.fail(path + (key,), f"expected a non-empty list of numbers, got {_describe(v)}")
        if len(v) > MAX_POINTS:
            doc.fail(path + (key,), f"{len(v):,} points; at most {MAX_POINTS:,}")
    size = [_number(doc, x, path + ("size", j), "a problem size") for j, x in enumerate(f["size"])]
    speed = [_number(doc, x, path + ("speed", j), "a speed") for j, x in enumerate(f["speed"])]
    if len(size) != len(speed):
        doc.fail(path + ("speed",), f"expected {len(size)} speeds (one per size), got {len(speed)}")
    for j in range(1, len(size)):
        if size[j] <= size[j - 1]:
            doc.fail(path + ("size", j), f"sizes must be strictly increasing: {size[j]:g} after {size[j - 1]:g}")
        # the time d/s(d) must grow along the segment: s(d) = a + b·d with a > 0
        b = (speed[j] - speed[j - 1]) / (size[j] - size[j - 1])
        if speed[j - 1] - b * size[j - 1] <= 0:
            doc.fail(path + ("speed", j), f"the speed grows from {speed[j - 1]:g} to {speed[j]:g} while the size "
                     f"grows from {size[j - 1]:g} to {size[j]:g}: as fast as the size or faster, so the time "
                     f"size/speed would not grow with the size (the balanced partition would not be unique)")
    label = f"functions[{i}]" + (f" ({', '.join(f'{k}={v}' for k, v in match.items())})" if match else "")
    return match, SpeedFunction(tuple(size), tuple(speed), label)


def _speeds(doc: _Doc, data, source: str) -> SpeedFunctions:
    doc.obj(data, (), _TOP_KEYS, ("tlop_speeds", "functions"))
    if data["tlop_speeds"] != 1:
        doc.fail(("tlop_speeds",), f"expected 1 (the speed-function format version), got "
                 f"{_describe(data['tlop_speeds'])}")
    for key in ("name", "description", "provenance"):
        if key in data:
            doc.text(data[key], (key,))
    if data.get("size_unit", "blocks") != "blocks":
        doc.fail(("size_unit",), f"expected \"blocks\" (a process's problem size: its rectangle's area), got "
                 f"{_describe(data['size_unit'])}")
    if "speed_unit" in data:
        doc.text(data["speed_unit"], ("speed_unit",))
    fns = data["functions"]
    if not isinstance(fns, list) or not fns:
        doc.fail(("functions",), "expected a non-empty list of {\"size\": […], \"speed\": […]} objects")
    entries, seen = [], {}
    for i, f in enumerate(fns):
        match, fn = _function(doc, f, i)
        key = tuple(sorted(match.items()))
        if key in seen:
            doc.fail(("functions", i), f"the same process type as functions[{seen[key]}]"
                     f"{' (' + ', '.join(f'{k}={v}' for k, v in match.items()) + ')' if match else ''}")
        seen[key] = i
        entries.append((match, fn))
    return SpeedFunctions(tuple(entries), name=str(data.get("name", "")), description=str(data.get("description", "")),
                          provenance=str(data.get("provenance", "")), source=source)


def speeds_from_text(text: str, source: str = "<speeds>") -> SpeedFunctions:
    """A speed-function file's text, validated."""
    doc, data = _Doc.parse(text, source)
    return _speeds(doc, data, source)


def read_speeds_file(path: Union[str, Path]) -> SpeedFunctions:
    """A speed-function file (``"tlop_speeds": 1``), validated; a bundled one by name
    (``fermi-summa``: ``stdlib/speeds/NAME.json``)."""
    p = Path(path)
    if not p.is_file():
        known = bundled_speeds()
        if str(path) in known:
            p = known[str(path)]
        elif not p.exists() and p.suffix != ".json":
            raise ConfigError(f"--speeds {path}: no bundled speed functions or file of that name (bundled: "
                              f"{', '.join(known) or 'none'})")
    return speeds_from_text(_read_text(p, "speed-function"), str(path))


def bundled_speeds() -> dict:
    """Name -> path of the bundled speed-function files (``stdlib/speeds/*.json``)."""
    d = Path(__file__).resolve().parent.parent / "stdlib" / "speeds"
    if not d.is_dir():
        from importlib import resources

        d = Path(str(resources.files("tlop.stdlib") / "speeds"))
    return {q.stem: q for q in sorted(d.glob("*.json"))} if d.is_dir() else {}


def constant_speeds(speeds: dict) -> SpeedFunctions:
    """Constant speed functions from ``{(node_type, kind, cores): speed}`` (None fields match
    any value): the constant-speed model as speed functions."""
    entries = []
    for (t, k, c), s in speeds.items():
        match = {n: v for n, v in (("node_type", t), ("kind", k), ("cores", c)) if v is not None}
        entries.append((match, SpeedFunction((1.0,), (float(s),), f"{match}")))
    return SpeedFunctions(tuple(entries), name="constant")


def speeds_json(fns: SpeedFunctions) -> dict:
    """A :class:`SpeedFunctions` as a speed-function file object (the inverse of reading)."""
    out = {"tlop_speeds": 1}
    for k in ("name", "description", "provenance"):
        if getattr(fns, k):
            out[k] = getattr(fns, k)
    out["size_unit"] = "blocks"
    out["functions"] = [{**match, "size": list(fn.size), "speed": list(fn.speed)} for match, fn in fns.entries]
    return out


# ---------------------------------------------------------------------------------------- partitioning

def balanced_sizes(functions: Sequence[SpeedFunction], total: float, tol: float = 1e-13) -> tuple:
    """``(sizes, t)``: the problem sizes ``d_i`` summing to ``total`` at which every process takes
    the same time ``t = d_i / s_i(d_i)`` (the functional performance model's balance)."""
    if not functions:
        raise ConfigError("speed functions: no processes")
    if not (np.isfinite(total) and total > 0):
        raise ConfigError(f"the total problem size must be positive, got {total!r}")

    def sizes(t):
        return np.array([f.size_at(t) for f in functions])

    # a start (times grow, so bracket): the total over the fastest first speed is at most the
    # balanced time; a sum of huge speeds could overflow to inf and give 0
    lo, hi = 0.0, float(total) / max(f.speed[0] for f in functions) / len(functions)
    rounds = 0
    while not (hi > 0 and sizes(hi).sum() >= total):
        hi = hi * 2.0 if hi > 0 else 5e-324
        rounds += 1
        if rounds > 4200 or not np.isfinite(hi):  # 2^±1074 spans every double: a time cannot be found
            raise ConfigError(f"speed functions: no time at which the processes together do a problem of "
                              f"size {total:g} (speeds beyond what a double can represent?)")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if sizes(mid).sum() < total:
            lo = mid
        else:
            hi = mid
        if hi - lo <= tol * hi:
            break
    # the balance lies between lo and hi: each size between its sizes at lo and at hi, where the
    # sums bracket the total; interpolating them by one factor keeps every time within [lo, hi]
    # (rescaling all the sizes instead would move the time of a process whose time is nearly
    # flat in its size — a speed nearly proportional to the size — far more than hi − lo)
    d_lo, d_hi = sizes(lo), sizes(hi)
    s_lo, s_hi = d_lo.sum(), d_hi.sum()
    lam = 0.5 if s_hi <= s_lo else min(max((total - s_lo) / (s_hi - s_lo), 0.0), 1.0)
    return d_lo + lam * (d_hi - d_lo), lo + lam * (hi - lo)


def fpm_partition(cfg: Configuration, fns: Union[SpeedFunctions, Sequence[SpeedFunction]], N: int,
                  slab: bool = False, name: str = "", kernel: str = "") -> Partition:
    """The partition of an N × N matrix of blocks in which the processes of ``cfg`` (or one speed
    function per process) finish at the same time: areas proportional to the balanced sizes
    (:func:`balanced_sizes`), by the column-based partition (``slab``: 1D slabs)."""
    from tlop.runtime.partition import column_partition, slab_partition

    per_rank = fns.for_layout(cfg) if isinstance(fns, SpeedFunctions) else list(fns)
    if len(per_rank) != cfg.P:
        raise ConfigError(f"{len(per_rank)} speed functions for {cfg.P} ranks")
    if not (isinstance(N, (int, np.integer)) and N >= 1):
        raise ConfigError(f"N: expected a whole number of blocks >= 1, got {N!r}")
    d, _ = balanced_sizes(per_rank, float(N) * float(N))
    # the speed at the balanced size: d_i = t·s_i(d_i), so these are proportional to the sizes
    # (and a constant function's speed exactly: the constant-speed partition)
    rel = np.array([float(f(x)) for f, x in zip(per_rank, d)])
    make = slab_partition if slab else column_partition
    part = make(rel, N, name=name, kernel=kernel)
    src = getattr(fns, "source", "<speed functions>")
    from dataclasses import replace

    return replace(part, description=f"{'1D slab' if slab else 'column-based'} partition balancing the speed "
                                     f"functions of {src} (functional performance model)")
