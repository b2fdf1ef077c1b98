"""Every stdlib algorithm compiles with translation validation on: the simplified cost is
proved equal to the original (no fallback)."""

import pytest

import tlop
from tlop.frontend.loader import stdlib_modules
from tlop.analysis.prove import simplify_validated

#: every stdlib module, the configuration kernels (kernels/summa, kernels/wave2d) included: their
#: simplification reorders sums inside nested reductions over a configuration, which the encoding
#: proves symbolically by reduction congruence (tlop.analysis.smt.Encoder._same_reduction) in
#: under a second; before, unrolling took about ten minutes (and summa_hloggp fell back)
MODULES = list(stdlib_modules())
#: the libraries' catalogues (stdlib/coll: ~130 schedules, many with nested tree arithmetic) take
#: minutes each to validate: they run under ``-m slow``
CASES = [pytest.param(n, marks=pytest.mark.slow) if n.startswith("coll/") else n for n in MODULES]


@pytest.mark.parametrize("name", CASES)
def test_stdlib_module_validates(name):
    program = tlop.load(name).program
    for alg in program.algorithms.values():
        # Z3's timeouts are wall-clock: a generous one keeps a loaded machine from turning a
        # proof that takes seconds into "unknown" (the proofs themselves take < 5 s CPU each)
        v = simplify_validated(program, alg, timeout_ms=300_000)
        assert v.outcome.ok and not v.fell_back, (alg.name, v.outcome.status, v.outcome.detail)


def test_stdlib_is_not_empty():
    assert any(tlop.load(n).program.algorithms for n in MODULES)
