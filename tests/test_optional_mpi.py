"""mpi4py is optional (the ``mpi``/``mpich`` extras): without it ``tlop eval`` works and
``tlop measure`` says in one line how to install it (exit status 2)."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: run the CLI with mpi4py impossible to import (as after ``pip install .`` without extras)
BLOCKED = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
           "        if name == 'mpi4py' or name.startswith('mpi4py.'):\n"
           "            raise ImportError('mpi4py is blocked for this test')\n"
           "sys.meta_path.insert(0, Block())\nfor m in [m for m in sys.modules if m.startswith('mpi4py')]:\n"
           "    del sys.modules[m]\nfrom tlop.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def _tlop_without_mpi(*args, tmp_path):
    env = dict(os.environ, TLOP_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-c", BLOCKED, *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_pyproject_keeps_mpi4py_in_extras_only():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("mpi4py") for d in meta["dependencies"])
    extras = meta["optional-dependencies"]
    assert any(d.startswith("mpi4py") for d in extras["mpi"])
    assert any(d.startswith("mpi4py") for d in extras["mpich"])


def test_eval_works_and_measure_explains_without_mpi4py(tmp_path):
    r = _tlop_without_mpi("eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("binomial_bcast(P=16, m=1MiB, c=shm) on metropolis:")
    r = _tlop_without_mpi("eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", "--engine", "jit",
                          tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _tlop_without_mpi("measure", "--quick", "--out", str(tmp_path / "p.json"), tmp_path=tmp_path)
    assert r.returncode == 2
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert "mpi4py" in r.stderr and "pip install 'tlop[mpi]'" in r.stderr and "Traceback" not in r.stderr
    r = _tlop_without_mpi("measure", "--help", tmp_path=tmp_path)  # the help needs no MPI
    assert r.returncode == 0 and "usage: tlop measure" in r.stdout


@pytest.mark.slow
def test_pip_install_without_extras_gives_a_working_eval(tmp_path):
    """A real ``pip install .`` into a fresh venv, no extras: no mpi4py, ``tlop eval`` works."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", str(ROOT)], capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0 and ("Could not find" in r.stderr or "NewConnectionError" in r.stderr):
        pytest.skip(f"no package index reachable: {r.stderr.strip().splitlines()[-1]}")
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, TLOP_CACHE_DIR=str(tmp_path / "cache"))
    assert subprocess.run([str(py), "-c", "import mpi4py"], capture_output=True).returncode != 0
    tlop = venv / "bin" / "tlop"
    r = subprocess.run([str(tlop), "eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB"],
                       capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and "binomial_bcast(P=16, m=1MiB, c=shm) on metropolis:" in r.stdout, r.stderr
    r = subprocess.run([str(tlop), "measure", "--quick"], capture_output=True, text=True, env=env,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "tlop[mpi]" in r.stderr
