"""What ``tlop measure`` measured, as users of the OSU and IMB benchmarks expect to read it, and
sanity checks of the fitted parameters against the raw samples.

What it does: :func:`osu_tables` lays out the ping-pong points of a samples file
(:mod:`.store`) per channel as the OSU/IMB latency tables do — size, latency (the median of the
half round trips, µs), t_min/t_avg/t_max (µs), repetitions, and the bandwidth that latency
implies (MB/s = 10^6 B/s, m / latency: a ping-pong figure, not osu_bw's streaming one).
:func:`fit_warnings` compares every fitted one-way time of a profile (LogGP/LogGPH ``o``, ``g``,
``L``; postal ``alpha_*``) with the ping-pong samples it was fitted from: a parameter larger than
:data:`SANE_FACTOR` times the slowest small-message one-way time measured on its channel (on any
channel for the postal paths) cannot be a per-message cost of that network, and is reported.
What it does not do: change the profile (a warning is only a warning), or measure anything.
"""

from __future__ import annotations

import math
from typing import Iterable

__all__ = ["osu_tables", "fit_warnings", "SANE_FACTOR", "SMALL"]

#: how many times the slowest small-message one-way time a fitted time may be before it is reported
SANE_FACTOR = 10.0
#: the message sizes (bytes) whose ping-pong times bound the per-message parameters
SMALL = 1024


def _pingpong(records: Iterable[dict]) -> dict:
    """channel -> [(m, stats, samples)] of the ping-pong points, by size."""
    out: dict = {}
    for r in records:
        if r.get("kind") == "point" and r.get("bench") == "pingpong" and isinstance(r.get("stats"), dict):
            m = (r.get("params") or {}).get("m")
            if isinstance(m, (int, float)):
                out.setdefault(str(r.get("channel")), []).append((float(m), r["stats"], r.get("samples") or []))
    return {ch: sorted(v, key=lambda x: x[0]) for ch, v in out.items()}


def _us(x) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x * 1e6:.2f}"


def osu_tables(records: Iterable[dict]) -> str:
    """The ping-pong points per channel as OSU/IMB latency tables ('' when there are none)."""
    from tlop.runtime.units import format_size

    blocks = []
    for ch, points in sorted(_pingpong(records).items()):
        header = ["# Size", "Latency (us)", "t_min (us)", "t_avg (us)", "t_max (us)", "#repetitions",
                  "Bandwidth (MB/s)"]
        rows = []
        for m, st, samples in points:
            med = st.get("median")
            t_max = max(samples) if samples else st.get("p95")
            bw = m / med / 1e6 if med and med > 0 else None
            rows.append([format_size(m), _us(med), _us(st.get("min")), _us(st.get("mean")), _us(t_max),
                         str(st.get("n", len(samples))), "-" if bw is None else f"{bw:.2f}"])
        widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
        lines = [f"# {ch}: ping-pong, half round trip (OSU latency); bandwidth = size / latency"]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in [header] + rows]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _small_one_way(records: Iterable[dict]) -> dict:
    """channel -> the slowest median one-way time of the ping-pongs up to :data:`SMALL` bytes."""
    out = {}
    for ch, points in _pingpong(records).items():
        small = [st.get("median") for m, st, _ in points if m <= SMALL and st.get("median")]
        if small:
            out[ch] = max(small)
    return out


def fit_warnings(scalars: dict, records: Iterable[dict]) -> list:
    """Warnings for fitted one-way times far above what the ping-pong samples allow; ``scalars``
    is a profile's ``scalars`` object (name -> {channel or key: value})."""
    records = list(records)
    bound = _small_one_way(records)
    if not bound:
        return []
    out = []
    for name, per in sorted(scalars.items()):
        family, _, par = name.partition(".")
        timeish = (family in ("loggp", "loggph", "plogp") and par in ("o", "g", "L")) or \
            (family == "postal" and par.startswith("alpha"))
        if not timeish or not isinstance(per, dict):
            continue
        for key, value in per.items():
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            ref_ch = key if key in bound else max(bound, key=bound.get)
            limit = SANE_FACTOR * bound[ref_ch]
            if value > limit:
                from tlop.runtime.units import format_time

                where = f"[{key}]" if key != "*" else ""
                out.append(f"{name}{where} = {format_time(value)} is {value / bound[ref_ch]:.0f}× the slowest "
                           f"one-way time of the ping-pong up to {SMALL} B on {ref_ch} "
                           f"({format_time(bound[ref_ch])}): not a per-message cost of this network; "
                           f"the machine was likely loaded or the fit failed (re-measure, e.g. with --resume "
                           f"after deleting its points)")
    return out
