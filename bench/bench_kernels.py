"""SUMMA and Wave2D over the 16 layouts of paper 000 Table 1, τ-Lop and HLogGP, and their speed.

Prints one row per configuration (M1 … M16) and matrix size (N = 128, 256 blocks of 32 × 32
doubles, b = 8 KiB; the Wave2D halo of a block edge e = 32 doubles = 256 B): the τ-Lop cost of
SUMMA (``kernels/summa summa_banded``, equal to ``summa``), its HLogGP cost (``summa_hloggp``), the
τ-Lop cost of one Wave2D iteration (``kernels/wave2d wave2d_step``) and its HLogGP cost
(``wave2d_hloggp``, T = 1), SUMMA priced by HLogGP with per-pair parameters (``kernels/hloggp
summa_hloggp_pairs`` on the assumed example profile ``examples/fermi-hloggp``), and the time one
evaluation of each SUMMA model took, with the ratio to
the issue's target (≤ 1 ms for SUMMA with N = 256, P = 47; a ratio ≤ 1 meets it).  A second part
measures, in the same run, the per-iteration ``summa`` (eq. 11 as written, one stage per k)
against ``summa_banded`` on one configuration, checking that they agree to 1e-12.

The Fermi platform of the paper has no published τ-Lop tables: the costs are on a bundled
profile (``--profile``, default metropolis), and the partitions come from assumed speeds
(``tlop.runtime.fermi``).

The configurations are named as ``tlop sweep --config`` names them (``--only M1..M4,M16``:
:func:`tlop.cli.config_sweep.config_names`); ``tlop sweep kernels/summa summa_banded N=128,256
b=8KiB --config M1..M16`` prints the same costs without the timings.

Run: ``python bench/bench_kernels.py [--profile NAME] [--only M1..M4,M16]`` (a few minutes).
"""

from __future__ import annotations

import argparse
import time

import tlop
from tlop.cli.config_sweep import config_names
from tlop.runtime.configs import load_config
from tlop.runtime.fermi import TABLE1


def timed(fn):
    t = time.perf_counter()
    v = fn()
    return v, time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="metropolis")
    ap.add_argument("--only", help="configurations, e.g. M1..M4,M16 (default: all 16)")
    args = ap.parse_args(argv)
    summa = tlop.load("kernels/summa")
    wave = tlop.load("kernels/wave2d")
    pairs = tlop.load("kernels/hloggp")["summa_hloggp_pairs"]
    pairs_profile = tlop.load_profile("examples/fermi-hloggp")
    b, e = 8192.0, 256.0
    names = config_names(args.only) if args.only else list(TABLE1)
    print(f"profile {args.profile}; SUMMA b = 8KiB, Wave2D e = 256B; times per evaluation, target 1 ms")
    print(f"{'config':>6} {'P':>3} {'N':>4} {'SUMMA τ-Lop':>12} {'SUMMA HLogGP':>13} {'W2D τ-Lop':>11} "
          f"{'W2D HLogGP':>11} {'SUMMA pairs':>12} {'t τ-Lop':>9} {'t HLogGP':>9} {'t pairs':>9} {'/target':>8}")
    for name in names:
        base = load_config(name)
        for N in (128, 256):
            cs = base.select_partition("summa", N)
            cw = base.select_partition("wave2d", N)
            P = base.P
            t_sum, dt = timed(lambda: summa["summa_banded"].evaluate(args.profile, P=P, b=b, mapping=cs))
            h_sum, dth = timed(lambda: summa["summa_hloggp"].evaluate(args.profile, P=P, b=b, mapping=cs))
            t_w = wave["wave2d_step"].evaluate(args.profile, P=P, e=e, mapping=cw)
            h_w = wave["wave2d_hloggp"].evaluate(args.profile, P=P, T=1, e=e, mapping=cw)
            p_sum, dtp = timed(lambda: pairs.evaluate(pairs_profile, P=P, b=b, mapping=cs))
            print(f"{name:>6} {P:>3} {N:>4} {t_sum * 1e3:>10.3f}ms {h_sum * 1e3:>11.3f}ms {t_w * 1e6:>9.2f}µs "
                  f"{h_w * 1e6:>9.2f}µs {p_sum * 1e3:>10.3f}ms {dt * 1e3:>7.0f}ms {dth * 1e3:>7.0f}ms "
                  f"{dtp * 1e3:>7.0f}ms {dt / 1e-3:>8.0f}", flush=True)
    name, N = ("M4", 128)
    cs = load_config(name).select_partition("summa", N)
    a, ta = timed(lambda: summa["summa"].evaluate(args.profile, P=cs.P, b=b, mapping=cs))
    c, tc = timed(lambda: summa["summa_banded"].evaluate(args.profile, P=cs.P, b=b, mapping=cs))
    assert abs(a - c) <= 1e-12 * abs(a), (a, c)
    print(f"\n{name} N={N}: summa (per iteration) {ta * 1e3:.0f} ms, summa_banded {tc * 1e3:.0f} ms: "
          f"{ta / tc:.1f}x; both {a * 1e3:.6f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
