"""tlop measure's Open MPI forcing (plan.FORCED["openmpi"]: coll_tuned MCA variables) in real
Open MPI: each forced launch's environment makes Open MPI run the algorithm it is named for,
observed through Open MPI's own message counters (pml monitoring), not timing."""

from __future__ import annotations

import pytest

from _openmpi_helpers import binomial, observed_env, openmpi, recursive_doubling, ring  # noqa: F401
from tlop.runtime.measure.plan import forced_in_env, forced_launches

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")

PATTERNS = {("bcast", "binomial"): binomial, ("allgather", "recursive_doubling"): recursive_doubling,
            ("allgather", "ring"): ring}


def test_forced_launches_run_the_named_algorithms(openmpi, tmp_path):
    checked = 0
    for env in forced_launches("openmpi", 4):
        forced = forced_in_env(env)
        for coll in ("bcast", "allgather"):
            alg = forced.get(coll, {}).get("algorithm")
            if (coll, alg) in PATTERNS:
                assert observed_env(openmpi, tmp_path, coll, 8192, env) == PATTERNS[(coll, alg)](8192), (coll, alg)
                checked += 1
    assert checked == 3


def test_measure_has_the_openmpi_choice():
    from tlop.cli.main import build_parser

    args = build_parser("measure").parse_args(["measure", "--mpi", "openmpi"])
    assert args.mpi == "openmpi"
