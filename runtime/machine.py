"""Whether an evaluation's process mapping fits the machine a profile describes.

What it does: :func:`check_fits` compares what a mapping needs for ``P`` ranks — its number of
nodes and the most ranks it puts on one node — with the profile's ``metadata.nodes`` and
``metadata.cores_per_node`` (whole numbers, when the profile states them), and issues an
:class:`OutOfMachineWarning` (a Python warning; the CLI prints it as ``tlop: warning: …``) when
the mapping needs more: the tables were measured on a smaller machine, so the prediction is an
extrapolation to hardware nobody measured.  Once per profile, mapping and evaluation (the
caller's :func:`new_evaluation` starts one).

What it does not do: refuse anything (the prediction is still made), or guess a machine's size
from the free-text ``machine`` description.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["OutOfMachineWarning", "check_fits", "new_evaluation"]


class OutOfMachineWarning(UserWarning):
    """A mapping needs more nodes, or more ranks on one node, than the profile's machine has."""


_warned: set = set()


def new_evaluation() -> None:
    """Start a new evaluation: its first out-of-machine point is warned about again."""
    _warned.clear()


def check_fits(profile, mapping, P) -> None:
    """Warn when ``mapping`` with ``P`` ranks (a number or an array of them) needs more than the
    machine ``profile`` describes; nothing when the profile does not state its size."""
    meta = getattr(profile, "metadata", None) or {}
    nodes, cores = meta.get("nodes"), meta.get("cores_per_node")
    if mapping is None or P is None or (nodes is None and cores is None):
        return
    key = (id(profile), str(mapping))
    if key in _warned:
        return
    for p in sorted({int(v) for v in np.ravel(np.asarray(P, dtype=float)) if np.isfinite(v) and v >= 1}):
        used = int(mapping.nodes(p))
        per_node = int(np.bincount(np.asarray(mapping.node_of(np.arange(p), p), dtype=np.int64)).max())
        problems = []
        if nodes is not None and used > nodes:
            problems.append(f"{used} nodes (it has {nodes})")
        if cores is not None and per_node > cores:
            problems.append(f"{per_node} ranks on one node (it has {cores} cores per node)")
        if problems:
            _warned.add(key)
            warnings.warn(OutOfMachineWarning(
                f"P = {p} over {mapping} needs {' and '.join(problems)} on the machine profile "
                f"'{profile.name}' describes: the prediction extrapolates beyond the measured machine"),
                stacklevel=3)
            return
