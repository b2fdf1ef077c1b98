"""The ``tlop measure`` command: options, orchestration, progress.

What it does: :func:`add_arguments` declares the options on an ``argparse`` parser and
:func:`run` carries them out (exit status; user errors raise :class:`TlopError`).  Three modes:

* **launcher** (the usual case, run from a shell): relaunches itself under the ``mpiexec``
  beside the interpreter, once per channel — ``shm`` with the MPI defaults and the network
  channel with the network forced (:func:`.launch.forced_network_env`) — and, for the
  collective timings, once more per channel and forced algorithm (``shm:coll1`` …: the
  environment forces the library's algorithm, :func:`.plan.forced_launches`), shows progress with an
  ETA, and writes the profile after each launch and on Ctrl-C or failure (what was measured is
  kept; ``--resume`` continues it);
* **direct** (``mpiexec -n 64 tlop measure …`` or ``srun … tlop measure …``): every rank
  measures in this job — shared memory among rank 0's node, the network between the first two
  nodes — and rank 0 writes the profile;
* **worker** (``--worker ROLE``, internal): one relaunched rank.

:func:`main` is ``python -m tlop.runtime.measure``: it prints a TlopError's message and exits 1
instead of showing a traceback.

What it does not do: the measuring itself (:mod:`.worker`), the fits (:mod:`.fit`).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from pathlib import Path

from tlop.runtime.diagnostics import TlopError

from tlop.runtime.measure import launch
from tlop.runtime.measure.plan import (BENCHMARKS, Settings, forced_in_env, forced_launches, full_settings,
                   parse_benchmarks, plan_channel, plan_collectives, quick_settings)
from tlop.runtime.measure.store import read_records, samples_path

__all__ = ["add_arguments", "run", "main", "settings_from_args"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the ``tlop measure`` options on ``parser``."""
    g = parser.add_argument_group("what to measure")
    g.add_argument("--np", type=int, default=2, metavar="N",
                   help="number of MPI ranks to launch (default 2; ignored when already under mpiexec/srun)")
    g.add_argument("--channels", default="shm,net", metavar="LIST",
                   help="channels to measure: shm, net or both (default shm,net)")
    g.add_argument("--bench", default=",".join(BENCHMARKS), metavar="LIST",
                   help=f"benchmarks to run (default all): {', '.join(BENCHMARKS)}")
    g.add_argument("--quick", action="store_true",
                   help="a cheap run: 12 sizes 1 B..4 MiB, CI within ±3%%, at most 0.5 s per point")
    g.add_argument("--sizes", metavar="LIST", help="message sizes, e.g. 1,1KiB,64KiB,1MiB (overrides the preset)")
    g.add_argument("--tau-max", type=int, metavar="N", help="largest ring τ (default: every rank of a node)")
    g.add_argument("--net-transmission", choices=("tcp", "rdma"), default="tcp",
                   help="how the network channel's transmission decomposes (default tcp)")
    g.add_argument("--net-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment for the forced-network launch (repeatable), e.g. FI_PROVIDER=tcp")
    s = parser.add_argument_group("method")
    s.add_argument("--eps", type=float, help="target relative half-width of the median's CI")
    s.add_argument("--cl", type=float, help="confidence level of that CI (default 0.95)")
    s.add_argument("--min-reps", type=int, help="fewest samples per point")
    s.add_argument("--max-reps", type=int, help="most samples per point")
    s.add_argument("--time-cap", type=float, help="seconds per point, whatever the CI")
    s.add_argument("--warmup", type=int, help="warm-up iterations discarded per point")
    s.add_argument("--timeout", type=float, help="a point taking longer than this many seconds fails the run")
    o = parser.add_argument_group("output")
    o.add_argument("--out", default="profile.json", metavar="PATH",
                   help="profile to write (default profile.json); raw samples go beside it in PATH.samples.jsonl")
    o.add_argument("--name", help="profile name (default: the host name)")
    o.add_argument("--resume", action="store_true", help="continue an interrupted run, keeping what it measured")
    o.add_argument("--overwrite", action="store_true", help="discard an earlier run's samples and start again")
    o.add_argument("--quiet", action="store_true", help="no progress display")
    o.add_argument("--mpiexec", metavar="PATH", help="launcher to relaunch under (default: the one beside python)")
    o.add_argument("--direct", action="store_true",
                   help="measure in this process's MPI job instead of relaunching (implied under mpiexec/srun)")
    parser.add_argument("--worker", metavar="ROLE", help=argparse.SUPPRESS)
    parser.add_argument("--events", action="store_true", help=argparse.SUPPRESS)


