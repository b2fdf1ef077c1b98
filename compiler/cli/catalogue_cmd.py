"""``tlop catalogue``: the MPI libraries' (and NCCL's) algorithms tlop knows, with their stdlib schedules.

What it does: prints, per library and collective, every algorithm of Open MPI 5.0's coll/tuned,
MPICH 4.x's selection and NCCL (:mod:`tlop.decisions.catalogue`) — name, id, the stdlib schedule that
follows its source, the parameters ``tlop tune`` searches, and its status (a schedule, or why it
cannot be one) — or, with ``--counts``, how many of each library's algorithms are schedules;
``--json`` gives the same as JSON.

What it does not do: price them (``tlop tune``, ``tlop audit``).
"""

from __future__ import annotations

import json
import sys

__all__ = ["add_arguments", "run"]


def add_arguments(p) -> None:
    from tlop.decisions.catalogue import ALL_LIBRARIES, COLLECTIVES

    p.add_argument("--collective", choices=COLLECTIVES, help="one collective only")
    p.add_argument("--library", choices=ALL_LIBRARIES, help="one library only")
    p.add_argument("--counts", action="store_true", help="how many algorithms per library and collective are schedules")
    p.add_argument("--why", action="store_true", help="also say why an algorithm is not a schedule")
    p.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    from tlop.cli.table import print_table
    from tlop.decisions.catalogue_table import HEADER, counts, rows

    if args.counts:
        data = counts()
        if args.json:
            json.dump([dict(zip(["collective", "openmpi", "mpich", "nccl"], r)) for r in data], sys.stdout, indent=1)
            print()
        else:
            print("priced (schedules and composites) / algorithms in the catalogue (Open MPI 5.0 coll/tuned, MPICH "
                  "4.x, NCCL):")
            print_table(["collective", "openmpi", "mpich", "nccl"], data)
        return 0
    data = rows(args.collective, args.library)
    if args.json:
        json.dump([dict(zip(HEADER, r)) for r in data], sys.stdout, indent=1)
        print()
    elif args.why:
        print_table(HEADER, data)
    else:
        print_table(HEADER[:-1], [r[:-1] for r in data])
    return 0
