"""Relaunching ``tlop measure`` under ``mpiexec``, with a watchdog and progress events.

What it does: :func:`find_mpiexec` picks the ``mpiexec`` beside the Python interpreter (where
the ``mpich`` wheel puts it), else the one on PATH; :func:`under_mpi` tells whether this
process was itself started by an MPI launcher (then there is nothing to relaunch);
:func:`forced_network_env` gives the environment that makes a single machine's MPI use its
network path (MPICH: ``MPIR_CVAR_NOLOCAL=1`` plus a TCP transport — UCX ``UCX_TLS=tcp,self`` or
libfabric ``FI_PROVIDER=tcp``, since UCX alone would still use shared memory; Open MPI:
``btl self,tcp``); :func:`run_ranks` starts ``mpiexec -n N python -m tlop.runtime.measure
--worker ROLE …`` in its own process group, reads the ``@@tlop`` events of rank 0, and

* kills the whole job if no event arrives within the per-point timeout (plus a grace period),
  raising :class:`TlopError` naming the benchmark and the point in flight;
* raises :class:`TlopError` with the point in flight and the tail of the ranks' stderr if the
  job fails (a rank crashed or aborted);
* on Ctrl-C stops the job (SIGINT, then SIGKILL) and re-raises ``KeyboardInterrupt`` — every
  finished point is already on disk;
* ties the job's life to the launcher's, however the launcher ends (even SIGKILL, which runs
  no cleanup): on Linux ``mpiexec`` gets ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` before it starts
  (:func:`die_with_parent`; when it dies, Hydra's proxies kill their ranks), and every rank
  watches the launcher's PID itself (``TLOP_MEASURE_LAUNCHER_PID``,
  :func:`.worker.watch_launcher`), which also covers other launchers and systems without
  ``prctl``.  The death signal follows the *thread* that started ``mpiexec``: call
  :func:`run_ranks` from a thread that outlives the job (the CLI calls it from the main thread).

:func:`max_local_ranks` is the most ranks a relaunch on this host may start (``--np`` is checked
against it before anything is planned or allocated).

What it does not do: measure (:mod:`.worker`) or assemble the profile (:mod:`.assemble`).
"""

from __future__ import annotations

import collections
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from tlop.runtime.diagnostics import TlopError

from tlop.runtime.measure.worker import EVENT_PREFIX, LAUNCHER_ENV, process_start

__all__ = ["find_mpiexec", "under_mpi", "mpi_flavor", "forced_network_env", "run_ranks",
           "die_with_parent", "max_local_ranks", "MAX_LOCAL_RANKS"]

#: the most ranks a relaunch starts on one host, whatever the limits say
MAX_LOCAL_RANKS = 1024
#: memory a rank needs at least (a Python interpreter with numpy and mpi4py, and its buffers)
RANK_BYTES = 64 << 20