def _parse_sizes(text: str) -> tuple:
    from tlop.runtime.units import split_quantity, unit_factor, unit_kind

    out = []
    for item in text.split(","):
        item = item.strip()
        q = split_quantity(item) if item else None
        if q is None or (q[1] and unit_kind(q[1]) not in ("bytes", "number")):
            raise TlopError(f"--sizes: {item!r} is not a size (examples: 1, 64KiB, 1MiB)")
        v = q[0] * unit_factor(q[1]) if q[1] else q[0]
        if v < 0 or v != int(v):
            raise TlopError(f"--sizes: {item!r} is not a whole number of bytes")
        out.append(int(v))
    sizes = tuple(sorted(set(out)))
    if not sizes:
        raise TlopError("--sizes: no size given")
    return sizes


def settings_from_args(args) -> Settings:
    st = quick_settings() if args.quick else full_settings()
    rule = st.rule
    from dataclasses import replace
    for opt, fld in (("eps", "eps"), ("cl", "cl"), ("min_reps", "min_n"), ("max_reps", "max_n"),
                     ("time_cap", "time_cap"), ("warmup", "warmup")):
        v = getattr(args, opt, None)
        if v is not None:
            rule = replace(rule, **{fld: v})
    if not (0 < rule.cl < 1):
        raise TlopError(f"--cl {rule.cl}: must be between 0 and 1")
    if rule.eps <= 0 or rule.min_n < 1 or rule.max_n < rule.min_n or rule.time_cap <= 0 or rule.warmup < 0:
        raise TlopError("method options: need eps > 0, 1 <= min-reps <= max-reps, time-cap > 0, warmup >= 0")
    kw = {"rule": rule, "benchmarks": parse_benchmarks(args.bench)}
    if args.sizes:
        kw["sizes"] = _parse_sizes(args.sizes)
    if args.tau_max is not None:
        if args.tau_max < 1:
            raise TlopError("--tau-max must be at least 1")
        kw["tau_max"] = args.tau_max
    if args.timeout is not None:
        if args.timeout <= 0:
            raise TlopError("--timeout must be positive")
        kw["point_timeout"] = args.timeout
    return st.with_(**kw)


def _channels(args) -> tuple:
    chans = tuple(c.strip() for c in args.channels.split(",") if c.strip())
    bad = [c for c in chans if c not in ("shm", "net")]
    if bad or not chans:
        raise TlopError(f"--channels {args.channels!r}: choose from shm, net")
    return chans


def _worker_args(args, settings: Settings, out: Path) -> list:
    a = ["--out", str(out), "--bench", ",".join(settings.benchmarks),
         "--sizes", ",".join(str(x) for x in settings.sizes),
         "--net-transmission", args.net_transmission, "--resume"]
    if args.quick:
        a.append("--quick")
    r = settings.rule
    a += ["--eps", repr(r.eps), "--cl", repr(r.cl), "--min-reps", str(r.min_n),
          "--max-reps", str(r.max_n), "--time-cap", repr(r.time_cap), "--warmup", str(r.warmup),
          "--timeout", repr(settings.point_timeout)]
    if settings.tau_max is not None:
        a += ["--tau-max", str(settings.tau_max)]
    return a


class _Progress:
    """Progress with an ETA: a rich bar on a terminal, plain lines otherwise, nothing if quiet."""

    def __init__(self, total: int, quiet: bool):
        self.total = max(total, 1)
        self.done = 0
        self.quiet = quiet
        self.t0 = time.monotonic()
        self._rich = None
        if not quiet and sys.stderr.isatty():
            try:
                from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                           TimeElapsedColumn, TimeRemainingColumn)
                from rich.console import Console
                self._rich = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                      console=Console(stderr=True), transient=False)
                self._task = self._rich.add_task("tlop measure", total=self.total)
                self._rich.start()
            except ImportError:
                self._rich = None

    def event(self, ev: dict) -> None:
        kind = ev.get("event")
        if kind == "start":
            if self._rich is not None:
                self._rich.update(self._task, description=ev["label"][:48].ljust(48))
        elif kind in ("done", "skip"):
            self.done += 1
            if self._rich is not None:
                self._rich.update(self._task, completed=self.done)
            elif not self.quiet and (self.done % 10 == 0 or self.done == self.total):
                el = time.monotonic() - self.t0
                eta = el / self.done * (self.total - self.done)
                sys.stderr.write(f"tlop measure: {self.done}/{self.total} points, "
                                 f"{el:.0f} s elapsed, ETA {eta:.0f} s\n")
        elif kind == "nothing" and not self.quiet:
            sys.stderr.write(f"tlop measure: nothing to measure: {ev.get('reason')}\n")

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None


