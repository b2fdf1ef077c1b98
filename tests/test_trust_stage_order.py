"""``tlop show`` keeps a schedule's stage order (issue 22 item 3): stages run one after another,
so a simplification that reorders them (``a + b = b + a`` has the same τ-Lop cost) would print
another algorithm."""

from __future__ import annotations

import pytest

from tlop import ir
from tlop.api import load
from tlop.analysis.simplify import DEFAULT_FAMILIES, PassManager, _stage_order, context_for
from tlop.cli.main import main

TWO_LEVEL = """import "taulop/platform.tlop"
algorithm twolevel(P: int >= 2, m: bytes) over map: mapping =
    stage {
        par r in 1 .. P - 1: send r -> 0 : m
    } +
    stage {
        par r in 0 .. P - 1: send r -> (r + 1) % P : m
    }
"""


def test_show_prints_stages_in_the_written_order(tmp_path, capsys):
    f = tmp_path / "two.tlop"
    f.write_text(TWO_LEVEL, encoding="utf-8")
    assert main(["show", str(f)]) == 0
    out = capsys.readouterr().out
    first, second = out.index("r → 0"), out.index("r → (r+1) mod P")
    assert first < second, out


@pytest.mark.parametrize("module", ["taulop/allreduce", "taulop/allgather", "taulop/reduce", "taulop/bcast",
                                    "taulop/alltoall"])
def test_simplified_stdlib_schedules_keep_their_stage_order(module):
    program = load(module).program
    checked = 0
    for alg in program.algorithms.values():
        if not ir.has_schedule(alg.body):
            continue
        ctx = context_for(program, alg, families=DEFAULT_FAMILIES)
        res = PassManager(ctx).run(alg.body)
        # the stages the result still writes, in the order the original writes them
        before = _stage_order(alg.body)
        after = _stage_order(res.expr)
        kept = [s for s in before if s in set(after)]
        assert after == kept, alg.name
        checked += 1
    assert checked > 0
