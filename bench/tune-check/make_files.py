"""Write the two MPICH selection files the committed tune-check summaries load.

What it does: takes MPICH's own default selection (the tree compiled into the mpich wheel's
libmpi, :func:`tlop.runtime.tuning_files.mpich_default_selection`: MPICH reads a file *instead
of* its default, so a file must hold every collective) and replaces one collective's
intra-communicator tree, following MPICH's JSON selection format (``src/mpi/coll/src/csel.c``):

* ``bcast.json``: binomial up to 8 KiB, scatter + recursive-doubling allgather up to 256 KiB,
  scatter + ring allgather above (MPICH's default at P < 8 is binomial at every size);
* ``allreduce.json``: recursive doubling at every size (MPICH's default at P = 2 is
  reduce_scatter_allgather from two float64 elements on).

These are hand-written: ``tlop tune``'s new writers (issue 21 items 3-4) were not on main when
the summaries were made.  What it does not do: choose algorithms from a model.

Usage: python bench/tune-check/make_files.py OUTDIR
"""

import json
import sys
from pathlib import Path

from tlop.runtime.tuning_files import mpich_default_selection


def main(out: str) -> None:
    base = mpich_default_selection()
    if base is None:
        raise SystemExit("MPICH's library (the mpich wheel) is not beside this Python")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "bcast": {"comm_size=any": {
            "avg_msg_size<=8191": {"algorithm=MPIR_Bcast_intra_binomial": {}},
            "avg_msg_size<=262143": {"algorithm=MPIR_Bcast_intra_scatter_recursive_doubling_allgather": {}},
            "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_scatter_ring_allgather": {}}}},
        "allreduce": {"comm_size=any": {
            "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}}}},
    }
    for coll, intra in files.items():
        whole = dict(base)
        whole[f"collective={coll}"] = {"comm_type=intra": intra,
                                       "comm_type=inter": base[f"collective={coll}"]["comm_type=inter"]}
        (out / f"{coll}.json").write_text(json.dumps(whole, indent=1) + "\n")
        print(f"wrote {out / f'{coll}.json'}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
