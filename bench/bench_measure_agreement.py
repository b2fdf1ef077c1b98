"""Does ``tlop measure`` measure what an independent ping-pong measures?

Runs the runtime's postal benchmark on shared memory (2 ranks), then a plain mpi4py ping-pong
loop at the same sizes right after it, fits both over the same segments, and prints the ratios
runtime/independent of the first segment's α and the last segment's β.  Near 1.0 is agreement.

This is a benchmark, not a test: on a shared or loaded machine timings move, so nothing here
asserts; run it on a quiet machine (``python bench/bench_measure_agreement.py [--repeat N]``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tlop.runtime.measure.fit import linear_fit
from tlop.runtime.measure.launch import find_mpiexec
from tlop.runtime.profile import load_profile

_PINGPONG = r"""
from mpi4py import MPI
import numpy as np, json, sys
c = MPI.COMM_WORLD; r = c.rank
out = {}
for m in map(int, sys.argv[1:]):
    reps = 1000 if m < 65536 else 100
    s = np.ones(m, np.uint8); b = np.zeros(m, np.uint8)
    t = []
    c.Barrier()
    for i in range(reps + 10):
        t0 = MPI.Wtime()
        if r == 0:
            c.Send(s, 1, 5); c.Recv(b, 1, 5)
        else:
            c.Recv(b, 0, 5); c.Send(s, 0, 5)
        t.append((MPI.Wtime() - t0) / 2)
    out[m] = float(np.median(t[10:]))
if r == 0:
    print(json.dumps(out))
"""

SIZES = [1, 16, 256, 4096, 16384, 65536, 262144, 1 << 20]


def one_round(tmp: Path) -> tuple:
    out = tmp / "ab.json"
    r = subprocess.run([sys.executable, "-m", "tlop.runtime.measure", "--np", "2", "--quiet",
                        "--bench", "postal", "--channels", "shm", "--sizes", ",".join(map(str, SIZES)),
                        "--eps", "0.03", "--time-cap", "0.5", "--out", str(out), "--overwrite"],
                       capture_output=True, text=True, timeout=600, env=dict(os.environ))
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    segs = load_profile(str(out)).fits["postal"]["shm"]["segments"]
    script = tmp / "pp.py"
    script.write_text(_PINGPONG)
    r = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, str(script), *map(str, SIZES)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    ind = {int(k): v for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()}

    def fit_range(seg):
        ms = [m for m in SIZES if seg["m_min"] <= m <= seg["m_max"]]
        return linear_fit(ms, [ind[m] for m in ms])

    first, last = segs[0], segs[-1]
    return first["alpha"], fit_range(first)[0], last["beta"], fit_range(last)[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'round':>5}  {'alpha runtime':>14} {'alpha pingpong':>15} {'ratio':>6}   "
          f"{'beta runtime':>13} {'beta pingpong':>14} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as d:
        for i in range(args.repeat):
            a, a2, b, b2 = one_round(Path(d))
            print(f"{i + 1:>5}  {a:>14.3e} {a2:>15.3e} {a / a2:>6.2f}   {b:>13.3e} {b2:>14.3e} {b / b2:>6.2f}")


if __name__ == "__main__":
    main()
