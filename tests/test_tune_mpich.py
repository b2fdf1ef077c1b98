"""tlop tune's MPICH selection file in real MPICH (the ``mpich`` wheel): the exported file, which
carries MPICH's own default for every other collective, is accepted and the collectives run
correctly under it; and it changes the algorithm MPICH runs — observed through MPICH's own
diagnostics: a selection that sends a 3-rank allgather to recursive doubling makes MPICH enter
``allgather_intra_recursive_doubling.c`` (whose assertion, power-of-two ranks only, names it),
while the same file with the ring, and MPICH's default, run."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tlop.cli.main import main
from tlop.runtime.measure.launch import find_mpiexec
from tlop.runtime.tuning_files import Rule, mpich_default_selection, mpich_json

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


@pytest.fixture(scope="module")
def base():
    tree = mpich_default_selection()
    if tree is None:
        pytest.skip("MPICH's library (the mpich wheel) is not beside this Python")
    return tree


def _run(tmp_path, P, selection=None):
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    env = dict(os.environ, MPIR_CVAR_DEVICE_COLLECTIVES="none")
    if selection is not None:
        env["MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"] = str(selection)
    return subprocess.run([find_mpiexec(), "-n", str(P), sys.executable, str(script)], capture_output=True,
                          text=True, env=env, timeout=180)


def test_exported_mpich_files_are_accepted(tmp_path, capsys, base):
    b, a = tmp_path / "bcast.json", tmp_path / "allgather.json"
    assert main(["tune", "taulop/bcast", "P=2..8:x2", "m=1KiB..1MiB:x32", "--collective", "bcast",
                 "--mpich", str(b)]) == 0
    assert main(["tune", "taulop/allgather", "P=4", "m=1KiB..1MiB:x32", "--collective", "allgather",
                 "--only", "ring", "--mpich", str(a)]) == 0
    capsys.readouterr()
    for f in (b, a):
        r = _run(tmp_path, 4, f)
        assert r.returncode == 0 and r.stdout.count("ok") == 4, r.stderr[-2000:]


def test_the_selection_file_decides_which_allgather_mpich_runs(tmp_path, base):
    rd, ring = tmp_path / "rd.json", tmp_path / "ring.json"
    rd.write_text(mpich_json("allgather", [Rule(3, 1, "taulop/allgather:rda")], base))
    ring.write_text(mpich_json("allgather", [Rule(3, 1, "taulop/allgather:ring")], base))
    r = _run(tmp_path, 3, rd)
    assert r.returncode != 0
    assert "allgather_intra_recursive_doubling.c" in r.stderr  # MPICH entered the algorithm the file names
    for sel in (ring, None):
        r = _run(tmp_path, 3, sel)
        assert r.returncode == 0 and r.stdout.count("ok") == 3, r.stderr[-2000:]
        assert "recursive_doubling" not in r.stderr
