"""Binding MPI ranks to distinct cores: the launcher's arguments, and what the ranks saw.

What it does: :func:`launcher_binding` gives the arguments that make a launcher bind each rank
to a core of its own (MPICH Hydra ``-bind-to core``, Open MPI ``--bind-to core``, ``srun
--cpu-bind=cores``) and a sentence saying what was asked; on a single host it asks for nothing
when the ranks outnumber the usable cores (oversubscribed: binding would pin two ranks to one
core).  Open MPI needs the explicit option in this project: its environment sets
``PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe`` (:mod:`.openmpi`), which removes Open
MPI's default binding.  :func:`usable_cores` is the number of CPUs this process may run on.
:func:`observed` reads the CPU affinity each rank reported (``cpu_affinity_by_rank`` of a run
record) and says whether every rank had a core of its own, or which ranks shared CPUs — the
unbound case issue 22 item 18 saw (two ranks on one vCPU for a whole launch, exchanges ≈ 3×
slower).  :func:`oversubscription` is the warning for more ranks than cores.
:data:`BINDING_ENV` carries the sentence to the ranks, which record it in their run records.

What it does not do: launch anything (:mod:`.launch`), or move a rank after it started.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["launcher_binding", "usable_cores", "observed", "oversubscription", "BINDING_ENV"]

#: the environment variable that tells the ranks what binding the launcher was asked for
BINDING_ENV = "TLOP_MEASURE_BINDING"


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask; the CPU count where there is none)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def launcher_binding(mpiexec: str, family: str, P: int, cores: int, local: bool) -> tuple:
    """``(launcher arguments, what the binding is)``: bind each rank to a core where the launcher
    can, and not when the ranks outnumber this machine's cores (a local launch only)."""
    name = Path(mpiexec).name
    if local and P > cores:
        return [], f"not bound: P = {P} exceeds the {cores} cores (oversubscribed)"
    if name == "srun":
        return ["--cpu-bind=cores"], "srun --cpu-bind=cores"
    if family == "mpich":
        return ["-bind-to", "core"], "mpiexec -bind-to core (MPICH Hydra)"
    if family == "openmpi":
        return ["--bind-to", "core"], "mpiexec --bind-to core (Open MPI)"
    return [], f"not bound: {name} is neither MPICH's nor Open MPI's launcher"


def oversubscription(P: int, cores: int) -> str:
    """The warning for P ranks on ``cores`` CPUs of one host ('' when they fit)."""
    if P <= cores:
        return ""
    return (f"{P} ranks on {cores} cores: oversubscribed, ranks are not bound and wait for each other; the times "
            f"are not those of a {P}-rank run")


def observed(affinities, hosts=None) -> tuple:
    """``(ok, text)`` from each rank's CPU affinity (a list of CPU lists, by rank) and, when
    given, each rank's host: ``ok`` is True when every rank ran on CPUs no other rank of its host
    could use (bound, or at least disjoint), False when two ranks of a host could share a CPU,
    None when nothing was recorded."""
    affinities = [list(a or []) for a in (affinities or [])]
    if not affinities or not all(affinities):
        return None, "CPU affinity not recorded"
    hosts = list(hosts) if hosts and len(hosts) == len(affinities) else [""] * len(affinities)
    shared = []
    for i in range(len(affinities)):
        for j in range(i + 1, len(affinities)):
            if hosts[i] == hosts[j] and set(affinities[i]) & set(affinities[j]):
                shared.append((i, j))
    shown = "; ".join(f"rank {r}: CPU {_cpus(a)}" for r, a in enumerate(affinities[:8]))
    if len(affinities) > 8:
        shown += f"; … ({len(affinities)} ranks)"
    if not shared:
        return True, f"each rank on CPUs of its own ({shown})"
    pairs = ", ".join(f"{i}/{j}" for i, j in shared[:6]) + (" …" if len(shared) > 6 else "")
    return False, f"ranks could share CPUs (ranks {pairs}: {shown})"


def _cpus(cpus) -> str:
    cpus = sorted(cpus)
    if len(cpus) > 2 and cpus == list(range(cpus[0], cpus[-1] + 1)):
        return f"{cpus[0]}-{cpus[-1]}"
    return ",".join(str(c) for c in cpus)
