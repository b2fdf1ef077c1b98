"""The catalogue as a table: per library and collective, every algorithm with its id, its stdlib
schedule and its status — what ``tlop catalogue`` prints and the docs page is generated from.

What it does: :func:`rows` lists the catalogue's entries (optionally one collective or library),
:func:`counts` counts them (schedules and algorithms that cannot be one), :func:`check` verifies
that every named schedule exists in its stdlib module with the parameters the entry passes.

What it does not do: price anything.
"""

from __future__ import annotations

from tlop.decisions.catalogue import ALL_LIBRARIES, COLLECTIVES, catalogue

__all__ = ["rows", "counts", "check", "HEADER"]

HEADER = ["library", "collective", "algorithm", "id", "stdlib schedule", "parameters searched", "status", "why"]

#: the statuses an entry may have: a schedule, one that could be written but is not yet, or one the
#: language cannot express (each with its reason after a colon)
STATUSES = ("schedule", "composite", "not written", "not expressible")


def status_kind(a) -> str:
    """``schedule``, ``composite`` (calls of the library's own collectives,
    :mod:`tlop.decisions.composite`), ``not written`` or ``not expressible``."""
    if a.schedule is not None:
        return "schedule"
    if a.parts is not None:
        return "composite"
    head = a.status.split(":", 1)[0].strip()
    return "not written" if head in ("not written", "not done") else head


def _searched(a) -> str:
    return ", ".join(f"{k} ∈ {{{', '.join(str(v) for v in vals)}}}" for k, vals in sorted(a.searched.items()))


def _all(collective=None, library=None) -> list:
    """The entries of ``library`` (every library of :data:`ALL_LIBRARIES`, NCCL included, when None)."""
    return [a for lib in (ALL_LIBRARIES if library is None else (library,)) for a in catalogue(collective, lib)]


def rows(collective=None, library=None) -> list:
    out = []
    for a in _all(collective, library):
        why = a.status.split(":", 1)[1].strip() if ":" in a.status else ""
        out.append([a.library, a.collective, a.name, str(a.id), a.schedule or "—", _searched(a) or "—",
                    status_kind(a) + (f" ({a.constraint})" if a.constraint else ""), why])
    return out


def counts() -> list:
    """``[collective, openmpi schedules/all, mpich schedules/all, nccl schedules/all]`` per collective
    (``—`` where the library has no such collective: NCCL has no alltoall, gather, scatter,
    reduce_scatter_block or barrier), and a total
    (the algorithms that are not schedules are either not written yet or not expressible:
    :func:`rows` says which and why)."""
    out = []
    tot = {lib: [0, 0] for lib in ALL_LIBRARIES}
    for coll in COLLECTIVES:
        row = [coll]
        for lib in ALL_LIBRARIES:
            algs = catalogue(coll, lib)
            done = sum(a.priceable for a in algs)
            tot[lib][0] += done
            tot[lib][1] += len(algs)
            row.append(f"{done}/{len(algs)}" if algs else "—")
        out.append(row)
    out.append(["all"] + [f"{tot[lib][0]}/{tot[lib][1]}" for lib in ALL_LIBRARIES])
    return out


def check() -> list:
    """Problems found: a schedule missing from its module, or a fixed/searched parameter the
    schedule does not take (an empty list when the catalogue is consistent)."""
    import tlop

    from tlop.decisions.catalogue import Part, find

    problems = []

    from tlop.decisions.catalogue.nonblocking import SCHED

    # MPICH's nonblocking sched algorithms (what its nb composites call) are checked as entries too
    for a in _all() + [find("mpich", "i" + SCHED[n][0], n) for n in SCHED]:
        if a.parts is not None:
            if a.schedule is not None or not a.status.startswith("composite: "):
                problems.append(f"{a.key}: a composite has no schedule and a status 'composite: what it calls'")
            for P, m in ((2, 1), (8, 65536), (32, 4194304)):
                for part in a.parts(P, m) or ():
                    nonblocking = a.library == "mpich" and part.collective[1:] in COLLECTIVES
                    if not isinstance(part, Part) or not (part.collective in COLLECTIVES or nonblocking):
                        problems.append(f"{a.key}: calls {part!r}, not a collective")
                    elif part.algorithm is not None:
                        try:
                            find(a.library, part.collective, part.algorithm)
                        except KeyError:
                            problems.append(f"{a.key}: calls {a.library}'s {part.collective} {part.algorithm!r}, "
                                            f"which the catalogue does not list")
            continue
        if a.schedule is None:
            if status_kind(a) not in STATUSES[2:] or ":" not in a.status:
                problems.append(f"{a.key}: no schedule but status {a.status!r} (expected 'not written: why' or "
                                f"'not expressible: why')")
            continue
        module, _, name = a.schedule.partition(":")
        m = tlop.load(module)
        if name not in m:
            problems.append(f"{a.key}: {a.schedule} does not exist")
            continue
        params = {p.name for p in m[name].params}
        for k in list(a.fixed) + list(a.searched):
            if k not in params:
                problems.append(f"{a.key}: {a.schedule} has no parameter {k!r}")
    return problems
