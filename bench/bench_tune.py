"""``tlop tune`` for every collective over a large grid: how long the whole decision takes.

The grid of the issue (21, "Must show"): P = 2 … 1024 (×2), m = 1 B … 64 MiB (×4), every
collective of :data:`tlop.decisions.catalogue.COLLECTIVES`, both libraries, on a bundled τ-Lop
profile over a 4-node layout (``sequential(nodes=4)``: P/4 ranks per node), the libraries'
defaults priced too.  Printed: per (collective, library) the CPU and wall seconds and the number of
(algorithm, parameters, P) evaluations, then the totals, and — as the same-run baseline — the
seconds one measured MPI run of the same grid would take at least: the sum of the predicted
costs of the library's default over the grid (one repetition of each cell), a floor that
ignores launch, warm-up and repetitions.  The machine's load average (1 min) is printed with each
row and the CPU count in the header: on a shared machine wall time is CPU time plus waiting.

Run: ``python bench/bench_tune.py [--profile metropolis] [--pmax 1024] [--mmax 64MiB]``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="metropolis")
    ap.add_argument("--pmax", type=int, default=1024)
    ap.add_argument("--mmax", default="64MiB")
    ap.add_argument("--mapping", default="sequential(nodes=4)")
    ap.add_argument("--collective", action="append", help="only these collectives (default: all)")
    args = ap.parse_args()

    import tlop
    from tlop.backends.binding import as_mapping
    from tlop.cli.tune import tune
    from tlop.decisions.catalogue import COLLECTIVES
    from tlop.runtime.profile import default_model
    from tlop.runtime.units import split_quantity, unit_factor

    profile = tlop.load_profile(args.profile)
    model = default_model(profile)
    mapping = as_mapping(args.mapping)
    Ps = [2 ** k for k in range(1, int(math.log2(args.pmax)) + 1)]
    value, unit = split_quantity(args.mmax)
    mmax = float(value) * (unit_factor(unit) if unit else 1.0)
    ms = [float(4 ** k) for k in range(0, int(math.log(mmax, 4)) + 1)]
    print(f"tune: P = {Ps[0]} … {Ps[-1]} ({len(Ps)}), m = 1 B … {args.mmax} ({len(ms)}), profile {profile.name}, "
          f"model {model}, mapping {args.mapping}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'collective':<22}{'library':<9}{'cpu s':>8}{'wall s':>8}{'cells':>7}{'default, 1 rep':>16}{'load':>6}")
    total_cpu = total_wall = floor = 0.0
    for coll in args.collective or COLLECTIVES:
        for lib in ("openmpi", "mpich"):
            c0, w0 = time.process_time(), time.perf_counter()
            cells = tune([coll], [lib], profile, mapping, model, Ps, ms)[(lib, coll)]
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            run = sum(c.default.cost for c in cells if c.default is not None and math.isfinite(c.default.cost))
            total_cpu += cpu
            total_wall += wall
            floor += run
            print(f"{coll:<22}{lib:<9}{cpu:>8.2f}{wall:>8.2f}{len(cells):>7}{run:>15.3f}s"
                  f"{os.getloadavg()[0]:>6.1f}", flush=True)
    print(f"total: {total_cpu:.1f} s CPU, {total_wall:.1f} s wall; one measured repetition of every cell with "
          f"the defaults alone would take at least {floor:.1f} s of MPI time ({floor / total_wall:.2f}x the tune)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
