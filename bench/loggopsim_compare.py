"""LogGOPSim against tlop's LogGP dataflow meaning: schedgen's patterns, simulated and evaluated.

    python bench/loggopsim_compare.py --schedgen PATH/schedgen --txt2bin PATH/txt2bin \\
        --loggopsim PATH/LogGOPSim --out tests/data/loggopsim/compare.csv

A data generator (the simulator is not built in CI; the CSV is what the tests read): for every
pattern of :data:`PATTERNS`, every P of :data:`PS` (2 … 256, powers of two and not), every
parameter set of :data:`PARAMS` (one with o > g, one with g > L + 2o, one with neither) and the
sizes of :data:`SIZES`, it writes the pattern with spcl/LogGOPSim's ``schedgen``, converts it with
``txt2bin``, simulates it with ``LogGOPSim`` (LogGP network, eager protocol for every size:
``-S`` above the largest message) and evaluates the same algorithm written as a tlop schedule
(:func:`tlop_cost`: a stdlib ``loggp/*`` algorithm, or :data:`EXTRA` for schedgen's dissemination,
which the stdlib has no module for) on a LogGP profile with the same L, o, g, G and γ = 0
(schedgen's patterns carry no computation).  The simulator's times are integers in its own unit;
the profile takes them as nanoseconds, and the CSV gives both results in that unit.

LogGOPSim was built from spcl/LogGOPSim 76451de with one change, ``std::sort`` →
``std::stable_sort`` of the newly ready operations (``src/LogGOPSim/LogGOPSim.cpp``, the two sorts
of ``free_ops``): with ``std::sort`` receives posted to one rank are reordered and a run with more
than 16 of them hangs.  Build: ``gengetopt`` the two ``.ggo`` files, ``re2c -o txt2bin.cpp
txt2bin.re``, ``g++ -O2 LogGOPSim.cpp loggopsim_cmdline.c -lcgraph``; schedgen: ``g++ -O2 *.cpp
schedgen_cmdline.c -lboost_iostreams``.

Columns: pattern, tlop (module algorithm), P, m, params (the set's name), L, o, g, G, loggopsim
(empty when the simulator failed), tlop_ns, rel ((tlop − loggopsim)/loggopsim).
What this does not do: decide whether a difference is a semantic choice — the tests
(``tests/test_loggopsim_compare.py``) and docs/semantics.rst do that.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

import tlop
from tlop.runtime.profile import profile_from_dict

#: schedgen pattern -> (tlop module, algorithm, extra keyword arguments, bytes per schedgen -d)
PATTERNS = {
    "binomialtreebcast": ("loggp/bcast", "binomial_openmpi"),
    "binomialtreereduce": ("loggp/reduce", "binomial_openmpi"),
    "dissemination": ("extra", "dissemination"),
    "allreduce_recdoub": ("loggp/allreduce", "rabenseifner"),
    "allreduce_ring": ("loggp/allreduce", "ring"),
    "linear_alltoall": ("loggp/alltoall", "linear"),
    "gather": ("loggp/gather", "linear"),
    "scatter": ("loggp/scatter", "linear"),
    "pipelinedring": ("loggp/bcast", "pipeline"),
}
PS = tuple(int(p) for p in __import__("os").environ.get("LGS_PS", "2 3 4 5 6 7 8 12 16 17 31 32 64 100 128 255 256").split())
#: name -> (L, o, g, G), integers (LogGOPSim takes integers), read as nanoseconds by tlop
PARAMS = {
    "o>g": (10, 5, 2, 1),
    "g>L+2o": (2, 1, 10, 1),
    "plain": (10, 2, 5, 1),
}
#: bytes per process block (schedgen -d; P·m for the allreduces, :func:`schedgen_size`)
SIZES = (1, 64)
#: pipelinedring: segments of this many bytes
SEGMENT = 8
#: schedgen's dissemination: in round k each rank sends to p + 2^k and, once the round's message
#: from p − 2^k has arrived, goes on to round k + 1
EXTRA = '''
import "loggp/platform.tlop"
algorithm dissemination(P: int >= 2, m: bytes) over map: mapping =
    stages k in 0 .. ceil(log2(P)) - 1 {
        par p in 0 .. P - 1:
            send p -> (p + (1 << k)) % P : m
    }
'''


def loggp_profile(L, o, g, G):
    """A LogGP profile with the simulator's integers as nanoseconds and γ = 0."""
    return profile_from_dict({
        "tlop_profile": 1, "name": f"loggopsim-L{L}-o{o}-g{g}-G{G}",
        "metadata": {"machine": "LogGOPSim parameters", "source": "bench/loggopsim_compare.py"},
        "interpolation": {"m_below": "linear", "m_beyond": "linear", "tau_beyond": "proportional",
                          "nonnegative": True, "out_of_grid": "allow"},
        "channels": {"net": {"transmission": "rdma", "description": "LogGOPSim's network"}},
        "bind": {}, "fits": {},
        "tables": {"gamma": {"*": {"m": [1.0, 1e9], "values": [0.0, 0.0]}}},
        "scalars": {"L": {"*": L * 1e-9}, "o": {"*": o * 1e-9}, "g": {"*": g * 1e-9}, "G": {"*": G * 1e-9}},
    })


