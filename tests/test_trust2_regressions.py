"""Regressions of issue 22 (trust), items 11, 15, 8 and 12: one test per reproducer.

* 11: ``show --mapping`` of a LogGP-family (dataflow) schedule printed τ-Lop's closed form.
"""

from tlop.cli.main import main


def test_show_mapping_of_a_dataflow_schedule_has_no_taulop_closed_form(capsys):
    assert main(["show", "loggph/allgather", "ring", "--mapping", "sequential(4)"]) == 0
    out = capsys.readouterr().out
    assert "T^shm" not in out and "T^net" not in out and "closed form of the schedule" not in out
    assert "stage{" in out                                          # the schedule itself
    assert "no closed form for sequential(4): a loggph schedule is a dataflow program" in out
    # the τ-Lop text of the same algorithm still gets its closed form
    assert main(["show", "taulop/allgather", "ring", "--mapping", "sequential(4)"]) == 0
    assert "closed form of the schedule" in capsys.readouterr().out
