"""SUMMA over the 16 layouts of paper 000 Table 1 with each contention key: the M1–M16 curve.

    python bench/summa_contention.py [--profile NAME ...] [--N 128] [--only M1..M16]

Prints, per layout M1 … M16 (``tlop.runtime.fermi``'s placements, the partition for N blocks of
b = 8 KiB), the τ-Lop cost of ``kernels/summa summa_banded`` with the channels' contention key
``all`` (the stdlib's ``kernels/platform.tlop``: every concurrent transfer on a channel is one
group, whatever its nodes — 000 eq. 8–9 read literally on its 2-node example) and with the keys of
the τ-Lop platform, ``node`` for shared memory and ``dst_node`` for the network (one group per
node, per destination node: 000 §3's definition of concurrency and libtaulop's), each relative to
M2, the layout with the fewest nodes beyond one.  The per-node variant is the same SUMMA text with
``kernels/platform.tlop``'s two ``contention all`` declarations replaced (:func:`summa_module`);
nothing else differs.  Paper 000 §5 reports the measured communication time of SUMMA "almost
constant along the configurations" and τ-Lop capturing that: the ratio column shows which key does.

Evaluation is native (``compile``; the interpreter takes minutes at P = 47).  What this does not
do: use the Fermi platform's τ-Lop tables (the paper does not publish them; the costs are on the
bundled profiles) or the paper's measured speeds (``tlop.runtime.fermi``'s assumed ones).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import tlop
from tlop.cli.config_sweep import config_names
from tlop.runtime.configs import load_config

STDLIB = Path(tlop.__file__).resolve().parent.parent / "stdlib"
KEYS = {"all": None, "node/dst_node": ("channel shm within node contention node",
                                       "channel net between nodes contention dst_node")}


def summa_module(key: str, tmp: Path):
    """``kernels/summa`` with the channels' contention key ``key`` (a key of :data:`KEYS`)."""
    if KEYS[key] is None:
        return tlop.load("kernels/summa")
    d = tmp / key.replace("/", "_")
    d.mkdir(parents=True, exist_ok=True)
    src = STDLIB / "kernels"
    shutil.copy(src / "summa.tlop", d / "summa.tlop")
    plat = (src / "platform.tlop").read_text()
    for old, new in zip(("channel shm within node contention all", "channel net between nodes contention all"),
                        KEYS[key]):
        if plat.count(old) != 1:
            raise SystemExit(f"{src / 'platform.tlop'}: expected one '{old}'")
        plat = plat.replace(old, new)
    (d / "platform.tlop").write_text(plat)
    return tlop.load(d / "summa.tlop")


def curve(profile: str, N: int, names, tmp: Path) -> list:
    """``[(name, P, {key: cost})]`` for the layouts ``names``."""
    mods = {k: summa_module(k, tmp) for k in KEYS}
    out = []
    for name in names:
        base = load_config(name)
        cfg = base.select_partition("summa", N)
        costs = {}
        for k, mod in mods.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ev = mod["summa_banded"].compile(profile, mapping=cfg)
                costs[k] = float(ev(P=base.P, b=8192.0))
        out.append((name, base.P, costs))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", action="append", help="bundled profile(s) (default: metropolis, lusitania, ciemat)")
    ap.add_argument("--N", type=int, default=128, help="matrix size in blocks (a partition of every layout)")
    ap.add_argument("--only", help="layouts, e.g. M1..M4,M16 (default all 16)")
    a = ap.parse_args(argv)
    names = config_names(a.only) if a.only else [f"M{i}" for i in range(1, 17)]
    with tempfile.TemporaryDirectory() as tmp:
        for profile in a.profile or ("metropolis", "lusitania", "ciemat"):
            rows = curve(profile, a.N, names, Path(tmp))
            ref = next((c for n, _, c in rows if n == "M2"), rows[0][2])
            print(f"SUMMA (summa_banded), N = {a.N}, b = 8 KiB, on {profile}: cost and cost / M2's")
            print(f"{'config':>6} {'P':>3} " + " ".join(f"{k:>24}" for k in KEYS))
            for name, P, costs in rows:
                cells = " ".join(f"{costs[k] * 1e3:>11.3f} ms {costs[k] / ref[k]:>8.2f}x" for k in KEYS)
                print(f"{name:>6} {P:>3} {cells}")
            multi = [c for n, _, c in rows if n != "M1"]          # M1 is one node: no network
            span = {k: max(c[k] for c in multi) / min(c[k] for c in multi) for k in KEYS}
            print("max / min over M2 … M16: " + ", ".join(f"{k} {v:.2f}x" for k, v in span.items()))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