@lru_cache(maxsize=None)
def _module(name):
    return tlop.loads(EXTRA) if name == "extra" else tlop.load(name)


def schedgen_size(pattern: str, P: int, m: int) -> int:
    """schedgen's -d for a block of m bytes: the ring allreduce cuts -d into P blocks and the
    recursive-doubling one halves it down to -d/P, so both get P·m (whole bytes at every step;
    schedgen divides integers, tlop does not)."""
    return P * m if pattern in ("allreduce_ring", "allreduce_recdoub") else m


def tlop_cost(pattern: str, P: int, m: int, params) -> float:
    """tlop's cost of the pattern's algorithm, in the simulator's unit (ns)."""
    module, name = PATTERNS[pattern]
    alg = _module(module)[name]
    kw = {"P": P, "m": float(schedgen_size(pattern, P, m))}
    if pattern == "pipelinedring":
        kw["seg"] = float(SEGMENT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = float(alg.evaluate(loggp_profile(*params), mapping=tlop.sequential(1), **kw))
    return t * 1e9


def simulate(tools, pattern: str, P: int, m: int, params, tmp: Path):
    """LogGOPSim's time (the largest host time) for schedgen's pattern, or None when schedgen or
    the simulator fails or runs for more than a minute (LogGOPSim crashes or spins on schedgen's
    allreduce_recdoub for P not a power of two)."""
    schedgen, txt2bin, loggopsim = tools
    if pattern == "allreduce_recdoub" and P & (P - 1):
        return None         # not run: LogGOPSim crashes (P = 3) or spins (P = 5) on these schedules
    goal, binf = tmp / "s.goal", tmp / "s.bin"
    args = [schedgen, "-p", pattern, "-s", str(P), "-d", str(schedgen_size(pattern, P, m)), "-o", str(goal)]
    if pattern == "pipelinedring":
        args += ["--segmentsize", str(SEGMENT)]
    L, o, g, G = params
    try:
        subprocess.run(args, check=True, capture_output=True)
        subprocess.run([txt2bin, "-i", str(goal), "-o", str(binf)], check=True, capture_output=True)
        out = subprocess.run([loggopsim, "-f", str(binf), "-L", str(L), "-o", str(o), "-g", str(g), "-G", str(G),
                              "-S", str(1 << 30)], check=True, capture_output=True, text=True, timeout=60).stdout
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return None
    # up to 16 ranks it prints every host's time, above that only the maximum
    times = [int(line.split(":")[1]) for line in out.splitlines() if line.startswith("Host ")]
    most = [int(line.split(":")[1].split()[0]) for line in out.splitlines()
            if line.startswith("Maximum finishing time at host")]
    if len(times) == P:
        return max(times)
    if len(most) == 1:
        return most[0]
    raise SystemExit(f"{pattern} P={P}: no finishing time in LogGOPSim's output:\n{out[-1000:]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--schedgen", required=True)
    ap.add_argument("--txt2bin", required=True)
    ap.add_argument("--loggopsim", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--pattern", action="append", help="only these patterns (repeatable)")
    a = ap.parse_args(argv)
    tools = (a.schedgen, a.txt2bin, a.loggopsim)
    cols = ["pattern", "tlop", "P", "m", "params", "L", "o", "g", "G", "loggopsim", "tlop_ns", "rel"]
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, open(a.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for pattern in a.pattern or PATTERNS:
            module, name = PATTERNS[pattern]
            for pname, params in PARAMS.items():
                for P in PS:
                    for m in SIZES:
                        sim = simulate(tools, pattern, P, m, params, Path(tmp))
                        ours = tlop_cost(pattern, P, m, params)
                        rel = f"{(ours - sim) / sim:.3e}" if sim else ""
                        w.writerow([pattern, f"{module} {name}", P, m, pname, *params,
                                    "" if sim is None else sim, repr(ours), rel])
                f.flush()
            print(f"{pattern}: done", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
