"""The sixteen layouts of paper 000 Table 1 (M1–M16 on the Fermi cluster), with generated partitions.

What it does: :data:`TABLE1` holds the table as published (12-core + 8-core nodes, how many CPU
processes have 6, 5, 4, 3 and 2 cores, how many run on a GPU); :func:`layout` places them on
nodes — a GPU process takes one core of its node for MPI and at most two run per node (each node
has two GPUs), processes of a node fill its cores — with a small exact search (the larger layouts
fill all 164 cores), and numbers the ranks node by node; :func:`configuration` adds the SUMMA and
Wave2D partitions for N = 128 and 256 blocks (b = 32 doubles) from :mod:`tlop.runtime.partition`.

``python -m tlop.runtime.fermi`` rewrites ``stdlib/configs/M1.json … M16.json``; ``--check``
exits 1 when a shipped file differs from what this module generates (a test runs it).

Assumptions (the paper publishes neither the placement nor its speed functions): relative speeds
are constants — a CPU process ``cores × 1.0`` on a 12-core node (Xeon E5649, 2.53 GHz) and
``cores × 0.9`` on an 8-core node (Xeon E5520, 2.27 GHz: the clock ratio); a GPU process 12 (SUMMA:
dgemm on a Tesla M2075/C2050 against one core's MKL dgemm) and 4 (Wave2D: a memory-bound stencil,
plus the host-device copies the paper includes in a GPU's speed).  Fermi's τ-Lop tables are not
published either: the configurations are priced on the bundled profiles.

What it does not do: reproduce the paper's exact rectangles (Fig. 10 is a picture of FuPerMod's
partition for measured speed functions) or its measurements.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import sys
from pathlib import Path

from tlop.runtime.configs import (Configuration, ConfigError, _configs_dir, layout_json, partition_json,
                                  read_config_file)
from tlop.runtime.partition import column_partition, speeds_of

__all__ = ["TABLE1", "layout", "configuration", "generate", "main"]

#: name -> (12-core nodes, 8-core nodes, processes with 6, 5, 4, 3, 2 cores, GPU processes, P)
TABLE1 = {
    "M1": (1, 0, 2, 0, 0, 0, 0, 0, 2), "M2": (2, 0, 3, 1, 0, 0, 0, 1, 5),
    "M3": (2, 1, 3, 1, 2, 0, 0, 1, 7), "M4": (3, 1, 4, 1, 3, 0, 0, 3, 11),
    "M5": (3, 2, 4, 1, 4, 1, 0, 4, 14), "M6": (3, 3, 4, 1, 5, 1, 1, 6, 18),
    "M7": (4, 3, 6, 1, 5, 1, 1, 6, 20), "M8": (8, 0, 11, 3, 2, 0, 0, 7, 23),
    "M9": (9, 0, 12, 3, 3, 0, 0, 9, 27), "M10": (9, 1, 12, 3, 5, 0, 0, 9, 29),
    "M11": (9, 2, 12, 3, 6, 1, 0, 10, 32), "M12": (9, 3, 12, 3, 7, 1, 1, 12, 36),
    "M13": (9, 4, 12, 3, 9, 1, 1, 12, 38), "M14": (9, 5, 12, 3, 10, 2, 1, 13, 41),
    "M15": (9, 6, 12, 3, 11, 2, 2, 15, 45), "M16": (9, 7, 12, 3, 13, 2, 2, 15, 47),
}
CORE_SPEED = {"fermi12": 1.0, "fermi8": 0.9}
GPU_SPEED = {"summa": 12.0, "wave2d": 4.0}
SIZES = (128, 256)
GPUS_PER_NODE = 2


def layout(name: str) -> Configuration:
    """The layout of Table 1's row ``name``: processes placed on the nodes (exact search)."""
    big, small, c6, c5, c4, c3, c2, gpus, P = TABLE1[name]
    caps = [12] * big + [8] * small
    sizes = (6, 5, 4, 3, 2)
    combos = {}  # cap -> every (n6, n5, n4, n3, n2, gpus) that fits a node of that many cores
    for cap in set(caps):
        out = []
        for n in itertools.product(*(range(cap // k + 1) for k in sizes), range(GPUS_PER_NODE + 1)):
            used = sum(a * k for a, k in zip(n, sizes)) + n[-1]
            if 0 < used <= cap:
                out.append(n)
        combos[cap] = sorted(out, key=lambda n: -sum(a * k for a, k in zip(n, sizes)) - n[-1])

    @functools.lru_cache(maxsize=None)
    def fill(i, left):
        """Per-node combinations for nodes i… taking exactly the counts ``left``, or None."""
        if i == len(caps):
            return () if not any(left) else None
        for n in combos[caps[i]]:
            if all(a <= b for a, b in zip(n, left)):
                rest = fill(i + 1, tuple(b - a for a, b in zip(n, left)))
                if rest is not None:
                    return (n,) + rest
        return None

    plan = fill(0, (c6, c5, c4, c3, c2, gpus))
    if plan is None:
        raise ConfigError(f"{name}: the processes of Table 1 do not fit its nodes")
    items, where = [], []
    for node, n in enumerate(plan):
        for a, k in zip(n, sizes + (0,)):
            items += [k] * a
            where += [node] * a
    assert len(items) == P
    ranks = sorted(range(len(items)), key=lambda i: (where[i], items[i] == 0, -items[i]))
    used = sorted({where[i] for i in ranks})
    node_names = {n: f"n{k}" for k, n in enumerate(used)}
    data = {
        "tlop_layout": 1, "name": name,
        "description": (f"paper 000 Table 1, {name}: {big} 12-core + {small} 8-core nodes, processes with 6/5/4/3/2 "
                        f"cores: {c6}/{c5}/{c4}/{c3}/{c2}, {gpus} on GPUs, P = {P}; placement generated "
                        f"(tlop.runtime.fermi), not published"),
        "node_types": {"fermi12": {"cores": 12, "gpus": 2, "description": "2 x six-core Xeon E5649 2.53 GHz, "
                                   "2 x Tesla M2075"},
                       "fermi8": {"cores": 8, "gpus": 2, "description": "2 x quad-core Xeon E5520 2.27 GHz, "
                                  "2 x Tesla C2050"}},
        "nodes": {node_names[n]: {"type": "fermi12" if caps[n] == 12 else "fermi8"} for n in used},
        "ranks": [{"node": node_names[where[i]], "kind": "gpu" if items[i] == 0 else "cpu",
                   "cores": items[i] or 1} for i in ranks],
    }
    return data


def configuration(name: str) -> dict:
    """Table 1's row ``name`` as a configuration file object: its layout, and the SUMMA and Wave2D
    partitions for N = 128 and 256."""
    from tlop.runtime.configs import _Doc, _layout

    lay = layout(name)
    text = json.dumps(lay)
    cfg = _layout(_Doc(text, f"<{name}>"), lay, f"<{name}>")
    parts = {}
    for kernel in ("summa", "wave2d"):
        speeds = speeds_of(cfg, CORE_SPEED, GPU_SPEED[kernel])
        for N in SIZES:
            part = column_partition(speeds, N, name=f"{kernel}-{N}", kernel=kernel)
            out = partition_json(part)
            out["description"] = (f"{kernel}, N = {N} blocks of 32 x 32 doubles: column-based partition for relative "
                                  f"speeds cores x {CORE_SPEED} per CPU process, {GPU_SPEED[kernel]} per GPU process "
                                  f"(assumed; the paper's speed functions are not published)")
            parts[f"{kernel}-{N}"] = out
    return {"tlop_config": 1, "name": name, "description": lay["description"], "layout": lay, "partitions": parts}


def generate() -> dict:
    """Name -> JSON text of every Table 1 configuration."""
    return {name: json.dumps(configuration(name), indent=1) + "\n" for name in TABLE1}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tlop.runtime.fermi", description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a shipped configuration is stale")
    args = ap.parse_args(argv)
    d = _configs_dir()
    stale = []
    for name, text in generate().items():
        path = d / f"{name}.json"
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
            read_config_file(path)  # validates what was written
    if stale:
        print(f"stale: {', '.join(stale)} (run python -m tlop.runtime.fermi)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
