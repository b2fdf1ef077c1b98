"""SUMMA over the 16 layouts of paper 000 Table 1 with each contention key: the M1–M16 curve.

    python bench/summa_contention.py [--profile NAME ...] [--N 128] [--only M1..M16]

Prints, per layout M1 … M16 (``tlop.runtime.fermi``'s placements, the partition for N blocks of
b = 8 KiB), the τ-Lop cost of ``kernels/summa summa_banded`` with the kernels' contention keys,
``node`` for shared memory and ``dst_node`` for the network (the stdlib's ``kernels/platform.tlop``:
one group per node, per destination node — 000 §3's concurrency and libtaulop's), and with ``all``
(``kernels/platform_shared.tlop``: every concurrent transfer on a channel is one group, whatever
its nodes — 000 eq. 8–9 read literally on its 2-node example), each relative to M2, the layout with
the fewest nodes beyond one, and the largest over the smallest cost from M6 on.  The ``all``
variant is the same SUMMA text next to the other platform module (:func:`kernel_module`); nothing
else differs.  Paper 000 §5 reports the measured communication time of SUMMA "almost constant
along the configurations" and τ-Lop capturing that: the ratio columns show which key does.
``--markdown FILE`` also writes the tables as Markdown (bench/summa_contention.md is one run).

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
#: the contention keys compared: the kernels' own platform (kernels/platform.tlop: ``node`` on
#: shared memory, ``dst_node`` on the network) and the literal reading of 000's worked example
#: (kernels/platform_shared.tlop: ``all`` on both channels)
KEYS = {"node/dst_node": "platform.tlop", "all": "platform_shared.tlop"}
DEFAULT = "node/dst_node"


def kernel_module(kernel: str, key: str, tmp: Path):
    """``kernels/<kernel>`` (``summa``, ``wave2d``) with the channels' contention key ``key`` (a key
    of :data:`KEYS`): the stdlib module itself for the default, else the same text next to a copy
    of the platform module of that key named ``platform.tlop`` (what the kernel imports)."""
    if key == DEFAULT:
        return tlop.load(f"kernels/{kernel}")
    d = tmp / key.replace("/", "_")
    d.mkdir(parents=True, exist_ok=True)
    src = STDLIB / "kernels"
    shutil.copy(src / f"{kernel}.tlop", d / f"{kernel}.tlop")
    shutil.copy(src / KEYS[key], d / "platform.tlop")
    return tlop.load(d / f"{kernel}.tlop")


def summa_module(key: str, tmp: Path):
    """``kernels/summa`` with the channels' contention key ``key``."""
    return kernel_module("summa", key, tmp)


def curve(profile: str, N: int, names, tmp: Path, keys=tuple(KEYS)) -> list:
    """``[(name, P, {key: cost})]`` for the layouts ``names`` and the contention keys ``keys``."""
    mods = {k: summa_module(k, tmp) for k in keys}
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
    ap.add_argument("--markdown", type=Path, help="also write the tables to this Markdown file")
    a = ap.parse_args(argv)
    names = config_names(a.only) if a.only else [f"M{i}" for i in range(1, 17)]
    md = ["# SUMMA over M1–M16 per contention key (`python bench/summa_contention.py --markdown …`)",
          "", "`kernels/summa summa_banded`, N = {}, b = 8 KiB; cost, and cost / M2's.  `node/dst_node` is the"
          " kernels' platform (`kernels/platform.tlop`), `all` the literal reading of 000's 2-node example"
          " (`kernels/platform_shared.tlop`).  The costs are on the bundled profiles, not on the Fermi"
          " platform of 000 §5 (its τ-Lop tables are not published).".format(a.N), ""]
    with tempfile.TemporaryDirectory() as tmp:
        for profile in a.profile or ("metropolis", "lusitania", "ciemat"):
            rows = curve(profile, a.N, names, Path(tmp))
            ref = next((c for n, _, c in rows if n == "M2"), rows[0][2])
            print(f"SUMMA (summa_banded), N = {a.N}, b = 8 KiB, on {profile}: cost and cost / M2's")
            print(f"{'config':>6} {'P':>3} " + " ".join(f"{k:>24}" for k in KEYS))
            md += [f"## {profile}", "", "| config | P | " + " | ".join(f"{k} (ms) | {k} / M2" for k in KEYS) + " |",
                   "|---|--:|" + "--:|--:|" * len(KEYS)]
            for name, P, costs in rows:
                cells = " ".join(f"{costs[k] * 1e3:>11.3f} ms {costs[k] / ref[k]:>8.2f}x" for k in KEYS)
                print(f"{name:>6} {P:>3} {cells}")
                md.append(f"| {name} | {P} | " + " | ".join(f"{costs[k] * 1e3:.3f} | {costs[k] / ref[k]:.2f}" for k in KEYS)
                          + " |")
            multi = [c for n, _, c in rows if n != "M1"]          # M1 is one node: no network
            span = {k: max(c[k] for c in multi) / min(c[k] for c in multi) for k in KEYS}
            late = [c for n, _, c in rows if int(n[1:]) >= 6]
            flat = {k: max(c[k] for c in late) / min(c[k] for c in late) for k in KEYS} if late else {}
            line = "max / min over M2 … M16: " + ", ".join(f"{k} {v:.2f}x" for k, v in span.items())
            if flat:
                line += "; over M6 … M16: " + ", ".join(f"{k} {v:.2f}x" for k, v in flat.items())
            print(line)
            print()
            md += ["", line, ""]
    if a.markdown:
        a.markdown.write_text("\n".join(md) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
