"""A grid broadcast schedule's completion time in pLogP, and the schedule as a ``.tlop`` program.

What it does: :func:`price` runs a schedule (from :mod:`.heuristics`) under the dataflow rules by
which tlop prices pLogP schedules (docs/semantics.rst, "Schedules in LogGP and pLogP"), with the
pair's own parameters g_ij(m) and L_ij and no send or receive overhead (001 §4.5 models
inter-cluster messages by g and L only): a coordinator starts a send at its ready time, is ready
for its next send g_ij(m) later, and the message arrives g_ij(m) + L_ij after the send started.
A cluster broadcasts inside once it sends no more (001 §4.5): it finishes T_j after its last
send, or after its arrival if it sends nothing.  The broadcast completes when the last cluster
does.  :func:`to_tlop` writes the schedule as a pLogP schedule algorithm (one stage per send, in
order), which the reference interpreter prices with the same rules on a homogeneous profile —
the test that these rules are tlop's.

What it does not do: choose the schedule, or model contention between simultaneous sends of
different coordinators (001 does not either).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Completion", "price", "to_tlop"]


@dataclass(frozen=True)
class Completion:
    """``arrival[j]``: when cluster j's coordinator has the message; ``ready[j]``: when it has
    finished its inter-cluster sends; ``finish[j] = ready[j] + T[j]``; ``makespan``: the last."""
    arrival: np.ndarray
    ready: np.ndarray
    finish: np.ndarray
    makespan: float


def price(problem, sched) -> Completion:
    """The completion of ``sched`` (a list of (sender, receiver)) on ``problem``."""
    C = problem.clusters
    arrival = np.full(C, np.nan)
    arrival[problem.root] = 0.0
    ready = arrival.copy()
    for i, j in sched:
        if np.isnan(ready[i]):
            raise ValueError(f"cluster {i} sends before it has the message")
        if not np.isnan(arrival[j]):
            raise ValueError(f"cluster {j} receives the message twice")
        start = ready[i]
        ready[i] = start + problem.g[i, j]
        arrival[j] = ready[j] = start + problem.g[i, j] + problem.L[i, j]
    if np.isnan(arrival).any():
        raise ValueError(f"clusters {np.nonzero(np.isnan(arrival))[0].tolist()} never receive the message")
    finish = ready + problem.T
    return Completion(arrival, ready, finish, float(finish.max()))


def to_tlop(sched, name: str = "grid_schedule") -> str:
    """A pLogP ``.tlop`` module whose algorithm ``name(P, m)`` is the schedule: one stage per
    send, in order, each sending m bytes (the platform's g(m) and L for every pair)."""
    stages = " +\n    ".join(f"stage {{ send {i} -> {j} : m }}" for i, j in sched) or "0"
    return (f'model plogp\nimport "plogp/platform.tlop"\n\n'
            f"algorithm {name}(P: int >= 1, m: bytes) over map: mapping =\n    {stages}\n")
