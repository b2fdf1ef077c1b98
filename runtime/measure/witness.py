"""Which algorithm did the library run?  The messages of one collective call, as the library
itself reports them.

What it does: :func:`traffic` launches P ranks that each call the collective once per message
size and returns, per size, ``{(source, destination): (bytes, messages)}`` — what the
library's own instrumentation saw inside that call:

* MPICH (the ``mpich`` wheel has no MPI_T counters and no selection dump): its OFI netmod over
  the libfabric it ships logs every completion with libfabric's ``trace`` hook
  (:data:`MPICH_TRACED`: the network path, ``MPIR_CVAR_NOLOCAL=1``, libfabric's ``tcp``
  provider, ``FI_HOOK=trace FI_LOG_LEVEL=trace``; the sender's rank travels as the completion's
  immediate data, ``MPIR_CVAR_CH4_OFI_ENABLE_DATA=1``).  Each rank logs to a file of its own and
  writes a marker before and after each call; :func:`mpich_received` reads the receive
  completions between the markers.  One launch covers every size.
* Open MPI: the ``pml/monitoring`` component's per-pair counters of collective ("internal")
  messages, printed at ``MPI_Finalize`` (``pml_monitoring_enable=2``,
  ``pml_monitoring_enable_output=1``): one launch per size, each calling the collective once.

Two runs ran the same algorithm when their traffic is the same; :mod:`tlop.cli.tune_check`
compares the run with the tuning file against a run that forces the algorithm the file names
(:func:`.selection.forcing_env`) and against the library's default.

What it does not do: time anything (the witness runs take the network path and log every
message; they are never timed), or tell apart two algorithms that send the same messages (at
P = 2 several trees are one send: the report says "same traffic as the default").
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from tlop.runtime.diagnostics import TlopError

__all__ = ["traffic", "mpich_received", "MPICH_TRACED", "COMPLETION", "FI_RECV", "same_traffic", "describe"]

#: the network path with libfabric's trace hook (see the module docstring)
MPICH_TRACED = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi",
                "MPIR_CVAR_CH4_OFI_ENABLE_DATA": "1", "FI_PROVIDER": "tcp", "FI_HOOK": "trace",
                "FI_LOG_LEVEL": "trace"}
COMPLETION = re.compile(r"trace_cq_read\(\).*? flags (0x[0-9a-f]+) len (\d+) .*?data (\d+) tag (0x[0-9a-f]+)")
#: libfabric's FI_RECV flag of a completion
FI_RECV = 1 << 10
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")


def mpich_received(log: str, marker: str) -> list:
    """[(source, bytes)] of the receive completions one rank's trace log shows between
    ``TLOP-BEGIN <marker>`` and ``TLOP-END <marker>``."""
    begin, end = f"TLOP-BEGIN {marker}\n", f"TLOP-END {marker}\n"
    if log.count(begin) != 1 or log.count(end) != 1:
        raise TlopError(f"the trace log lacks the markers of {marker} (did the rank die?)")
    inside = log.split(begin, 1)[1].split(end, 1)[0]
    out = []
    for line in inside.splitlines():
        hit = COMPLETION.search(line)
        if hit and int(hit.group(1), 16) & FI_RECV:
            out.append((int(hit.group(3)), int(hit.group(2))))
    return out


def same_traffic(a, b) -> bool:
    return a is not None and b is not None and dict(a) == dict(b)


def describe(t) -> str:
    """``0→1: 2 msgs 64KiB, …`` (per pair, sorted: messages and their total bytes)."""
    from tlop.runtime.units import format_size

    if t is None:
        return "-"
    if not t:
        return "no messages"
    return ", ".join(f"{s}→{d}: {n} msg{'s' if n != 1 else ''} {format_size(b)}" for (s, d), (b, n) in sorted(t.items()))


def _script_env(env_extra: dict) -> dict:
    env = dict(os.environ)
    for k in list(env):        # a selection of the caller's environment must not leak in
        if k.startswith(("MPIR_CVAR_", "OMPI_MCA_coll_", "FI_", "OMPI_MCA_pml_monitoring")):
            del env[k]
    env.update(env_extra)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def traffic(family: str, mpiexec: str, P: int, collective: str, sizes: list, env_extra: dict,
            timeout: float = 300.0, launcher_args=()) -> dict:
    """``{m: {(src, dst): (bytes, messages)}}`` of one call per size, with ``env_extra`` (the
    selection under test) — see the module docstring."""
    if family == "mpich":
        return _mpich(mpiexec, P, collective, sizes, env_extra, timeout, launcher_args)
    if family == "openmpi":
        return {m: _openmpi(mpiexec, P, collective, m, env_extra, timeout, launcher_args) for m in sizes}
    raise TlopError(f"tune-check cannot see which algorithm a {family} library ran (MPICH and Open MPI only)")


def _run(cmd, env, timeout):
    try:
        r = subprocess.run(cmd, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TlopError(f"the witness run ({' '.join(cmd[:3])} …) did not finish within {timeout:g} s") from None
    except OSError as err:
        raise TlopError(f"cannot start {cmd[0]}: {err.strerror or err}") from None
    return r


def _mpich(mpiexec, P, collective, sizes, env_extra, timeout, launcher_args) -> dict:
    with tempfile.TemporaryDirectory(prefix="tlop-witness-") as out:
        env = _script_env({**MPICH_TRACED, **env_extra})
        cmd = [mpiexec, *launcher_args, "-n", str(P), sys.executable, "-m", "tlop.runtime.measure.witness",
               "mpich", out, collective, ",".join(str(m) for m in sizes)]
        r = _run(cmd, env, timeout)
        logs = {k: (Path(out) / f"trace.{k}").read_text(errors="replace") if (Path(out) / f"trace.{k}").exists()
                else "" for k in range(P)}
        if r.returncode != 0 or not all("TLOP-DONE\n" in log for log in logs.values()):
            tail = r.stderr.decode(errors="replace")[-600:] + "".join(
                "\n".join(log.splitlines()[-3:]) for log in logs.values())
            raise TlopError(f"the traced MPICH run failed (exit status {r.returncode}): {tail.strip()}")
        result = {}
        for m in sizes:
            pairs: Counter = Counter()
            msgs: Counter = Counter()
            for dst in range(P):
                for src, nbytes in mpich_received(logs[dst], str(m)):
                    pairs[(src, dst)] += nbytes
                    msgs[(src, dst)] += 1
            result[m] = {k: (pairs[k], msgs[k]) for k in pairs}
        return result


def _openmpi(mpiexec, P, collective, m, env_extra, timeout, launcher_args) -> dict:
    env = _script_env({**env_extra, "OMPI_MCA_pml_monitoring_enable": "2",
                       "OMPI_MCA_pml_monitoring_enable_output": "1"})
    cmd = [mpiexec, *launcher_args, "-n", str(P), sys.executable, "-m", "tlop.runtime.measure.witness",
           "openmpi", "-", collective, str(m)]
    r = _run(cmd, env, timeout)
    out = r.stdout.decode(errors="replace")
    if r.returncode != 0:
        raise TlopError(f"the monitored Open MPI run failed (exit status {r.returncode}): "
                        f"{(out[-400:] + r.stderr.decode(errors='replace')[-600:]).strip()}")
    pairs = {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "I" and len(f) >= 5:  # internal (collective) messages of this rank
            pairs[(int(f[1]), int(f[2]))] = (int(f[3].split()[0]), int(f[4].split()[0]))
    return pairs


def _rank_main(argv) -> int:
    """One rank of a witness run: ``python -m tlop.runtime.measure.witness FAMILY OUTDIR COLL M,M,…``."""
    family, out, collective, sizes = argv[0], argv[1], argv[2], [int(x) for x in argv[3].split(",")]
    if family == "mpich":
        rank = next((os.environ[v] for v in _RANK_VARS if os.environ.get(v)), "0")
        os.dup2(os.open(os.path.join(out, f"trace.{rank}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    from mpi4py import MPI

    from tlop.runtime.measure.tunecheck import operation

    comm = MPI.COMM_WORLD
    for m in sizes:
        call, _ = operation(comm, collective, m)
        if family == "mpich":
            comm.Barrier()
            os.write(2, f"TLOP-BEGIN {m}\n".encode())
        call()
        if family == "mpich":
            os.write(2, f"TLOP-END {m}\n".encode())
    if family == "mpich":
        os.write(2, b"TLOP-DONE\n")
    return 0


if __name__ == "__main__":
    sys.exit(_rank_main(sys.argv[1:]))
