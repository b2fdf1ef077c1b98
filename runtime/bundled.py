"""The bundled τ-Lop profiles: where their numbers come from, and how to regenerate them.

What it does: holds the provenance (metadata and channel descriptions) of the three profiles
shipped in ``stdlib/profiles/`` — metropolis, lusitania and ciemat — and regenerates each
``NAME.json`` from the raw libtaulop files (``SHM.txt``, ``TCP.txt``, ``IB.txt``, ``gamma.txt``)
copied under ``stdlib/profiles/raw/NAME/`` with
:func:`tlop.runtime.convert_taulop.convert_taulop`.  A test asserts that the shipped JSON is
exactly what :func:`build` produces, so the JSON can never drift from the raw files.

Command line::

    python -m tlop.runtime.bundled            # rewrite stdlib/profiles/*.json
    python -m tlop.runtime.bundled --check    # exit 1 if any shipped JSON is stale

What it does not do: measure anything or alter the numbers; the metadata records only what
the sources say (paper 000 = Rico-Gallego, Lastovetsky, Díaz-Martín, IEEE TPDS 28(11) 2017;
paper 002 = Rico-Gallego, Díaz-Martín, Lastovetsky, FGCS 61, 2016), and says so where they
are silent.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from tlop.runtime.diagnostics import TlopError

from tlop.runtime.convert_taulop import convert_taulop
from tlop.runtime.profile import Profile, _bundled_dir, save_profile

__all__ = ["BUNDLED", "raw_dir", "build", "regenerate", "stale", "main"]

_LIBTAULOP = ("libtaulop, the tau-Lop C++ library of Rico-Gallego, Diaz-Martin et al. "
              "(University of Extremadura, https://github.com/hpc-unex/libtaulop), "
              "parameter files params/{name}/SHM.txt, TCP.txt, IB.txt and gamma.txt, copied unchanged to "
              "stdlib/profiles/raw/{name}/")
_METHOD = ("tau-Lop parameter measurement (000 sec. 5.2; 002 sec. 6 refers to the method's own "
           "paper): a Ring_tau operation in which process p_i sends m bytes to p_i+1 and receives "
           "from p_i-1 with tau processes communicating concurrently, giving the transfer time "
           "L(m, tau) of shared memory inside a node (L0) and of the network with processes "
           "placed round-robin on two nodes (L1), together with the overhead o(m). "
           "30 message sizes from 1 B to 4 MiB.")
_COMBINE = ("libtaulop costs one transmission as o + 2 L_shm on shared memory, o_ib + L_ib on "
            "InfiniBand and o_tcp + 2 L_shm + L_tcp on TCP (000 eq. 1-3). The tables are "
            "measured, hence noisy and not monotone in m or tau, and are copied as distributed.")

_SAME_GAMMA = (" The gamma.txt of lusitania and of ciemat are the same file, in which every "
               "operation column is equal; the sources do not say how or where it was measured.")

#: name -> (metadata, channel descriptions)
BUNDLED = {
    "metropolis": (
        {
            "machine": ("Metropolis: 4 nodes x 8 cores (two 2.4 GHz Intel Xeon E5620 per node, "
                        "hyperthreading disabled, shared 12 MB L3), 10 Gigabit Ethernet through "
                        "a switch, and InfiniBand; Linux 2.6.32"),
            "nodes": 4,
            "cores_per_node": 8,
            "description": ("tau-Lop tables of the Metropolis cluster (shared memory, TCP over "
                            "10 GbE, InfiniBand); 8 concurrency columns, tau = 1..8"),
            "source": (_LIBTAULOP.format(name="metropolis") + ". Machine: 002 sec. 6 (4 nodes x 8 "
                       "cores, 10 GbE); libtaulop also ships InfiniBand tables for it."),
            "method": _METHOD,
            "notes": (_COMBINE + " Protocol switches show as jumps: shared-memory L and "
                      "InfiniBand o at 4096 B, TCP o at 65536 B. 002 sec. 6 ran its own "
                      "measurements on this machine with IMB on MPICH 1.4.1p1; which MPI "
                      "measured these tables is not stated, and neither is the date."),
        },
        {"shm": "shared memory (intra-node)", "tcp": "10 Gigabit Ethernet (TCP)",
         "ib": "InfiniBand"},
    ),
    "lusitania": (
        {
            "machine": ("Lusitania: HP Superdome sx2000 ccNUMA, 64 dual-core Intel Itanium2 "
                        "Montvale 9140N (128 cores in 16 UMA nodes, private 9 MB L3); "
                        "Linux 2.6.16"),
            "nodes": 16,
            "cores_per_node": 8,
            "description": ("tau-Lop tables of the Lusitania 128-core ccNUMA SMP; 20 "
                            "concurrency columns, tau = 1..20"),
            "source": (_LIBTAULOP.format(name="lusitania") + ". Machine: 002 sec. 6, where it "
                       "is the SMP platform of the shared-memory case study."),
            "method": _METHOD,
            "notes": (_COMBINE + " libtaulop also ships TCP and IB tables for this machine "
                      "(columns named L1(m,tau), i.e. a network channel); the sources describe "
                      "Lusitania as an SMP and do not say how those were measured. o(m) is "
                      "piecewise constant and some entries are exactly 0 (TCP L(m,1) for "
                      "m <= 128). 002 sec. 6 used IMB on MPICH 1.4.1p1 on this machine; the MPI "
                      "and date of these tables are not stated." + _SAME_GAMMA),
        },
        {"shm": "shared memory (ccNUMA SMP)", "tcp": "TCP network", "ib": "InfiniBand"},
    ),
    "ciemat": (
        {
            "machine": ("ciemat: a multi-core cluster with shared-memory, TCP and InfiniBand "
                        "channels, named so in libtaulop; not described further in the sources"),
            "description": ("tau-Lop tables distributed with libtaulop under the name 'ciemat' "
                            "(shared memory, TCP, InfiniBand); 8 concurrency columns, tau = 1..8"),
            "source": _LIBTAULOP.format(name="ciemat") + ".",
            "method": _METHOD,
            "notes": (_COMBINE + " Neither tlop's reference notes nor paper 000 describe the "
                      "machine behind these tables. 000 sec. 5.1 describes the heterogeneous "
                      "cluster of its own evaluation (Fermi: 16 nodes, nine with two six-core "
                      "Xeon E5649 and seven with two quad-core Xeon E5520, QDR InfiniBand "
                      "40 Gbps and 1 Gbps Ethernet, CentOS 6.5, Open MPI 1.8.1), but nothing in "
                      "the sources ties these tables to it. Values are given to 1 ns, o(m) is "
                      "piecewise constant, and the first row (m = 1) of TCP L equals that of IB "
                      "L, as distributed." + _SAME_GAMMA),
        },
        {"shm": "shared memory (intra-node)", "tcp": "TCP network", "ib": "InfiniBand"},
    ),
}


def raw_dir(name: str) -> Path:
    """Where the raw libtaulop files of bundled profile ``name`` live."""
    return _bundled_dir() / "raw" / name


def build(name: str) -> Profile:
    """Convert the raw files of bundled profile ``name`` (not written anywhere)."""
    metadata, descriptions = BUNDLED[name]
    return convert_taulop(raw_dir(name), name, dict(metadata), dict(descriptions))


def regenerate(names: Optional[Sequence[str]] = None, out_dir: Optional[Path] = None) -> list:
    """Rebuild and write ``NAME.json`` for each bundled profile; returns the paths written."""
    out_dir = Path(out_dir) if out_dir is not None else _bundled_dir()
    return [save_profile(build(n), out_dir / f"{n}.json") for n in (names or BUNDLED)]


def stale(names: Optional[Sequence[str]] = None) -> list:
    """The bundled profiles whose shipped JSON text differs from a fresh conversion."""
    out = []
    for n in names or BUNDLED:
        path = _bundled_dir() / f"{n}.json"
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != build(n).to_json():
            out.append(n)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tlop.runtime.bundled",
                                     description="Regenerate the bundled tau-Lop profiles.")
    parser.add_argument("--check", action="store_true",
                        help="only check that the shipped JSON matches the raw files")
    args = parser.parse_args(argv)
    try:
        if args.check:
            bad = stale()
            for n in bad:
                print(f"stale: stdlib/profiles/{n}.json (run python -m tlop.runtime.bundled)",
                      file=sys.stderr)
            return 1 if bad else 0
        for path in regenerate():
            print(f"wrote {path}")
    except TlopError as err:
        print(str(err), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
