"""Statistics of repeated timings and the adaptive stopping rule.

What it does: :func:`summarize` reports the min, median, mean, p95, standard deviation, a
distribution-free confidence interval of the median (order statistics, normal approximation of
the binomial, Le Boudec 2010 §2.2.1), the number of samples and the outliers (flagged by Tukey's
far-out fences, Q1 − 3·IQR and Q3 + 3·IQR; they are counted, never dropped).
:func:`stop_reason` is the adaptive repetition rule: keep measuring until the relative
half-width of the median's CI is at most ``eps``, never fewer than ``min_n`` samples and never
more than ``max_n`` samples or ``time_cap`` seconds.

What it does not do: time anything or talk to MPI (:mod:`.engine` does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Optional, Sequence

import numpy as np

__all__ = ["Rule", "median_ci", "summarize", "stop_reason"]


@dataclass(frozen=True)
class Rule:
    """The adaptive repetition parameters of one run."""
    eps: float = 0.02          # target relative half-width of the median's CI
    cl: float = 0.95           # confidence level of that CI
    min_n: int = 30            # never stop before this many samples
    max_n: int = 2000          # never take more
    time_cap: float = 2.0      # seconds per point (after warm-up), whatever the CI
    warmup: int = 5            # iterations run and discarded before sampling

    def as_dict(self) -> dict:
        return {"eps": self.eps, "cl": self.cl, "min_n": self.min_n, "max_n": self.max_n,
                "time_cap_s": self.time_cap, "warmup": self.warmup}


def median_ci(sorted_x: np.ndarray, cl: float) -> tuple[float, float]:
    """The CI of the median at level ``cl`` from sorted samples: the order statistics
    x(j), x(k) with j = ⌊(n − z√n)/2⌋ and k = ⌈1 + (n + z√n)/2⌉ (1-based), clipped to the data."""
    n = len(sorted_x)
    if n == 0:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(0.5 + cl / 2.0)
    j = math.floor((n - z * math.sqrt(n)) / 2.0)
    k = math.ceil(1 + (n + z * math.sqrt(n)) / 2.0)
    j = min(max(j, 1), n)
    k = min(max(k, 1), n)
    return float(sorted_x[j - 1]), float(sorted_x[k - 1])


def summarize(samples: Sequence[float], cl: float = 0.95) -> dict:
    """min, median, mean, p95, std, ci_low/ci_high of the median, its relative half-width
    ``ci_rel``, n, and the outlier count and fences.  Empty input gives n = 0 and NaNs."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    n = int(x.size)
    if n == 0:
        nan = math.nan
        return {"n": 0, "min": nan, "median": nan, "mean": nan, "p95": nan, "std": nan,
                "ci_low": nan, "ci_high": nan, "ci_rel": nan, "cl": cl, "outliers": 0}
    med = float(np.median(x))
    lo, hi = median_ci(x, cl)
    half = max(med - lo, hi - med)
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    low_fence, high_fence = q1 - 3 * iqr, q3 + 3 * iqr
    outliers = int(np.count_nonzero((x < low_fence) | (x > high_fence)))
    return {
        "n": n, "min": float(x[0]), "median": med, "mean": float(x.mean()),
        "p95": float(np.percentile(x, 95)), "std": float(x.std(ddof=1)) if n > 1 else 0.0,
        "ci_low": lo, "ci_high": hi,
        "ci_rel": float(half / abs(med)) if med != 0 else (0.0 if half == 0 else math.inf),
        "cl": cl, "outliers": outliers,
        "outlier_fences": [float(low_fence), float(high_fence)],
    }


def stop_reason(samples: Sequence[float], rule: Rule, elapsed: float) -> Optional[str]:
    """Why to stop now (``"converged"``, ``"max_n"``, ``"time_cap"``), or None to go on."""
    n = len(samples)
    if n < rule.min_n:
        return "time_cap" if elapsed >= 4 * rule.time_cap and n >= 3 else None
    if n >= rule.max_n:
        return "max_n"
    x = np.sort(np.asarray(samples, dtype=np.float64))
    med = float(np.median(x))
    lo, hi = median_ci(x, rule.cl)
    if med > 0 and max(med - lo, hi - med) <= rule.eps * med:
        return "converged"
    if elapsed >= rule.time_cap:
        return "time_cap"
    return None
