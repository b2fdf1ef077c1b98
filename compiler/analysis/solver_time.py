"""Wall-clock limits for Z3, in one place.

What it does: :func:`solver_timeout_ms` turns a requested limit into the one given to Z3,
multiplied by ``TLOP_SOLVER_TIMEOUT_SCALE`` (default 1).  The test suite sets the scale high
(tests/conftest.py), so that a machine loaded by other processes cannot turn a proof that takes
a second into "unknown" and flip a result or a golden file; users keep the documented limits.

What it does not do: make proofs deterministic in effort (Z3's ``rlimit`` would; the limits
stay wall-clock, as the command line documents them).
"""

from __future__ import annotations

import math
import os

__all__ = ["solver_timeout_ms"]


def solver_timeout_ms(ms: float) -> int:
    """``ms`` scaled by ``TLOP_SOLVER_TIMEOUT_SCALE`` (a positive number; ignored otherwise)."""
    try:
        scale = float(os.environ.get("TLOP_SOLVER_TIMEOUT_SCALE", "1"))
    except ValueError:
        scale = 1.0
    if not (math.isfinite(scale) and scale > 0):
        scale = 1.0
    return max(1, min(int(ms * scale), 2 ** 31 - 1))
