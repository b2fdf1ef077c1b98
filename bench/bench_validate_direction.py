"""Does ``tlop validate``'s timing favour one direction of a message? (issue 22 item 19)

What it does: on this machine, P = 2, it runs ``tlop validate taulop/bcast:linear root=0`` (one
send 0 → 1) and ``root=1`` (one send 1 → 0) with each timing method (``--timing barrier``: a
barrier before each run, max over ranks; ``--timing window``: ReproMPI's window start), for
``--rounds`` alternated rounds, and prints per method and size the medians of both directions
and their ratio (1 → 0 over 0 → 1; 1.00 is a method that favours neither), with the load average.

What it does not do: assert anything (timings depend on the machine and its load), or bind
differently from validate's default (ranks bound to cores of their own).

Usage: python bench/bench_validate_direction.py [--rounds 3] [--sizes 1KiB,64KiB] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def _median(out: Path, m: int) -> float:
    for line in open(out / "samples.jsonl", encoding="utf-8"):
        r = json.loads(line)
        if r.get("kind") == "point" and int(r["params"]["m"]) == m:
            return float(r["stats"]["median"])
    raise SystemExit(f"no point m={m} in {out}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="1KiB,64KiB")
    ap.add_argument("--time-cap", default="1")
    ap.add_argument("--keep", type=Path, help="keep every run's samples.jsonl under this folder (TIMING-ROOT-ROUND/)")
    a = ap.parse_args()
    from tlop.runtime.units import format_size, split_quantity, unit_factor

    def size(text: str) -> int:
        v, unit = split_quantity(text.strip())
        return int(v * (unit_factor(unit) if unit else 1))

    sizes = [size(s) for s in a.sizes.split(",")]
    got: dict = {}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(a.rounds):
            for timing in ("barrier", "window"):
                for root in (0, 1):
                    out = Path(tmp) / f"{timing}-{root}-{rnd}"
                    cmd = [sys.executable, "-m", "tlop.cli", "validate", "taulop/bcast:linear", "P=2",
                           f"m={a.sizes}", f"root={root}", "--profile", "metropolis", "--out", str(out),
                           "--timing", timing, "--time-cap", a.time_cap, "--quiet"]
                    subprocess.run(cmd, check=True, capture_output=True)
                    if a.keep:
                        (a.keep / out.name).mkdir(parents=True, exist_ok=True)
                        (a.keep / out.name / "samples.jsonl").write_bytes((out / "samples.jsonl").read_bytes())
                    loads.append(os.getloadavg()[0])
                    for m in sizes:
                        got.setdefault((timing, m, root), []).append(_median(out, m))
    print(f"P = 2, taulop/bcast:linear (one send), {a.rounds} round(s); load average "
          f"{min(loads):.1f}..{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(f"{'timing':8} {'m':>7} {'0→1 (µs)':>10} {'1→0 (µs)':>10} {'1→0 / 0→1':>10}   per round")
    for timing in ("barrier", "window"):
        for m in sizes:
            a0, a1 = got[(timing, m, 0)], got[(timing, m, 1)]
            per = " ".join(f"{y / x:.2f}" for x, y in zip(a0, a1))
            print(f"{timing:8} {format_size(m):>7} {statistics.median(a0) * 1e6:10.2f} "
                  f"{statistics.median(a1) * 1e6:10.2f} {statistics.median(a1) / statistics.median(a0):10.2f}   {per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
