"""The bundled postal/max-rate profiles ``summit`` and ``lassen``: 003 Tables I–III as profiles.

What it does: holds the numbers of paper 003 (Bienz, Olson, Gropp, Lockhart, "Modeling Data
Movement Performance on Heterogeneous Architectures") Tables I, II and III, exactly as printed,
with the protocol thresholds this project assumes (003 does not give them), and builds the
profiles ``stdlib/profiles/summit.json`` and ``lassen.json`` from them (:func:`build`).  Every
channel is a *path* channel (``{"path": true}``, docs/profiles.rst) read by
``stdlib/postal/platform.tlop``.  A test asserts the shipped JSON is what :func:`build` gives.

Command line::

    python -m tlop.runtime.bundled_postal            # rewrite stdlib/profiles/{summit,lassen}.json
    python -m tlop.runtime.bundled_postal --check    # exit 1 if a shipped file is stale

Readings of the tables that are ours, each stated in the profile's ``notes``:

* Table III prints R_N in "bytes/sec" but its values (3.0e-11 …) are seconds per byte: the
  profile stores R_N = 1 / value bytes per second (33 GB/s for Summit's CPUs).
* Summit's GPU rows have no protocol delineation (the caption says so): the one α/β pair is
  stored for all three protocols.  Lassen has no short CPU/GPU row: its short parameters are
  the eager ones and ``short_max`` is 0 B.
* Lassen's inter-GPU R_N is absent ("not reached with the four available GPUs per node"); the
  profile stores the smallest rate consistent with that sentence, 4 / β (four GPUs each at its
  fastest per-process rate), so min(R_N, ppn·R_b) = ppn·R_b for ppn ≤ 4 as the paper says.
* Summit's CPU eager off-node β is printed as 2.93e-10 s/B; a fit of the authors' raw data
  gives 3.93e-10.  The printed value is used.

What it does not do: measure anything (``tlop measure`` writes the same parameters for the
machine it runs on, see :mod:`tlop.runtime.measure.postal_paths`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from tlop.runtime.profile import Profile, _bundled_dir, profile_from_dict, save_profile

__all__ = ["TABLES", "THRESHOLDS", "PATHS", "build", "regenerate", "stale", "main"]

#: the path channels of stdlib/postal/platform.tlop, with their descriptions
PATHS = {
    "cpu_on_socket": "CPU to CPU, both cores on one socket (003 Table I, on-socket)",
    "cpu_on_node": "CPU to CPU across the sockets of one node (003 Table I, on-node)",
    "cpu_off_node": "CPU to CPU on two nodes (003 Table I, off-node)",
    "gpu_on_socket": "GPU to GPU over a direct link (003 Table I, on-socket)",
    "gpu_on_node": "GPU to GPU on one node without a direct link (003 Table I, on-node)",
    "gpu_off_node": "GPU to GPU on two nodes with GPUDirect (003 Table I, off-node)",
    "h2d_on_socket": "cudaMemcpyAsync host to device, same socket (003 Table II)",
    "h2d_off_socket": "cudaMemcpyAsync host to device, across sockets (003 Table II)",
    "d2h_on_socket": "cudaMemcpyAsync device to host, same socket (003 Table II)",
    "d2h_off_socket": "cudaMemcpyAsync device to host, across sockets (003 Table II)",
}
_WHERE = ("on_socket", "on_node", "off_node")

#: 003 Table I: machine -> device -> protocol -> (α per path, β per path), paths in _WHERE order;
#: Table II: machine -> memcpy path -> (α, β); Table III: machine -> device -> printed value
TABLES = {
    "summit": {
        "I": {
            "cpu": {"short": ((3.51e-07, 9.08e-07, 1.38e-06), (2.62e-10, 1.46e-09, 3.82e-10)),
                    "eager": ((4.73e-07, 1.17e-06, 1.85e-06), (6.95e-11, 2.16e-10, 2.93e-10)),
                    "rend": ((2.46e-06, 5.81e-06, 6.56e-06), (3.31e-11, 1.46e-10, 8.51e-11))},
            "gpu": {"any": ((1.68e-05, 1.80e-05, 4.96e-06), (1.86e-11, 2.09e-11, 1.69e-10))},
        },
        "II": {"h2d_on_socket": (1.09e-05, 2.38e-11), "d2h_on_socket": (1.09e-05, 2.36e-11),
               "h2d_off_socket": (1.26e-05, 2.71e-11), "d2h_off_socket": (1.25e-05, 2.72e-11)},
        "III": {"cpu": 3.0e-11, "gpu": 5.1e-11},
    },
    "lassen": {
        "I": {
            "cpu": {"eager": ((3.99e-07, 7.07e-07, 1.53e-06), (5.59e-11, 2.23e-10, 4.38e-10)),
                    "rend": ((3.62e-06, 1.07e-05, 6.90e-06), (3.71e-11, 1.42e-10, 4.63e-11))},
            "gpu": {"eager": ((7.09e-07, 1.04e-06, 2.11e-06), (5.79e-11, 2.15e-10, 4.91e-10)),
                    "rend": ((6.39e-06, 2.61e-05, 6.87e-06), (3.38e-11, 4.59e-13, 4.73e-11))},
        },
        "II": {"h2d_on_socket": (1.33e-05, 1.80e-11), "d2h_on_socket": (1.35e-05, 1.75e-11),
               "h2d_off_socket": (1.42e-05, 2.84e-11), "d2h_off_socket": (1.40e-05, 2.83e-11)},
        "III": {"cpu": 2.5e-11},
    },
}

#: the protocol thresholds assumed (003 gives none): machine -> (short_max, eager_max) in bytes
THRESHOLDS = {"summit": (512, 8192), "lassen": (0, 8192)}

_COMMON_NOTES = (
    "Protocol thresholds are NOT given by 003; this profile assumes them: a message of s bytes uses "
    "the short protocol when s <= short_max, eager when s <= eager_max, rendezvous beyond "
    "(stdlib/postal/platform.tlop, alpha and beta). The assumed values are round numbers of the "
    "order of MPI libraries' defaults, chosen before comparing with the paper and not tuned to its "
    "conclusions. Table III prints R_N in 'bytes/sec', but its values are seconds per byte; R_N is "
    "stored as 1/value bytes per second. Every number of Tables I-III is copied as printed.")

_META = {
    "summit": {
        "machine": ("Summit (ORNL): IBM AC922 nodes, 2 POWER9 sockets (40 usable cores) and 6 NVIDIA V100 "
                    "GPUs per node, dual-rail EDR InfiniBand; IBM Spectrum MPI"),
        "description": "postal and max-rate parameters per path, device and protocol (003 Tables I-III)",
        "mpi": {"library": "IBM Spectrum MPI", "version": "not given in 003"},
        "source": ("Bienz, Olson, Gropp, Lockhart: Modeling Data Movement Performance on Heterogeneous "
                   "Architectures (paper 003), Table I (Summit rows), Table II (Summit), Table III (Summit)"),
        "method": "ping-pong fits of T = alpha + beta*s per path and protocol, as described in 003 sec. III-IV",
        "notes": (_COMMON_NOTES + " Assumed thresholds: short_max = 512 B, eager_max = 8192 B on every CPU "
                  "path. Summit's GPU rows have no protocol delineation (Table I caption): the one alpha/beta "
                  "pair is stored as short, eager and rendezvous, so the GPU thresholds do not matter. Summit's "
                  "CPU eager off-node beta is printed as 2.93e-10 s/B; a fit of the authors' raw data gives "
                  "3.93e-10; the printed value is used."),
    },
    "lassen": {
        "machine": ("Lassen (LLNL): IBM AC922 nodes, 2 POWER9 sockets (40 usable cores) and 4 NVIDIA V100 "
                    "GPUs per node, dual-rail EDR InfiniBand; MVAPICH2-GDR"),
        "description": "postal and max-rate parameters per path, device and protocol (003 Tables I-III)",
        "mpi": {"library": "MVAPICH2-GDR", "version": "not given in 003"},
        "source": ("Bienz, Olson, Gropp, Lockhart: Modeling Data Movement Performance on Heterogeneous "
                   "Architectures (paper 003), Table I (Lassen rows), Table II (Lassen), Table III (Lassen)"),
        "method": "ping-pong fits of T = alpha + beta*s per path and protocol, as described in 003 sec. III-IV",
        "notes": (_COMMON_NOTES + " Assumed thresholds: eager_max = 8192 B on every path; Table I has no "
                  "short rows for Lassen, so short_max = 0 B and the short parameters repeat the eager ones. "
                  "Table III gives no inter-GPU R_N for Lassen (not reached with 4 GPUs per node); R_N on "
                  "gpu_off_node is stored as 4/beta_rend (four GPUs, each at its fastest rate), the smallest "
                  "value consistent with that statement. R_N on gpu_off_node is therefore a bound, not a "
                  "measurement."),
    },
}


def _scalars(machine: str) -> dict:
    t = TABLES[machine]
    short_max, eager_max = THRESHOLDS[machine]
    names = ("alpha_short", "beta_short", "alpha_eager", "beta_eager", "alpha_rend", "beta_rend",
             "short_max", "eager_max", "R_N", "memcpy_alpha", "memcpy_beta")
    sc: dict = {n: {} for n in names}
    for device, rows in t["I"].items():
        for i, where in enumerate(_WHERE):
            ch = f"{device}_{where}"
            for proto in ("short", "eager", "rend"):
                row = rows.get(proto) or rows.get("any") or rows["eager"]  # no short row: eager
                sc[f"alpha_{proto}"][ch] = row[0][i]
                sc[f"beta_{proto}"][ch] = row[1][i]
            sc["short_max"][ch] = short_max
            sc["eager_max"][ch] = eager_max
    for device, inv in t["III"].items():
        sc["R_N"][f"{device}_off_node"] = 1.0 / inv
    if "gpu" not in t["III"]:
        betas = [sc[f"beta_{p}"]["gpu_off_node"] for p in ("short", "eager", "rend")]
        sc["R_N"]["gpu_off_node"] = 4.0 / min(betas)
    for ch, (a, b) in t["II"].items():
        sc["memcpy_alpha"][ch] = a
        sc["memcpy_beta"][ch] = b
    return sc


def build(name: str) -> Profile:
    """The profile ``name`` (``summit`` or ``lassen``) built from :data:`TABLES`."""
    data = {
        "tlop_profile": 1,
        "name": name,
        "metadata": _META[name],
        "channels": {ch: {"path": True, "description": d} for ch, d in PATHS.items()},
        "scalars": _scalars(name),
    }
    return profile_from_dict(data, f"<bundled {name}>")


def regenerate(names: Optional[Sequence[str]] = None) -> list:
    """Rebuild and write ``NAME.json`` for each profile; returns the paths written."""
    return [save_profile(build(n), _bundled_dir() / f"{n}.json") for n in (names or TABLES)]


def stale(names: Optional[Sequence[str]] = None) -> list:
    """The profiles whose shipped JSON differs from :func:`build`."""
    out = []
    for n in names or TABLES:
        path = _bundled_dir() / f"{n}.json"
        if not path.is_file() or path.read_text(encoding="utf-8") != build(n).to_json():
            out.append(n)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tlop.runtime.bundled_postal",
                                     description="Regenerate the bundled postal profiles summit and lassen.")
    parser.add_argument("--check", action="store_true", help="only check the shipped JSON")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale()
        for n in bad:
            print(f"stale: stdlib/profiles/{n}.json (run python -m tlop.runtime.bundled_postal)", file=sys.stderr)
        return 1 if bad else 0
    for path in regenerate():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
