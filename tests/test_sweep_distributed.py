"""tlop sweep --distributed under mpiexec -n 2 (mpi4py.futures): the same output as the serial
sweep, bit for bit, on a 10⁴-point grid (JIT) and on a schedule over a mapping (interpreter)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tlop.runtime.measure.launch import find_mpiexec

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")


def _serial(argv):
    return subprocess.run([sys.executable, "-m", "tlop.cli", *argv], capture_output=True, text=True, timeout=300)


def _distributed(argv, n=2):
    return subprocess.run([find_mpiexec(), "-n", str(n), sys.executable, "-m", "mpi4py.futures", "-m", "tlop.cli",
                           *argv, "--distributed"], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("argv", [
    ["sweep", "taulop/bcast", "binomial_bcast", "P=2..101", "m=1..100:+1", "--csv", "-"],          # 10⁴ points
    ["sweep", "taulop/allgather", "ring", "P=2..9", "m=0..49:+1", "--mapping", "sequential(3)", "--json"],
])
def test_distributed_sweep_equals_the_serial_sweep(argv):
    serial, dist = _serial(argv), _distributed(argv)
    assert serial.returncode == 0, serial.stderr
    assert dist.returncode == 0, dist.stderr
    assert dist.stdout == serial.stdout
    assert len(serial.stdout.splitlines()) >= 400


def test_distributed_without_workers_says_how_to_start_it():
    r = _serial(["sweep", "taulop/bcast", "binomial_bcast", "P=2,4", "m=1KiB", "--distributed"])
    assert r.returncode == 1
    assert "mpiexec -n N python -m mpi4py.futures -m tlop.cli sweep … --distributed" in r.stderr
    assert "Traceback" not in r.stderr