def _launches(channels: tuple, settings: Settings, np_: int, net_kind: str, family: str,
              net_env: dict) -> list:
    """(role, environment, point keys) of every single-host launch, in order (mirrors the worker):
    ``shm`` and ``net-forced`` measure everything with the library's defaults; ``shm:collK`` and
    ``net-forced:collK`` time only the library collectives whose algorithm their environment
    forces (:func:`.plan.forced_launches`)."""
    out = []
    forced_env = forced_launches(family, np_) if "coll" in settings.benchmarks and np_ >= 2 else []
    bases = []
    if "shm" in channels:
        bases.append(("shm", "shm", {}))
    if "net" in channels:
        bases.append(("net-forced", net_kind, dict(net_env)))
    for role, ch, env in bases:
        user = {c: v["algorithm"] for c, v in forced_in_env({**os.environ, **env}).items()}
        pts = plan_channel(ch, settings, np_, np_ // 2) + plan_collectives(ch, settings, np_, user)
        out.append((role, env, {p.key for p in pts}))
    for role, ch, env in bases:
        for k, fenv in enumerate(forced_env, 1):
            e = {**env, **fenv}
            forced = {c: v["algorithm"] for c, v in forced_in_env({**os.environ, **e}).items()}
            keys = {p.key for p in plan_collectives(ch, settings, np_, forced, only_forced=True)}
            if keys:
                out.append((f"{role}:coll{k}", e, keys))
    return out


def _save(samples: Path, out: Path, name: str, planned: set, quiet: bool):
    from tlop.runtime.measure.assemble import build_and_save

    if not any(r.get("kind") == "point" for r in read_records(samples)):
        return None
    prof = build_and_save(samples, out, name, planned)
    return prof


def run(args) -> int:
    """Carry out ``tlop measure``; returns the exit status."""
    if args.np is not None and args.np < 2 and not args.worker:
        raise TlopError("--np must be at least 2 (benchmarks need a pair of ranks)")
    settings = settings_from_args(args)
    channels = _channels(args)
    out = Path(args.out)
    if out.suffix != ".json":
        raise TlopError(f"--out {args.out}: a profile file name ends in .json")
    samples = samples_path(out)
    name = args.name or socket.gethostname().split(".")[0] or "localhost"

    if args.worker:
        from tlop.runtime.measure.worker import run_worker
        run_worker(samples, args.worker, settings, resume=True, events=args.events,
                   net_kind=args.net_transmission)
        return 0

    if args.resume and args.overwrite:
        raise TlopError("--resume and --overwrite contradict each other")
    exists = samples.exists() and samples.stat().st_size > 0
    if exists and not (args.resume or args.overwrite):
        raise TlopError(f"{samples} holds an earlier run's samples; pass --resume to continue it "
                        f"or --overwrite to start again")
    if args.resume and not exists:
        sys.stderr.write(f"tlop measure: nothing to resume in {samples}; starting a new run\n")

    if args.direct or launch.under_mpi():
        return _run_direct(args, settings, channels, samples, out, name)

    if args.overwrite and samples.exists():
        samples.unlink()
    mpiexec = launch.find_mpiexec(args.mpiexec)
    flavor = launch.mpi_flavor(mpiexec)
    net_env = launch.forced_network_env(flavor)
    for item in args.net_env:
        if "=" not in item:
            raise TlopError(f"--net-env {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        net_env[k] = v
    launches = _launches(channels, settings, args.np, args.net_transmission, flavor["family"], net_env)
    planned = set().union(*(keys for _, _, keys in launches)) if launches else set()
    done = {r["key"] for r in read_records(samples) if r.get("kind") in ("point", "skip")}
    progress = _Progress(len(planned - done), args.quiet)
    t0 = time.monotonic()
    wargs = _worker_args(args, settings, out)
    try:
        for role, env, keys in launches:
            if keys <= done:            # resumed: this launch has nothing left to measure
                continue
            try:
                launch.run_ranks(args.np, role, wargs, env, mpiexec, settings.point_timeout, progress.event)
            except TlopError as err:
                if ":coll" not in role:
                    raise
                # the library refused a forced algorithm (MPICH can do so inside MPI_Init): keep
                # the rest of the run, and say so for each point this launch did not measure
                _skip_rest(samples, keys, role, env, str(err.diagnostics[0].message), progress)
            done = {r["key"] for r in read_records(samples) if r.get("kind") in ("point", "skip")}
            _save(samples, out, name, planned, args.quiet)
    except KeyboardInterrupt:
        progress.close()
        prof = _save(samples, out, name, planned, args.quiet)
        kept = sum(1 for r in read_records(samples) if r.get("kind") == "point")
        sys.stderr.write(f"tlop measure: interrupted; {kept} point(s) kept in {samples}"
                         + (f", partial profile in {out}" if prof else "")
                         + "; run the same command with --resume to finish\n")
        return 130
    except TlopError as err:
        progress.close()
        try:
            prof = _save(samples, out, name, planned, args.quiet)
        except TlopError:
            prof = None
        kept = sum(1 for r in read_records(samples) if r.get("kind") == "point")
        note = (f"\n{kept} point(s) kept in {samples}" + (f" (partial profile in {out})" if prof else "")
                + "; fix the cause and run the same command with --resume")
        raise TlopError(str(err.diagnostics[0].message) + note) from None
    progress.close()
    if "cuda" in settings.benchmarks:
        planned.add(CUDA_KEY)
        _run_cuda(samples, settings, args.quiet)
    prof = _save(samples, out, name, planned, args.quiet)
    if prof is None:
        raise TlopError("nothing was measured")
    if not args.quiet:
        w = prof.metadata.get("warnings", [])
        sys.stderr.write(f"tlop measure: wrote {out} ({prof.metadata.get('points_measured')} points, "
                         f"{time.monotonic() - t0:.0f} s) and raw samples {samples}"
                         + (f"; {len(w)} warning(s) in its metadata" if w else "") + "\n")
    return 0


CUDA_KEY = "host/cuda"


def _skip_rest(samples: Path, keys: set, role: str, env: dict, message: str, progress) -> None:
    """Skip records for the points of a failed forced-algorithm launch that it did not measure."""
    from tlop.runtime.measure.store import SampleStore

    have = {r["key"] for r in read_records(samples) if r.get("kind") in ("point", "skip")}
    forcing = " ".join(f"{k}={v}" for k, v in sorted(env.items()) if k.startswith(("MPIR_CVAR_", "OMPI_MCA_")))
    first = next((l for l in message.splitlines() if "not usable" in l), message.splitlines()[0] if message else "")
    with SampleStore(samples) as store:
        for key in sorted(keys - have):
            reason = f"launch {role} ({forcing}) failed: {first.strip()[:300]}"
            channel, _, rest = key.partition("/")
            store.append({"kind": "skip", "key": key, "bench": "coll", "channel": channel,
                          "params": dict(x.split("=", 1) for x in rest.split("/")[1:]), "reason": reason})
            progress.event({"event": "skip", "key": key, "label": key, "reason": reason})


def _run_cuda(samples: Path, settings: Settings, quiet: bool) -> None:
    """The CUDA copy benchmark in this process (no MPI needed), or a skip record saying why not."""
    from tlop.runtime.measure import bench_cuda
    from tlop.runtime.measure.store import SampleStore, compact

    if any(r.get("key") == CUDA_KEY for r in read_records(samples)):   # measured or skipped
        return
    reason = bench_cuda.probe()
    with SampleStore(samples) as store:
        if reason:
            if not quiet:
                sys.stderr.write(f"tlop measure: skipping the cuda benchmark: {reason}\n")
            store.append({"kind": "skip", "key": CUDA_KEY, "bench": "cuda", "channel": "host",
                          "params": {}, "reason": reason})
            return
        for r in bench_cuda.measure(settings.sizes, settings.rule):
            r["samples"] = compact(r["samples"])
            store.append({"kind": "cuda", "key": CUDA_KEY, **r})


def _run_direct(args, settings, channels, samples, out, name) -> int:
    """Every rank of an existing MPI job measures; rank 0 writes the profile."""
    from mpi4py import MPI

    from tlop.runtime.measure.worker import run_worker

    world = MPI.COMM_WORLD
    if world.Get_size() < 2:
        raise TlopError("tlop measure is running as a single MPI rank; start it with at least 2 "
                        "(mpiexec -n 2 … or srun -n 2 …), or without mpiexec to let it relaunch itself")
    fresh = bool(args.overwrite)
    role = "auto"
    result = run_worker(samples, role, settings, resume=not fresh, events=False,
                        net_kind=args.net_transmission, fresh=fresh, channels=channels)
    if world.Get_rank() != 0:
        return 0
    prof = _save(samples, out, name, result.get("keys"), args.quiet)
    if prof is None:
        raise TlopError("nothing was measured")
    if not args.quiet:
        sys.stderr.write(f"tlop measure: wrote {out} and raw samples {samples}\n")
    return 0


def main(argv=None) -> int:
    """``python -m tlop.runtime.measure``."""
    parser = argparse.ArgumentParser(prog="tlop measure",
                                     description="Measure this platform with MPI benchmarks and write a profile.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except TlopError as err:
        sys.stderr.write(str(err).rstrip() + "\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("tlop measure: interrupted\n")
        return 130
