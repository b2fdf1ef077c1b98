"""A grid broadcast schedule's completion time in pLogP, and the schedule as a ``.tlop`` program.

What it does: :func:`price` runs a schedule (from :mod:`.heuristics`) under the dataflow rules by
which tlop prices pLogP schedules (docs/semantics.rst, "Schedules in LogGP and pLogP"), with the
pair's own parameters g_ij(m) and L_ij and no send or receive overhead (001 §4.5 models
inter-cluster messages by g and L only): a coordinator starts a send at its ready time, is ready
for its next send g_ij(m) later, and the message arrives g_ij(m) + L_ij after the send started.
A cluster broadcasts inside once it sends no more (001 §4.5): it finishes T_j after its last
send, or after its arrival if it sends nothing.  The broadcast completes when the last cluster
does.  :func:`to_tlop` writes the schedule as a pLogP schedule algorithm (one stage per send, in
order), which the reference interpreter prices with the same rules on a homogeneous profile;
:func:`schedule_program` writes the schedule *on a problem* — every link's own g_ij(m) and L_ij,
every cluster's T_j — as a pLogP program and profile that the reference interpreter prices
exactly: the tests that these rules are tlop's schedule layer's.

What it does not do: choose the schedule, or model contention between simultaneous sends of
different coordinators (001 does not either).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Completion", "price", "to_tlop", "schedule_program"]


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


def schedule_program(problem, sched, name: str = "grid_schedule") -> tuple:
    """``(source, profile)``: ``sched`` on ``problem`` as a ``.tlop`` module of model ``plogp``
    and a profile dictionary, which tlop's schedule layer prices at ``makespan`` (P = C clusters,
    one rank per coordinator).

    pLogP has one g(m) and one L for the whole network; to give each link its own, the module
    declares its own platform whose tables are indexed by a *tag*: the send i → j carries
    1 + i·C + j bytes, and the tables ``g_link``/``L_link`` hold g_ij(m) and L_ij at that tag
    (exact grid points, so no interpolation).  The platform's send functions are
    ``send_overhead = send_gap = g_link``, ``delivery = g_link + L_link``, ``recv_overhead = 0``:
    a coordinator is busy for the gap of each send, so its processor clock after its last send
    is its ready time.  A last stage has every cluster ``compute`` its T_j (table
    ``T_cluster`` at tag j + 1), which starts at the coordinator's clock: the arrival, or the
    ready time after its sends.  The message size m is already in g_ij(m)."""
    C = problem.clusters
    tags = [1.0 + k for k in range(C * C)]
    g = [float(problem.g[k // C, k % C]) for k in range(C * C)]
    L = [float(problem.L[k // C, k % C]) for k in range(C * C)]
    stages = [f"stage {{ send {i} -> {j} : {1 + i * C + j}B }}" for i, j in sched]
    stages.append("stage { " + "  ".join(f"compute {j} : T_cluster({j + 1}B)" for j in range(C)) + " }")
    source = ("model plogp\n\n"
              "/// g_ij(m) of the link a send's tag names (see tlop.apps.gridcast.pricing.schedule_program)\n"
              "table g_link(m: bytes) -> time\n"
              "/// L_ij of the link a send's tag names\ntable L_link(m: bytes) -> time\n"
              "/// T_j of cluster j at tag j + 1\ntable T_cluster(m: bytes) -> time\n\n"
              "algorithm send_overhead(m: bytes) = g_link(m)\n"
              "algorithm send_gap(m: bytes) = g_link(m)\n"
              "algorithm delivery(m: bytes) = g_link(m) + L_link(m)\n"
              "algorithm recv_overhead(m: bytes) = 0s\n\n"
              f"algorithm {name}(P: int >= 1) over map: mapping =\n    " + " +\n    ".join(stages) + "\n")
    profile = {
        "tlop_profile": 1, "name": "gridcast-links",
        "metadata": {"machine": "an inter-cluster broadcast problem of paper 001",
                     "source": "tlop.apps.gridcast.pricing.schedule_program"},
        "interpolation": {"m_below": "linear", "m_beyond": "linear", "tau_beyond": "proportional",
                          "nonnegative": True, "out_of_grid": "allow"},
        "channels": {"shm": {"transmission": "shm", "description": "unused: pLogP has one network"}},
        "bind": {},
        "tables": {"g_link": {"*": {"m": tags, "values": g}}, "L_link": {"*": {"m": tags, "values": L}},
                   "T_cluster": {"*": {"m": [1.0 + j for j in range(C)], "values": [float(t) for t in problem.T]}}},
        "scalars": {}, "fits": {},
    }
    return source, profile
