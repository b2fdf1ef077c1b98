"""``tlop sweep --csv`` and ``tlop best --csv`` against the batch evaluation they wrap, in one run.

Each is a whole process, timed by the operating system's accounting of the finished child (CPU
= user + system) with its peak resident memory (``os.wait4``'s ``ru_maxrss``), in interleaved
rounds (batch, sweep, best; the minimum of each over the rounds):

* batch: load ``taulop/bcast``, compile ``binomial_bcast`` (the on-disk cache is warm), walk the
  same grid in the CLI's chunks and evaluate each with ``ev.batch`` — what the sweep wraps,
  without writing anything;
* sweep: ``tlop sweep taulop/bcast binomial_bcast P=… m=… c=shm --csv FILE``;
* best: ``tlop best taulop/bcast P=… m=… c=shm --csv FILE`` (two candidates a point: the
  batch run evaluates both too).

Printed: points, CPU seconds and peak MB of each, and sweep / batch, best / batch (goals: <= 2,
peak <= 300 MB).  The seconds are written as ``repr`` writes them (the shortest text that reads
back as the same double) through :mod:`tlop.cli.csvfast`.

Run: ``python bench/bench_sweep_speed.py [--points 1e6] [--rounds 2]`` (10^7 takes minutes).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_BATCH = r"""
import sys, tlop
from tlop.cli.grid import Axis, Grid
n1, n2, both = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "best"
mod = tlop.load("taulop/bcast")
prof = tlop.load_profile("metropolis")
evs = [mod[a].compile(prof) for a in (("binomial_bcast", "linear_bcast") if both else ("binomial_bcast",))]
g = Grid({"P": Axis(lo=2, inc=1, n=n1), "m": Axis(lo=1, inc=1024, n=n2)}, 10 ** 10)
total = 0.0
for _, cols in g.chunks():
    for ev in evs:
        total += float(ev.batch(P=cols["P"], m=cols["m"], c=0.0).sum())
print(total)
"""


def tlop_command() -> list:
    exe = Path(sys.executable).with_name("tlop")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from tlop.cli import main; sys.exit(main())"]


def run(argv: list) -> tuple:
    """(CPU seconds, peak MB) of one finished process."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed: {proc.stderr.read().decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", type=float, default=1e6)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    n2 = 1000
    n1 = max(1, int(a.points) // n2)
    grid = [f"P=2..{n1 + 1}", f"m=1..{1 + 1024 * (n2 - 1)}:+1024", "c=shm"]
    tl = tlop_command()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "out.csv")
        cmds = {
            "batch (sweep's)": [sys.executable, "-c", _BATCH, str(n1), str(n2), "sweep"],
            "sweep --csv": tl + ["sweep", "taulop/bcast", "binomial_bcast"] + grid + ["--csv", out],
            "batch (best's)": [sys.executable, "-c", _BATCH, str(n1), str(n2), "best"],
            "best --csv": tl + ["best", "taulop/bcast"] + grid + ["--csv", out],
        }
        run(cmds["batch (sweep's)"])  # warm the caches (checked IR, object code)
        best = {k: (float("inf"), 0.0) for k in cmds}
        for _ in range(a.rounds):
            for k, argv in cmds.items():
                cpu, mb = run(argv)
                best[k] = (min(best[k][0], cpu), max(best[k][1], mb))
    print(f"{n1 * n2:,} points")
    for k, (cpu, mb) in best.items():
        print(f"  {k:18} {cpu:8.2f} s CPU  {mb:7.0f} MB peak")
    print(f"sweep / batch: {best['sweep --csv'][0] / best['batch (sweep' + chr(39) + 's)'][0]:.2f} (goal <= 2)")
    print(f"best / batch:  {best['best --csv'][0] / best['batch (best' + chr(39) + 's)'][0]:.2f} (goal <= 2)")


if __name__ == "__main__":
    main()
