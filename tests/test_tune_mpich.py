"""tlop tune's MPICH selection file in real MPICH (the ``mpich`` wheel): the exported file, which
carries MPICH's own default for every other collective, is accepted and the collectives run
correctly under it; and it changes the algorithm MPICH runs — observed through the messages MPICH
sends, as its own transport logs them (:mod:`_mpich_helpers`: per receiver, who sent how many bytes
in how many messages inside the collective), not through timing.  On 4 ranks MPICH's binomial
broadcast is 0→2, 0→1, 2→3 with one message each, the chain 0→1→2→3 with one message per
segment, the flat tree 0→1, 0→2, 0→3; the ring allgather r → r+1 with P − 1 messages, recursive
doubling r ↔ r xor 1 (m bytes) and r ↔ r xor 2 (2m).  Each test checks both directions: the file
makes MPICH run one algorithm at one size and another at another (or another file another), and
MPICH's default runs something else."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from _mpich_helpers import binomial, chain, flat, mpich, observed, recursive_doubling, ring  # noqa: F401
from tlop.cli.main import main
from tlop.runtime.measure.launch import find_mpiexec
from tlop.runtime.tuning_files import Rule, mpich_forcing, mpich_json

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")

CHECK = """
import sys
from mpi4py import MPI
import numpy as np
c = MPI.COMM_WORLD; r, P = c.Get_rank(), c.Get_size()
for m in (16, 1024, 65536):
    b = np.full(m, 7 if r == 0 else 0, dtype=np.uint8); c.Bcast(b, root=0); assert (b == 7).all()
    g = np.empty(m * P, dtype=np.uint8); c.Allgather(np.full(m, r, dtype=np.uint8), g)
    assert (g.reshape(P, m) == np.arange(P, dtype=np.uint8)[:, None]).all()
print("ok", r)
"""


def _run(tmp_path, P, selection=None):
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    env = dict(os.environ, MPIR_CVAR_DEVICE_COLLECTIVES="none")
    if selection is not None:
        env["MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"] = str(selection)
    return subprocess.run([find_mpiexec(), "-n", str(P), sys.executable, str(script)], capture_output=True,
                          text=True, env=env, timeout=180)


def test_exported_mpich_files_are_accepted(tmp_path, capsys, mpich):
    b, a = tmp_path / "bcast.json", tmp_path / "allgather.json"
    assert main(["tune", "plogp/bcast", "P=2..8:x2", "m=1KiB..1MiB:x32", "--collective", "bcast",
                 "--profile", "localhost-example", "--mpich", str(b)]) == 0
    assert "MPIR_Bcast_intra_pipelined_tree" in b.read_text()  # the trees' parameters are accepted too
    assert main(["tune", "taulop/allgather", "P=4", "m=1KiB..1MiB:x32", "--collective", "allgather",
                 "--only", "ring", "--mpich", str(a)]) == 0
    capsys.readouterr()
    for f in (b, a):
        r = _run(tmp_path, 4, f)
        assert r.returncode == 0 and r.stdout.count("ok") == 4, r.stderr[-2000:]


def test_tuned_broadcast_selection_switches_mpich_from_binomial_to_a_segmented_chain(mpich, tmp_path, capsys):
    sel = tmp_path / "bcast.json"
    assert main(["tune", "plogp/bcast", "P=4", "m=4KiB,256KiB", "--collective", "bcast",
                 "--profile", "localhost-example", "--mpich", str(sel)]) == 0
    out = capsys.readouterr().out
    # the model's choice (printed): binomial for 4 KiB, the chain in 16 KiB segments for 256 KiB
    assert "binomial_closed" in out and "chain_segmented s=16KiB" in out
    assert observed(tmp_path, "bcast", 4096, sel) == binomial(4096)
    assert observed(tmp_path, "bcast", 262144, sel) == chain(262144, 16384)
    # MPICH's default for 4 ranks is the binomial tree at every size: the file changed the algorithm
    assert observed(tmp_path, "bcast", 262144) == binomial(262144)
    # and a selection of the linear broadcast (MPICH's flat tree) makes 4 KiB go out from the root alone
    only_flat = tmp_path / "flat.json"
    assert main(["tune", "taulop/bcast", "P=4", "m=4KiB", "--collective", "bcast", "--only", "linear",
                 "--mpich", str(only_flat)]) == 0
    assert observed(tmp_path, "bcast", 4096, only_flat) == flat(4096)


def test_tuned_allgather_selection_chooses_ring_or_recursive_doubling_by_size(mpich, tmp_path, capsys):
    only_ring = tmp_path / "ring.json"
    assert main(["tune", "taulop/allgather", "P=4", "m=1KiB", "--collective", "allgather", "--only", "ring",
                 "--mpich", str(only_ring)]) == 0
    assert observed(tmp_path, "allgather", 1024, only_ring) == ring(1024)
    # MPICH's default for 4 ranks and 4 KiB gathered is recursive doubling
    assert observed(tmp_path, "allgather", 1024) == recursive_doubling(1024)
    # a selection with a switch: recursive doubling up to 16 KiB blocks, the ring from 64 KiB (MPICH
    # compares the whole gathered size, m·P, which the file's thresholds are written in)
    mixed = tmp_path / "mixed.json"
    mixed.write_text(mpich_json("allgather", [Rule(4, 1024, "taulop/allgather:rda"),
                                              Rule(4, 65536, "taulop/allgather:ring")], mpich))
    assert '"total_msg_size<=262143"' in mixed.read_text()
    assert observed(tmp_path, "allgather", 16384, mixed) == recursive_doubling(16384)
    assert observed(tmp_path, "allgather", 65536, mixed) == ring(65536)
    assert observed(tmp_path, "allgather", 65536) == recursive_doubling(65536)  # the default, without the file


def test_the_cvars_that_force_a_tree_broadcast_run_that_tree(mpich, tmp_path):
    """What ``tlop validate --library`` forces for the linear and chain broadcasts, MPICH runs."""
    flat_env = mpich_forcing("bcast", "taulop/bcast:linear", 4)
    assert flat_env["MPIR_CVAR_BCAST_TREE_KVAL"] == "3"
    fallback = {"MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}
    assert observed(tmp_path, "bcast", 4096, forcing={**fallback, **flat_env}) == flat(4096)
    chain_env = mpich_forcing("bcast", "plogp/bcast:chain", 4)
    assert observed(tmp_path, "bcast", 4096, forcing={**fallback, **chain_env}) == chain(4096)
