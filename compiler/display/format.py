"""How the command line prints numbers: times, sizes and parameter values.

What it does: one place for every number a human reads — times auto-scaled to s/ms/µs/ns with
four significant digits (``--unit`` forces one unit), sizes as ``64KiB``, counts as integers,
channels by name — and the exact values the machine-readable outputs carry (integers as JSON
integers, times as full-precision floats, non-finite as ``null``).
What it does not do: decide what a command prints (the subcommands do), or read numbers (that is
:mod:`tlop.runtime.units` and :mod:`tlop.backends.binding`).
"""

from __future__ import annotations

import math

from tlop.runtime.units import TIME_SCALES, format_size, format_time

__all__ = ["UNITS", "add_unit_option", "seconds", "param_text", "param_json", "number_json", "csv_number",
           "number_text"]

#: the choices of ``--unit`` (``auto`` scales each value on its own)
UNITS = ("auto", "s", "ms", "us", "µs", "ns")


def add_unit_option(p) -> None:
    p.add_argument("--unit", choices=UNITS, default="auto",
                   help="print times in this unit (default: auto, each value scaled to s, ms, µs or ns with 4 "
                        "significant digits; --json and --csv always carry full-precision seconds)")


def _unit(args_or_unit):
    u = args_or_unit if isinstance(args_or_unit, (str, type(None))) else getattr(args_or_unit, "unit", None)
    return None if u in (None, "auto") else u


def seconds(v: float, unit=None) -> str:
    """A time for a person: ``677.3 µs``; ``unit`` is a unit name or the parsed arguments
    (their ``--unit``)."""
    return format_time(float(v), _unit(unit))


def number_text(v) -> str:
    """A plain number: an integer as an integer (``8``, not ``8.0``), else 6 significant digits."""
    v = float(v)
    if v.is_integer() and abs(v) < 2 ** 53:
        return str(int(v))
    return f"{v:.6g}"


def param_text(ptype: str, v, channels=(), unit=None) -> str:
    """A parameter value the way it is written on the command line: ``1MiB``, ``16``,
    ``0.2 ns``, ``shm``; a per-rank argument as ``[1KiB, 2KiB, …]`` (one value: that value)."""
    if hasattr(v, "elements"):  # tlop.runtime.per_rank.PerRankValues
        return v.text(lambda x: param_text(ptype, x, channels, unit))
    if ptype == "channel":
        return channels[int(v)]
    if ptype == "bytes":
        return format_size(float(v))
    if ptype == "time":
        return _time_value(float(v))
    if ptype == "time/bytes":  # a rate such as gamma: 0.2 ns/B
        return _time_value(float(v)) + "/B"
    if ptype == "bytes/time":  # a bandwidth: 10 GB/s
        return _bandwidth(float(v))
    return number_text(v)


def _bandwidth(v: float) -> str:
    for name, f in (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("KB/s", 1e3)):
        if abs(v) >= f:
            return f"{float(f'{v / f:.6g}'):g} {name}"
    return f"{number_text(v)} B/s"


def _time_value(v: float) -> str:
    """A time the user gave, in the unit that reads best and without invented digits:
    ``0.2 ns``, ``200 ns``, ``2 µs`` (not ``0.2000 ns``)."""
    if v == 0 or not math.isfinite(v):
        return format_time(v)
    for name, f in TIME_SCALES:
        if abs(v) >= f * (1 - 5e-7):
            break
    return f"{float(f'{v / f:.6g}'):g} {name}"


def number_json(v):
    """A number for JSON: an integral value as an integer, a float at full precision, and a
    non-finite value as null (JSON has no inf or NaN)."""
    v = float(v)
    if not math.isfinite(v):
        return None
    if v.is_integer() and abs(v) < 2 ** 53:
        return int(v)
    return v


def param_json(ptype: str, v, channels=()):
    """A parameter value for JSON: a channel by name, a count or size as an integer when whole,
    a time in seconds (a float); a per-rank argument as the list of its values (one value: that
    value)."""
    if hasattr(v, "elements"):  # tlop.runtime.per_rank.PerRankValues
        return (param_json(ptype, v.fill, channels) if v.values is None
                else [param_json(ptype, x, channels) for x in v.values])
    if ptype == "channel":
        return channels[int(v)]
    if ptype == "time":
        v = float(v)
        return v if math.isfinite(v) else None
    return number_json(v)


def csv_number(v) -> str:
    """A number for CSV: integers as integers, others at full precision (``repr``)."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)
