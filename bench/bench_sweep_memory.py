"""Peak memory of ``tlop sweep`` and ``tlop best`` as the grid grows (issue 14, item 9).

Each command writes its grid as CSV to a temporary file and runs as a whole process; its peak
resident memory is the operating system's own accounting of that finished child
(``os.wait4``'s ``ru_maxrss``).  Printed for each grid size: the points, the peak in MB, the
ratio of the peak to that of the smallest grid (the baseline, measured in the same run:
about 1.0 at every size when the grid is evaluated and written in chunks), and the wall time.
Before chunking, 10^7 points took 3.8 GB (sweep) and 8.5 GB (best).

Run: ``python bench/bench_sweep_memory.py [--max 1e7] [--command sweep|best|both]``
(about 1 minute with the default largest grid of 10^6 points; 10^7 takes a few minutes).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {
    "sweep": ["sweep", "taulop/bcast", "binomial_bcast", "c=shm"],
    "best": ["best", "taulop/bcast", "c=shm"],
}


def tlop_command() -> list:
    exe = Path(sys.executable).with_name("tlop")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from tlop.cli import main; sys.exit(main())"]


def peak(argv: list) -> tuple[float, float]:
    """(peak resident MB, wall seconds) of one finished run of ``argv``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {proc.stderr.read().decode(errors='replace')}")
    return usage.ru_maxrss / 1024, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=float, default=1e6, help="largest grid (points; default 1e6)")
    ap.add_argument("--command", choices=("sweep", "best", "both"), default="both")
    args = ap.parse_args()
    sizes = [n for n in (1e3, 1e4, 1e5, 1e6, 1e7, 1e8) if n <= args.max]
    chosen = ["sweep", "best"] if args.command == "both" else [args.command]
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "grid.csv")
        for name in chosen:
            print(f"tlop {' '.join(COMMANDS[name])} P=2..(1+N/1000) m=1..1000 --csv FILE")
            print(f"{'points':>12}  {'peak MB':>8}  {'× smallest':>10}  {'wall s':>7}")
            base = None
            for n in sizes:
                rows = int(n) // 1000
                argv = tlop_command() + COMMANDS[name] + [f"P=2..{rows + 1}", "m=1..1000", "--csv", out,
                                                          "--max-points", str(int(n))]
                mb, wall = peak(argv)
                base = base or mb
                print(f"{int(n):>12,}  {mb:>8.1f}  {mb / base:>10.2f}  {wall:>7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