def max_local_ranks() -> tuple:
    """(the most ranks a relaunch can start on this host, what limits it): the smallest of
    :data:`MAX_LOCAL_RANKS`, the user's process limit (``RLIMIT_NPROC``) less the processes
    this needs besides the ranks, and the available memory over :data:`RANK_BYTES`."""
    best, why = MAX_LOCAL_RANKS, f"tlop measure starts at most {MAX_LOCAL_RANKS} ranks on one host"
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
        if soft != resource.RLIM_INFINITY and soft - 16 < best:
            best, why = max(soft - 16, 0), f"the process limit (ulimit -u) is {soft}"
    except (ImportError, OSError, ValueError, AttributeError):
        pass
    try:
        with open("/proc/meminfo") as f:
            avail = next((int(l.split()[1]) * 1024 for l in f if l.startswith("MemAvailable:")), None)
        if avail is not None and avail // RANK_BYTES < best:
            best = int(avail // RANK_BYTES)
            why = (f"{avail >> 20} MiB of memory is available, about {RANK_BYTES >> 20} MiB per rank")
    except (OSError, ValueError):
        pass
    return best, why


def die_with_parent(parent_pid: int):
    """A ``preexec_fn`` that makes the child get SIGKILL when the thread that started it ends
    (Linux ``prctl(PR_SET_PDEATHSIG)``), and exit at once if its parent is already gone; None
    where ``prctl`` does not exist."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl      # resolved before the fork
    except (OSError, AttributeError):
        return None
    PR_SET_PDEATHSIG = 1
    kill = int(signal.SIGKILL)

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent_pid:      # the launcher died before the death signal was set
            os._exit(1)

    return preexec

_MPI_RANK_VARS = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS",
                  "MV2_COMM_WORLD_SIZE", "PALS_RANKID")


def find_mpiexec(explicit: Optional[str] = None) -> str:
    """The ``mpiexec`` to relaunch under: ``explicit``, else the one beside ``sys.executable``,
    else ``mpiexec`` on PATH."""
    if explicit:
        path = shutil.which(explicit) or (explicit if Path(explicit).is_file() else None)
        if not path:
            raise TlopError(f"--mpiexec {explicit}: no such program")
        return path
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found:
        return found
    raise TlopError("no mpiexec found beside the Python interpreter or on PATH; install an MPI "
                    "(e.g. `pip install mpich`) or pass --mpiexec PATH")


def under_mpi(environ=None) -> bool:
    """Whether this process is a rank started by mpiexec/mpirun/srun with more than one rank."""
    env = os.environ if environ is None else environ
    if env.get("TLOP_MEASURE_WORKER"):
        return True
    if any(env.get(v) for v in _MPI_RANK_VARS):
        return True
    steps = env.get("SLURM_STEP_NUM_TASKS")
    return bool(env.get("SLURM_STEP_ID") and steps and steps.isdigit() and int(steps) > 1)


def mpi_flavor(mpiexec: str) -> dict:
    """``{"family": "mpich"|"openmpi"|"unknown", "devices": [...], "version": str}`` from the
    launcher's ``--version`` and, for MPICH, ``mpichversion`` beside it."""
    info = {"family": "unknown", "devices": [], "version": ""}
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20)
        text = out.stdout + out.stderr
    except (OSError, subprocess.SubprocessError):
        text = ""
    if "Open MPI" in text or "OpenRTE" in text or "prterun" in text:
        info["family"] = "openmpi"
    elif "HYDRA" in text or "MPICH" in text or "hydra" in text:
        info["family"] = "mpich"
    info["version"] = text.strip().splitlines()[0] if text.strip() else ""
    mv = Path(mpiexec).parent / "mpichversion"
    if mv.is_file():
        try:
            out = subprocess.run([str(mv)], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        for line in out.splitlines():
            if line.startswith("MPICH Device:"):
                info["family"] = "mpich"
                dev = line.split(":", 1)[1].strip()
                info["devices"] = dev.replace("ch4:", "").replace(",", " ").split() if dev.startswith("ch4") else [dev]
    return info


def forced_network_env(flavor: dict) -> dict:
    """Environment that forces a single host's ranks onto the network (TCP) path."""
    if flavor["family"] == "openmpi":
        return {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_pml": "ob1"}
    env = {"MPIR_CVAR_NOLOCAL": "1"}
    devices = flavor.get("devices") or []
    if "ucx" in devices:
        env.update({"MPIR_CVAR_CH4_NETMOD": "ucx", "UCX_TLS": "tcp,self"})
    elif "ofi" in devices:
        env.update({"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"})
    return env


def _reader(stream, q: "queue.Queue", tag: str) -> None:
    for line in iter(stream.readline, ""):
        q.put((tag, line))
    q.put((tag, None))


def _stop(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """SIGINT the job's process group, then SIGKILL whatever is left."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_ranks(np_: int, role: str, worker_args: list, env_extra: dict, mpiexec: str,
              point_timeout: float, on_event: Callable[[dict], None],
              startup_timeout: float = 120.0, module: Optional[str] = None, launcher_args=()) -> int:
    """Run one MPI launch of the worker; returns the number of points it measured.  With
    ``module``, the ranks run ``python -m MODULE WORKER_ARGS…`` instead (another worker that
    speaks the same events, e.g. :mod:`.schedrun`); ``launcher_args`` go to the launcher before
    ``-n`` (e.g. ``-bind-to core``)."""
    cmd = [mpiexec, "-n", str(np_), sys.executable, "-m", "tlop.runtime.measure",
           "--worker", role, "--events"] + worker_args
    if module is not None:
        cmd = [mpiexec, "-n", str(np_), sys.executable, "-m", module] + worker_args
    cmd[1:1] = list(launcher_args)
    env = dict(os.environ)
    env.update(env_extra)
    env["TLOP_MEASURE_WORKER"] = "1"
    env["TLOP_MEASURE_LAUNCHER"] = f"{Path(mpiexec).name} -n {np_} (relaunched by tlop measure)"
    me = os.getpid()
    env[LAUNCHER_ENV] = f"{me}:{process_start(me) or ''}"
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, start_new_session=True, bufsize=1,
                                preexec_fn=die_with_parent(me))
    except OSError as err:
        raise TlopError(f"cannot start {mpiexec}: {err.strerror or err}") from None
    q: "queue.Queue" = queue.Queue()
    tail: collections.deque = collections.deque(maxlen=40)
    threads = [threading.Thread(target=_reader, args=(proc.stdout, q, "out"), daemon=True),
               threading.Thread(target=_reader, args=(proc.stderr, q, "err"), daemon=True)]
    for t in threads:
        t.start()
    current = None          # label of the point in flight
    last = time.monotonic()
    limit = startup_timeout
    measured = 0
    open_streams = 2
    try:
        while open_streams:
            try:
                tag, line = q.get(timeout=0.5)
            except queue.Empty:
                if time.monotonic() - last > limit:
                    _stop(proc, grace=1.0)
                    where = f"{current}" if current else f"starting the {role} ranks"
                    raise TlopError(f"{where} did not finish within {limit:g} s "
                                    f"(a rank hung); the job was stopped. {_tail(tail)}")
                continue
            if line is None:
                open_streams -= 1
                continue
            if tag == "err":
                tail.append(line.rstrip())
                continue
            if not line.startswith(EVENT_PREFIX):
                tail.append(line.rstrip())
                continue
            try:
                ev = json.loads(line[len(EVENT_PREFIX):])
            except json.JSONDecodeError:
                continue
            last = time.monotonic()
            if ev.get("event") == "start":
                current = ev.get("label")
                limit = point_timeout + 15.0
            elif ev.get("event") in ("done", "skip"):
                current = None
                measured += ev.get("event") == "done"
            on_event(ev)
        rc = proc.wait()
    except KeyboardInterrupt:
        _stop(proc)
        raise
    except BaseException:
        _stop(proc)
        raise
    if rc != 0:
        where = f"while measuring {current}" if current else f"in the {role} launch"
        raise TlopError(f"the MPI job failed {where} (exit status {rc}). {_tail(tail)}")
    return measured


def _tail(lines) -> str:
    text = "\n".join(l for l in lines if l.strip())
    return f"Last output of the ranks:\n{text}" if text else ""
