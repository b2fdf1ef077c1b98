"""MPICH (the ``mpich`` wheel) for the tests, and the messages it sent as its own transport logs
them.  MPICH 5.0.2 has no MPI_T performance variables or events to count with (``MPI_T_pvar_get_num``
and ``MPI_T_event_get_num`` return 0) and no selection dump; what it does have is its OFI netmod over
the libfabric it ships (``lib/mpich/libfabric.so.1``), whose ``trace`` hook logs every completion
MPICH reads.  So the run takes the network path (``MPIR_CVAR_NOLOCAL=1``, the ``ofi`` netmod,
libfabric's ``tcp`` provider), ``FI_HOOK=trace FI_LOG_LEVEL=trace``, and each rank's log goes to a
file of its own.  A receive completion (``flags`` with ``FI_RECV``) carries the length, the sender's
rank (MPICH sends it as the completion's immediate data, ``MPIR_CVAR_CH4_OFI_ENABLE_DATA=1``) and
the match bits, whose low byte is MPICH's collective tag (``MPIR_BCAST_TAG`` 2,
``MPIR_ALLGATHER_TAG`` 7): per receiver, who sent how many bytes in how many messages inside the
collective — the same table Open MPI's ``pml_monitoring`` gives (:mod:`_openmpi_helpers`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest

from tlop.runtime.measure.launch import find_mpiexec
from _traffic import chain, flat, recursive_doubling, ring  # noqa: F401 -- re-exported to the tests

#: MPICH's tags of its collectives' point-to-point messages (mpir_tags.h)
MPIR_TAG = {"bcast": 2, "allgather": 7, "gather": 3, "scatter": 5, "alltoall": 9, "reduce_scatter": 17,
            "reduce_scatter_block": 28}

COLL = """
import os, sys
out = sys.argv[3]
os.dup2(os.open(os.path.join(out, "trace." + os.environ["PMI_RANK"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
from mpi4py import MPI
import numpy as np
coll, m = sys.argv[1], int(sys.argv[2])
c = MPI.COMM_WORLD
r, P = c.Get_rank(), c.Get_size()
c.Barrier()
os.write(2, b"TLOP-BEGIN\\n")
if coll == "bcast":
    b = np.full(m, 7 if r == 0 else 0, dtype=np.uint8)
    c.Bcast(b, root=0)
    ok = (b == 7).all()
elif coll == "alltoall":  # rank r's block for q holds r·P + q; rank q receives r·P + q from each r
    g = np.empty(m * P, dtype=np.uint8)
    c.Alltoall(np.repeat(np.arange(r * P, r * P + P, dtype=np.uint8), m), g)
    ok = (g.reshape(P, m) == (np.arange(P) * P + r).astype(np.uint8)[:, None]).all()
elif coll == "gather":
    g = np.empty(m * P, dtype=np.uint8) if r == 0 else None
    c.Gather(np.full(m, r, dtype=np.uint8), g, root=0)
    ok = r != 0 or (g.reshape(P, m) == np.arange(P, dtype=np.uint8)[:, None]).all()
elif coll == "scatter":
    b = np.empty(m, dtype=np.uint8)
    c.Scatter(np.repeat(np.arange(P, dtype=np.uint8), m) if r == 0 else None, b, root=0)
    ok = (b == r).all()
elif coll in ("reduce_scatter", "reduce_scatter_block"):  # block q of every rank holds q + 1: sum P·(q + 1)
    b = np.empty(m, dtype=np.uint8)
    s = np.repeat(np.arange(1, P + 1, dtype=np.uint8), m)
    if coll == "reduce_scatter":
        c.Reduce_scatter(s, b, recvcounts=[m] * P, op=MPI.SUM)
    else:
        c.Reduce_scatter_block(s, b, op=MPI.SUM)
    ok = (b == np.uint8(P * (r + 1))).all()
else:
    g = np.empty(m * P, dtype=np.uint8)
    c.Allgather(np.full(m, r, dtype=np.uint8), g)
    ok = (g.reshape(P, m) == np.arange(P, dtype=np.uint8)[:, None]).all()
os.write(2, b"TLOP-END\\n" + (b"TLOP-CORRECT\\n" if ok else b"TLOP-WRONG\\n"))
"""

# the network path with libfabric's trace hook, and its receive completions: in the runtime
# (tlop.runtime.measure.witness, which tlop tune-check uses), shared with these tests
from tlop.runtime.measure.witness import COMPLETION as _COMPLETION, FI_RECV as _FI_RECV  # noqa: E402
from tlop.runtime.measure.witness import MPICH_TRACED as TRACED  # noqa: E402


@pytest.fixture(scope="module")
def mpich():
    from tlop.runtime.tuning_files import mpich_default_selection

    base = mpich_default_selection()
    if base is None:
        pytest.skip("MPICH's library (the mpich wheel) is not beside this Python")
    return base


def received(log: str, coll: str) -> list:
    """[(source, bytes)] of the receives one rank's trace log shows inside the collective."""
    assert log.count("TLOP-BEGIN\n") == 1 and log.count("TLOP-END\n") == 1, log[-2000:]
    inside = log.split("TLOP-BEGIN\n", 1)[1].split("TLOP-END\n", 1)[0]
    out = []
    for line in inside.splitlines():
        hit = _COMPLETION.search(line)
        if hit and int(hit.group(1), 16) & _FI_RECV:
            assert int(hit.group(4), 16) & 0xFF == MPIR_TAG[coll], line  # a message of this collective
            out.append((int(hit.group(3)), int(hit.group(2))))
    return out


def observed(tmp_path, coll, m, selection=None, P=4, forcing=None):
    """{(src, dst): (bytes, messages)} of the collective, as MPICH's transport logged it; with
    ``selection`` (a JSON selection file) or ``forcing`` (CVARs)."""
    script = tmp_path / "traced.py"
    script.write_text(COLL)
    tag = selection.stem if selection else "-".join(f"{v}" for v in (forcing or {}).values()) or "default"
    out = tmp_path / f"trace-{coll}-{m}-{tag}"
    out.mkdir(exist_ok=True)
    env = dict(os.environ, **TRACED, **(forcing or {}))
    env.pop("MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", None)
    if selection is not None:
        env["MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"] = str(selection)
    r = subprocess.run([find_mpiexec(), "-n", str(P), sys.executable, str(script), coll, str(m), str(out)],
                       capture_output=True, env=env, timeout=300)
    logs = {k: (out / f"trace.{k}").read_text(errors="replace") if (out / f"trace.{k}").exists() else ""
            for k in range(P)}
    assert r.returncode == 0 and all("TLOP-CORRECT\n" in log for log in logs.values()), \
        r.stderr.decode(errors="replace")[-1000:] + "".join(log[-1000:] for log in logs.values())
    pairs: Counter = Counter()
    messages: Counter = Counter()
    for dst in range(P):
        for src, nbytes in received(logs[dst], coll):
            pairs[(src, dst)] += nbytes
            messages[(src, dst)] += 1
    return {k: (pairs[k], messages[k]) for k in pairs}


# What each algorithm sends on 4 ranks, {(src, dst): (bytes, messages)}.

def binomial(m):
    """MPICH's binomial broadcast (bcast_intra_binomial.c): the root sends to 2, then 1; 2 to 3."""
    return {(0, 2): (m, 1), (0, 1): (m, 1), (2, 3): (m, 1)}
