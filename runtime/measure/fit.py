"""Model parameters from measured medians: postal fits, τ-Lop, pLogP, LogGP and max-rate.

What it does (pure numpy, no MPI, unit-tested on synthetic data):

* :func:`postal_fit` — ``T(m) = α + β·m`` fitted piecewise: the number of segments (1 to
  ``max_segments``) and their boundaries are chosen from the data by dynamic programming over
  the sorted sizes, minimising the relative squared error with a BIC penalty (each extra
  segment must pay for its three extra parameters).  Boundaries are reported as breakpoints;
  the one with the largest upward jump is reported as the protocol switch (eager → rendezvous)
  when the jump exceeds 5 %.  Also used for CUDA memcpy α, β.
* :func:`taulop_channel` — o^c(m) and L^c(m, τ) of one channel from T^c(m, τ) (ping-pong half
  round trip for τ = 1, Ring_τ for τ ≥ 2) and the two overheads, by the channel's transmission
  decomposition (000 eq. 1–3): shm ``L = (T − o)/2``; tcp ``L = T − o − 2·L_shm(m, τ)``;
  rdma ``L = T − o``.  (The issue writes the network forms as ``Ring/2 − …`` because it times a
  network ring as a round trip; our samples are already one transmission, see
  docs/measuring.rst.)  o(m) is the eager overhead below the protocol switch and the
  rendezvous overhead from it on.  A derived value at or below zero (noise: T ≈ o for tiny
  messages on a loaded machine) is kept in the ``raw`` output and clamped to :data:`L_FLOOR`,
  with a note.
* :func:`plogp_params` — L = RTT(0)/2 − g(m_min) (Kielmann et al.).
* :func:`loggp_params` — netgauge's PRTT equations, G and g by least squares over s.
* :func:`max_rate` — aggregate rate of N pairs, R_N its maximum.

What it does not do: read files or decide what was measured (:mod:`.assemble`).
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence

import numpy as np

__all__ = ["L_FLOOR", "linear_fit", "postal_fit", "taulop_channel", "plogp_params",
           "loggp_params", "max_rate", "monotone_violations"]

#: derived times at or below zero are clamped to this (seconds), with a note
L_FLOOR = 1e-9


def linear_fit(m, t) -> tuple[float, float, float]:
    """Weighted least squares of ``t ≈ α + β·m`` minimising Σ((t − f)/t)²; α, β ≥ 0 (a negative
    slope is refitted as a constant, a negative intercept as a line through the origin).  Returns (α, β, relative residual sum of squares)."""
    m = np.asarray(m, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    w = 1.0 / np.maximum(np.abs(t), 1e-300)
    if len(m) >= 2 and np.ptp(m) > 0:
        A = np.stack([w, w * m], axis=1)
        (alpha, beta), *_ = np.linalg.lstsq(A, w * t, rcond=None)
    else:
        alpha, beta = float(np.sum(w * w * t) / np.sum(w * w)), 0.0
    if beta < 0:
        alpha, beta = float(np.sum(w * w * t) / np.sum(w * w)), 0.0
    elif alpha < 0:       # a latency cannot be negative: the best line through the origin
        alpha, beta = 0.0, float(np.sum(w * w * t * m) / np.sum(w * w * m * m))
    rss = float(np.sum(((t - (alpha + beta * m)) * w) ** 2))
    return float(alpha), float(beta), rss


def postal_fit(m: Sequence[float], t: Sequence[float], max_segments: int = 4,
               min_points: int = 3, noise: float = 0.01) -> dict:
    """Piecewise postal fit with breakpoints found from the data (see the module docstring).

    ``noise`` is the relative error below which residuals are not worth a segment.  Returns
    ``{"segments": [{"m_min", "m_max", "alpha", "beta", "n", "rel_rms"}], "breakpoints": [...],
    "protocol_switch": m or None, "jumps": [...]}``."""
    order = np.argsort(np.asarray(m, dtype=np.float64))
    m = np.asarray(m, dtype=np.float64)[order]
    t = np.asarray(t, dtype=np.float64)[order]
    n = len(m)
    if n == 0:
        return {"segments": [], "breakpoints": [], "protocol_switch": None, "jumps": []}
    min_points = max(1, min(min_points, n))
    kmax = max(1, min(max_segments, n // min_points))
    cost = np.full((n + 1, n + 1), np.inf)
    for i in range(n):
        for j in range(i + min_points, n + 1):
            cost[i, j] = linear_fit(m[i:j], t[i:j])[2]
    best = np.full((kmax + 1, n + 1), np.inf)
    back = np.zeros((kmax + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, kmax + 1):
        for j in range(1, n + 1):
            cands = best[k - 1, :j] + cost[:j, j]
            i = int(np.argmin(cands))
            best[k, j], back[k, j] = cands[i], i
    floor = n * noise ** 2
    scores = []
    for k in range(1, kmax + 1):
        if not np.isfinite(best[k, n]):
            continue
        scores.append((n * math.log(max(best[k, n], floor) / n) + (3 * k - 1) * math.log(n), k))
    k = min(scores)[1]
    bounds = []
    j = n
    for kk in range(k, 0, -1):
        i = back[kk, j]
        bounds.append((i, j))
        j = i
    bounds.reverse()
    segments = []
    for i, j in bounds:
        a, b, rss = linear_fit(m[i:j], t[i:j])
        segments.append({"m_min": float(m[i]), "m_max": float(m[j - 1]), "alpha": a, "beta": b,
                         "n": int(j - i), "rel_rms": math.sqrt(rss / (j - i))})
    jumps = []
    for left, right in zip(segments, segments[1:]):
        x = right["m_min"]
        f_left = left["alpha"] + left["beta"] * x
        f_right = right["alpha"] + right["beta"] * x
        jumps.append({"m": x, "relative_jump": (f_right - f_left) / f_left if f_left > 0 else math.inf})
    switch = None
    if jumps:
        top = max(jumps, key=lambda j: j["relative_jump"])
        if top["relative_jump"] > 0.05:
            switch = top["m"]
    return {"segments": segments, "breakpoints": [s["m_min"] for s in segments[1:]],
            "protocol_switch": switch, "jumps": jumps}


def taulop_channel(kind: str, sizes: Sequence[float], taus: Sequence[int], T: np.ndarray,
                   o_eager: float, o_rdv: Optional[float], switch: Optional[float],
                   L_shm: Optional[Callable[[float, float], float]] = None) -> dict:
    """o(m) and L(m, τ) of one channel of transmission ``kind`` (shm, tcp, rdma).

    ``T[i, j]`` is the measured transmission time at ``sizes[i]``, ``taus[j]``;  ``L_shm(m, τ)``
    the shared-memory transfer time (needed for tcp).  Returns ``{"o": [...], "L": [[...]],
    "raw_L": [[...]], "clamped": [(m, τ, raw), ...], "notes": [...]}``."""
    sizes = [float(x) for x in sizes]
    T = np.asarray(T, dtype=np.float64)
    notes = []
    if o_rdv is None or switch is None:
        o = [o_eager] * len(sizes)
        if switch is None:
            notes.append("no eager/rendezvous switch found in the ping-pong times: o(m) is the "
                         "eager overhead at every size")
    else:
        o = [o_eager if x < switch else o_rdv for x in sizes]
    raw = np.empty_like(T)
    for i, x in enumerate(sizes):
        for j, tau in enumerate(taus):
            if kind == "shm":
                raw[i, j] = (T[i, j] - o[i]) / 2.0
            elif kind == "tcp":
                shm = L_shm(x, tau) if L_shm is not None else 0.0
                raw[i, j] = T[i, j] - o[i] - 2.0 * shm
            elif kind == "rdma":
                raw[i, j] = T[i, j] - o[i]
            else:
                raise ValueError(f"unknown transmission kind {kind!r}")
    if kind == "tcp" and L_shm is None:
        notes.append("no shared-memory channel measured: L_tcp = T − o (the 2·L_shm term is taken as 0)")
    clamped = [(sizes[i], int(taus[j]), float(raw[i, j]))
               for i in range(len(sizes)) for j in range(len(taus)) if not raw[i, j] > L_FLOOR]
    L = np.where(raw > L_FLOOR, raw, L_FLOOR)
    if clamped:
        notes.append(f"{len(clamped)} derived L value(s) at or below {L_FLOOR:g} s (noise: the "
                     f"transmission time barely exceeds the overhead) were clamped to {L_FLOOR:g} s; "
                     f"the raw values are in fits.taulop")
    return {"o": [float(x) for x in o], "L": L.tolist(), "raw_L": raw.tolist(),
            "clamped": clamped, "notes": notes}


def monotone_violations(sizes: Sequence[float], values: Sequence[float], tolerance: float = 0.05) -> list:
    """Sizes where a value drops by more than ``tolerance`` (relative) below its predecessor."""
    out = []
    for k in range(1, len(values)):
        if values[k] < values[k - 1] * (1 - tolerance):
            out.append(float(sizes[k]))
    return out


def plogp_params(rtt0: float, g_min: float) -> dict:
    """L = RTT(0)/2 − g(m_min), clamped at :data:`L_FLOOR` with a note."""
    L = rtt0 / 2.0 - g_min
    out = {"L_raw": L, "L": max(L, L_FLOOR), "notes": []}
    if L <= L_FLOOR:
        out["notes"].append(f"pLogP L = RTT(0)/2 − g = {L:.3g} s is not positive; clamped to {L_FLOOR:g} s")
    return out


def loggp_params(prtt: dict, n: int) -> dict:
    """LogGP from ``prtt[s] = {"p1": PRTT(1,0,s), "pn": PRTT(n,0,s), "pd": PRTT(n,d,s), "d": d}``.

    g + (s−1)G = (pn − p1)/(n−1) for every s, fitted by least squares (intercept g at s = 1,
    slope G); o = (pd − p1)/(n−1) − d at the smallest s; L = p1(s_min)/2 − 2o − (s_min − 1)G."""
    sizes = sorted(prtt)
    if not sizes or n < 2:
        raise ValueError("LogGP needs PRTT at one size at least and n >= 2")
    s = np.array(sizes, dtype=np.float64)
    gaps = np.array([(prtt[x]["pn"] - prtt[x]["p1"]) / (n - 1) for x in sizes])
    os_ = np.array([(prtt[x]["pd"] - prtt[x]["p1"]) / (n - 1) - prtt[x]["d"] for x in sizes])
    if len(s) >= 2:
        G, g = np.polyfit(s - 1, gaps, 1)
    else:
        G, g = 0.0, float(gaps[0])
    notes = []
    if G < 0:
        notes.append(f"LogGP G fitted negative ({G:.3g} s/B); set to 0")
        G, g = 0.0, float(np.mean(gaps))
    o = float(os_[0])
    L = prtt[sizes[0]]["p1"] / 2.0 - 2.0 * o - (sizes[0] - 1) * G
    raw = {"L": float(L), "o": o, "g": float(g), "G": float(G)}
    out = {}
    for k, v in raw.items():
        if k == "G":
            out[k] = float(v)
        elif v <= L_FLOOR:
            notes.append(f"LogGP {k} = {v:.3g} s is not positive; clamped to {L_FLOOR:g} s")
            out[k] = L_FLOOR
        else:
            out[k] = float(v)
    return {**out, "raw": raw, "per_size": {"s": sizes, "gap": gaps.tolist(), "o": os_.tolist()},
            "notes": notes}


def max_rate(pairs: Sequence[int], seconds: Sequence[float], bytes_per_pair: float) -> dict:
    """Aggregate rate (bytes/s) for each number of pairs, and R_N = the largest."""
    rates = [k * bytes_per_pair / t for k, t in zip(pairs, seconds)]
    return {"pairs": [int(k) for k in pairs], "rate_Bps": rates,
            "R_N_Bps": max(rates) if rates else None}
