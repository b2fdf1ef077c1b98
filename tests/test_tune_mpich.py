"""tlop tune's MPICH selection file in real MPICH (the ``mpich`` wheel), end to end: the file
``tlop tune`` writes for allreduce and bcast is loaded, the collectives run correctly under it,
and MPICH runs the algorithm the printed table names — observed through the messages MPICH's own
transport logs (:mod:`_decisions_mpi`), compared with the messages of the stdlib schedule the
catalogue ties to that algorithm (:func:`_traffic.schedule_pairs`) — while without the file MPICH
runs something else."""

from __future__ import annotations

import json

import pytest

from _decisions_mpi import mpich_pairs
from _traffic import schedule_pairs
from tlop.cli.main import main

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")

M = 65536


def test_tuned_file_makes_mpich_run_the_algorithms_of_the_table(tmp_path, capsys):
    sel, table = tmp_path / "sel.json", tmp_path / "table.json"
    assert main(["tune", "P=4", f"m={M}", "--collective", "allreduce,bcast", "--library", "mpich",
                 "--profile", "metropolis", "--mapping", "sequential(4)", "--only", "recursive_doubling",
                 "--only", "scatter_ring_allgather", "--no-defaults", "--mpich", str(sel),
                 "--json", str(table)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {sel} (mpich" in out
    doc = json.loads(table.read_text())
    chosen = {t["collective"]: t["cells"][0]["chosen"] for t in doc["tables"]}
    assert chosen["allreduce"]["id"] == "MPIR_Allreduce_intra_recursive_doubling"
    assert chosen["bcast"]["id"] == "MPIR_Bcast_intra_scatter_ring_allgather"
    tuned_ar, tuned_bc = mpich_pairs(tmp_path, [("allreduce", M), ("bcast", M)], sel, tag="tuned")
    default_ar, default_bc = mpich_pairs(tmp_path, [("allreduce", M), ("bcast", M)], None, tag="default")
    assert tuned_ar == schedule_pairs("coll/allreduce:recursive_doubling", 4, M)
    assert tuned_bc == schedule_pairs("coll/bcast:scatter_ring_allgather", 4, M)
    assert tuned_ar != default_ar and tuned_bc != default_bc  # the file changed what MPICH ran
